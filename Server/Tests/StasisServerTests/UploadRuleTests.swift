import StasisServer
import Testing

/// The upload rule itself, without a database: each of its refusals, where a piece goes, and
/// what pruning deletes and hands down. Both backends run this rule; the API tests
/// (`ServerAPITests`, on both) and the simulation (its bugs planted on both) check that each
/// stores what it decides.
@Suite("The upload rule: one definition, decided without a database")
struct UploadRuleTests {
  func rule(
    expected: Int64? = 3, loser: Int64? = nil, size: Int64 = 1000, deltaSize: Int? = nil, parent: Int64? = 3,
    limits: PlayerLimits = PlayerLimits(totalBytes: 10_000, slots: 2), keep: Int = 3, smallestDelta: Int = 0
  ) -> UploadRule {
    UploadRule(
      expected: expected, loser: loser, size: size, deltaSize: deltaSize, parent: parent, limits: limits, keep: keep,
      smallestDelta: smallestDelta)
  }

  /// A slot whose head is 3, with revisions 1…3, each the parent of the next.
  let three = UploadRule.Found(
    head: 3, next: 4, slotsInUse: 1, bytesInUse: 3000,
    revisions: [.init(revision: 1, parent: nil), .init(revision: 2, parent: 1), .init(revision: 3, parent: 2)])

  @Test("a precondition that does not name the head is stale, with the head; a new slot over one that has a head too")
  func stale() {
    #expect(rule(expected: 2).decide(three) == .stale(head: 3))
    #expect(rule(expected: nil).decide(three) == .stale(head: 3))
    #expect(rule(expected: 3).decide(UploadRule.Found(head: nil, next: 1)) == .stale(head: nil))
  }

  @Test("a loser that is not the slot's is refused before any limit")
  func unknownLoser() {
    var found = three
    found.bytesInUse = 1_000_000
    #expect(rule(loser: 9).decide(found) == .unknownLoser)
    found.loserExists = true
    #expect(rule(loser: 9).decide(found) == .overLimit(inUse: 1_000_000))
  }

  @Test("a new slot past the slot limit; any upload past the bytes limit; a deleted slot counts as new")
  func limits() {
    let full = UploadRule.Found(head: nil, next: 1, slotsInUse: 2, bytesInUse: 0)
    #expect(rule(expected: nil).decide(full) == .tooManySlots(inUse: 2))
    var deleted = full
    deleted.next = 7
    deleted.slotsInUse = 1
    guard case .store(let store) = rule(expected: nil, parent: nil).decide(deleted) else {
      Issue.record("a deleted slot's next upload is stored")
      return
    }
    #expect(store.revision == 7, "a revision number is never reused")
    #expect(rule().decide(three) != .overLimit(inUse: 3000))
    #expect(rule(size: 7001).decide(three) == .overLimit(inUse: 3000), "3000 + 7001 passes 10000")
    #expect(rule(size: 7000).decide(three) != .overLimit(inUse: 3000), "exactly the limit is allowed")
  }

  @Test("a delta goes on its base only while PieceRules let the chain grow; otherwise the file is stored whole")
  func pieces() {
    var found = three
    found.deltaBaseChain = UploadRule.Chain(depth: 2, chain: 100)
    guard case .store(let chained) = rule(deltaSize: 50).decide(found) else {
      Issue.record("stored")
      return
    }
    #expect(chained.deltaOn == UploadRule.Chain(depth: 2, chain: 100))
    guard case .store(let long) = rule(deltaSize: 401).decide(found) else {
      Issue.record("stored")
      return
    }
    #expect(long.deltaOn == nil, "100 + 401 bytes of deltas pass half the 1000-byte file")
    found.deltaBaseChain = UploadRule.Chain(depth: Int64(PieceRules.longestChain), chain: 0)
    guard case .store(let deep) = rule(deltaSize: 1).decide(found) else {
      Issue.record("stored")
      return
    }
    #expect(deep.deltaOn == nil, "a chain at its longest")
    found.deltaBaseChain = nil
    guard case .store(let gone) = rule(deltaSize: 1).decide(found) else {
      Issue.record("stored")
      return
    }
    #expect(gone.deltaOn == nil, "the base piece is gone")
    found.deltaBaseChain = UploadRule.Chain(depth: 0, chain: 0)
    guard case .store(let small) = rule(deltaSize: 1, smallestDelta: 1001).decide(found) else {
      Issue.record("stored")
      return
    }
    #expect(small.deltaOn == nil, "a file smaller than smallestDelta")
  }

  @Test("pruning keeps the newest `keep`, never a loser (nor the one this upload marks), the newest first")
  func pruning() {
    var found = UploadRule.Found(
      head: 6, next: 7, slotsInUse: 1,
      revisions: (1...6).map { UploadRule.Listed(revision: $0, parent: $0 == 1 ? nil : $0 - 1, lost: $0 == 2) })
    found.loserExists = true
    let decided = rule(expected: 6, loser: 3, parent: 6, keep: 2).decide(found)
    #expect(
      decided
        == .store(
          UploadRule.Store(
            revision: 7, base: 6, parent: 6, pruned: [5, 4, 1],
            relinked: [UploadRule.Relink(revision: 6, parent: 3), UploadRule.Relink(revision: 2, parent: nil)])),
      "6 and 7 kept; 2 lost before, 3 loses now; 6's parent 5 and 5's 4 are gone, so 6 takes 3; 2's parent 1 is gone")
  }

  @Test("a new revision whose parent is pruned takes the nearest ancestor that remains")
  func parentPruned() {
    let found = UploadRule.Found(
      head: 4, next: 5, slotsInUse: 1,
      revisions: [
        .init(revision: 2, parent: nil, lost: true), .init(revision: 3, parent: 2), .init(revision: 4, parent: 3),
      ])
    guard case .store(let store) = rule(expected: 4, parent: 3, keep: 2).decide(found) else {
      Issue.record("stored")
      return
    }
    #expect(store.pruned == [3])
    #expect(store.parent == 2, "3 is pruned; its parent, the loser 2, stays")
    #expect(store.relinked == [UploadRule.Relink(revision: 4, parent: 2)])
  }

  @Test("prunesAllButOne, the planted bug, is the rule's keep of 1: it decides for both backends")
  func keepOne() {
    guard case .store(let store) = rule(keep: 1).decide(three) else {
      Issue.record("stored")
      return
    }
    #expect(store.pruned == [3, 2, 1])
    guard case .store(let zero) = rule(keep: 0).decide(three) else {
      Issue.record("stored")
      return
    }
    #expect(zero.pruned == [3, 2, 1], "a keep below 1 keeps 1")
  }
}
