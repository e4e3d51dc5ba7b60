/// The upload rule, written once and run by both backends: what an upload may do to a slot.
///
/// A backend reads what the upload finds (``Found``) inside its transaction, under the
/// player's lock (one upload per player at a time, so the limits hold exactly) and the slot's
/// (of two uploads on the same base exactly one commits), asks ``decide(_:)``, and applies the
/// ``Decision`` in the same transaction. The rule decides; the storage only reads and writes.
/// SQLite reads and writes with a few statements; PostgreSQL with two functions
/// (``PostgresBackend/uploadFunctions``), one that locks and reads and one that writes what was
/// decided, so an upload costs it two round trips inside its transaction.
///
/// In order, the rule:
/// 1. refuses a stale precondition: the slot's head is not the one the upload names (`412`);
/// 2. refuses a loser that is not a revision of the slot (`409`);
/// 3. refuses a new slot past the player's slot limit, and any upload past the bytes limit (`413`);
/// 4. stores the revision as the slot's next number, as a delta on the piece the upload names
///    when ``PieceRules`` let it chain there, whole otherwise;
/// 5. marks the loser as lost to it, kept until discarded;
/// 6. prunes the slot to its newest `keep` revisions, never a loser, the newest first; a pruned
///    revision's children take its parent, so the chain among what remains stays exact;
/// 7. then the backend collects the pieces nothing needs (``ServerSchema/collectPieces(_:_:followsChains:)``).
package struct UploadRule: Sendable {
  /// The head the upload continues; nil for a new slot (`If-None-Match: *`).
  package var expected: Int64?
  /// The revision that lost the conflict this upload resolves, if it resolves one.
  package var loser: Int64?
  /// The whole file's size, in bytes.
  package var size: Int64
  /// The delta's size, when the upload came as a delta on a stored piece.
  package var deltaSize: Int?
  /// The revision the upload's state continues (``RevisionMetadata/parent``).
  package var parent: Int64?
  /// The player's limits.
  package var limits: PlayerLimits
  /// How many revisions the slot keeps, besides its losers (at least 1).
  package var keep: Int
  /// Files smaller than this are stored whole.
  package var smallestDelta: Int

  /// An upload's rule.
  package init(
    expected: Int64?, loser: Int64?, size: Int64, deltaSize: Int?, parent: Int64?, limits: PlayerLimits, keep: Int,
    smallestDelta: Int
  ) {
    (self.expected, self.loser, self.size, self.deltaSize) = (expected, loser, size, deltaSize)
    (self.parent, self.limits, self.keep, self.smallestDelta) = (parent, limits, keep, smallestDelta)
  }

  /// What the upload finds, read under the player's and the slot's locks.
  package struct Found: Sendable, Equatable {
    /// The slot's head; nil when the slot has none (new, or deleted).
    package var head: Int64?
    /// The number the next revision of the slot takes (1 for a new slot).
    package var next: Int64
    /// True when ``UploadRule/loser`` is a revision of the slot.
    package var loserExists: Bool
    /// The player's slots that have a head.
    package var slotsInUse: Int64
    /// The bytes of all the player's stored revisions.
    package var bytesInUse: Int64
    /// Where the piece the delta is on sits on its chain, when the upload came as a delta and
    /// that piece is still the slot's.
    package var deltaBaseChain: Chain?
    /// The slot's revisions, for pruning.
    package var revisions: [Listed]

    /// What an upload found.
    package init(
      head: Int64?, next: Int64, loserExists: Bool = false, slotsInUse: Int64 = 0, bytesInUse: Int64 = 0,
      deltaBaseChain: Chain? = nil, revisions: [Listed] = []
    ) {
      (self.head, self.next, self.loserExists, self.slotsInUse) = (head, next, loserExists, slotsInUse)
      (self.bytesInUse, self.deltaBaseChain, self.revisions) = (bytesInUse, deltaBaseChain, revisions)
    }
  }

  /// A piece's place on its chain.
  package struct Chain: Sendable, Equatable {
    /// Deltas between it and its whole copy (0: it is whole).
    package var depth: Int64
    /// Those deltas' bytes together.
    package var chain: Int64

    /// A place on a chain.
    package init(depth: Int64, chain: Int64) { (self.depth, self.chain) = (depth, chain) }
  }

  /// A revision of the slot, as pruning sees it.
  package struct Listed: Sendable, Equatable {
    package var revision: Int64
    package var parent: Int64?
    /// True when it lost a conflict: kept until discarded.
    package var lost: Bool

    /// A revision as pruning sees it.
    package init(revision: Int64, parent: Int64?, lost: Bool = false) {
      (self.revision, self.parent, self.lost) = (revision, parent, lost)
    }
  }

  /// What the rule decided.
  package enum Decision: Sendable, Equatable {
    /// The head is not the one named: its revision (nil: the slot has none).
    case stale(head: Int64?)
    /// The loser named is not a revision of the slot.
    case unknownLoser
    /// A new slot past the limit: the slots in use.
    case tooManySlots(inUse: Int64)
    /// Past the bytes limit: the bytes in use.
    case overLimit(inUse: Int64)
    /// Store it.
    case store(Store)
  }

  /// A refusal's answer, for both backends; nil for ``Decision/stale(head:)`` (the backend
  /// reads the head's metadata) and ``Decision/store(_:)``.
  package func refusal(_ decision: Decision) -> PutOutcome? {
    switch decision {
    case .unknownLoser: .unknownLoser(loser ?? 0)
    case .tooManySlots(let inUse): .tooManySlots("the player has \(inUse) slots; the limit is \(limits.slots)")
    case .overLimit(let inUse):
      .overLimit("the player's saves take \(inUse) bytes; this one would pass the limit of \(limits.totalBytes)")
    case .stale, .store: nil
    }
  }

  /// What storing an upload writes.
  package struct Store: Sendable, Equatable {
    /// The new revision's number.
    package var revision: Int64
    /// The head it went on top of (its `base_revision`): the one the precondition named.
    package var base: Int64?
    /// Its parent, after pruning (a pruned parent hands down its own).
    package var parent: Int64?
    /// The piece on which it is stored as a delta, and that piece's place; nil: stored whole.
    package var deltaOn: Chain?
    /// The revisions pruned, newest first.
    package var pruned: [Int64]
    /// The remaining revisions whose parent was pruned, and the parent each takes.
    package var relinked: [Relink]

    /// What is written.
    package init(
      revision: Int64, base: Int64?, parent: Int64?, deltaOn: Chain? = nil, pruned: [Int64] = [],
      relinked: [Relink] = []
    ) {
      (self.revision, self.base, self.parent, self.deltaOn) = (revision, base, parent, deltaOn)
      (self.pruned, self.relinked) = (pruned, relinked)
    }
  }

  /// A remaining revision whose parent changes.
  package struct Relink: Sendable, Equatable {
    package var revision: Int64
    package var parent: Int64?

    /// A parent handed down.
    package init(revision: Int64, parent: Int64?) { (self.revision, self.parent) = (revision, parent) }
  }

  /// The rule.
  package func decide(_ found: Found) -> Decision {
    if found.head != expected { return .stale(head: found.head) }
    if loser != nil, !found.loserExists { return .unknownLoser }
    if found.head == nil, found.slotsInUse >= Int64(limits.slots) { return .tooManySlots(inUse: found.slotsInUse) }
    if found.bytesInUse + size > limits.totalBytes { return .overLimit(inUse: found.bytesInUse) }
    var deltaOn: Chain?
    if let deltaSize, let base = found.deltaBaseChain,
      PieceRules.mayChain(
        depth: base.depth, chain: base.chain, delta: deltaSize, size: Int(size), smallest: smallestDelta)
    {
      deltaOn = base
    }
    let revision = found.next
    // A conflict's loser stays until it is discarded, whatever `keep` says: the one this upload
    // marks too.
    let oldest = revision - Int64(max(1, keep))
    let pruned = found.revisions
      .filter { $0.revision <= oldest && !$0.lost && $0.revision != loser }
      .map(\.revision).sorted(by: >)
    let gone = Set(pruned)
    var parents: [Int64: Int64?] = [:]
    for listed in found.revisions { parents[listed.revision] = listed.parent }
    /// The nearest ancestor that remains (a chain longer than the slot's revisions is no chain).
    func remaining(_ parent: Int64?) -> Int64? {
      var parent = parent
      for _ in 0...found.revisions.count {
        guard let current = parent, gone.contains(current) else { return parent }
        parent = parents[current] ?? nil
      }
      return parent
    }
    let relinked = found.revisions.compactMap { listed -> Relink? in
      guard !gone.contains(listed.revision), let parent = listed.parent, gone.contains(parent) else { return nil }
      return Relink(revision: listed.revision, parent: remaining(parent))
    }
    return .store(
      Store(
        revision: revision, base: expected, parent: remaining(parent), deltaOn: deltaOn, pruned: pruned,
        relinked: relinked.sorted { $0.revision > $1.revision }))
  }
}
