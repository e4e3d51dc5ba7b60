import Stasis
import StasisServer

/// The checker's own model of what must exist, and the invariants it checks after every
/// operation. It learns only from what the system reported (durable receipts, `201`s, kept
/// losers, explicit discards), never from the code under test's own bookkeeping.
@MainActor
struct Checker {
  /// A save a device reported durable.
  struct DurableSave: Equatable {
    var generation: Int
    var sha256: String
    var schema: UInt32
    var snapshot: Int
  }

  /// Per device: every save reported durable, in the order the reports came.
  var durable: [String: [DurableSave]] = [:]
  /// Per device: generations removed by an explicit discard.
  var discarded: [String: Set<Int>] = [:]
  /// Per device: generations seen gone when the rule allowed it.
  var pruned: [String: Set<Int>] = [:]
  /// A file's SHA-256 → the digest of the state it was saved from.
  var digests: [String: String] = [:]
  /// Revisions the server marked as a conflict's loser.
  var losers: Set<Int64> = []
  /// Revisions discarded on the server on purpose.
  var discardedRevisions: Set<Int64> = []
  /// How many invariant checks ran.
  var checks = 0

  mutating func recordDurable(device: String, save: DurableSave, digest: String) {
    durable[device, default: []].append(save)
    digests[save.sha256] = digest
  }

  /// Every invariant of one device's disk; the first broken one, if any.
  mutating func checkDevice(_ device: SimulatedDevice) -> String? {
    let onDisk = device.generationsOnDisk()
    let saves = durable[device.name] ?? []
    let gone = discarded[device.name] ?? []
    // Generation order is snapshot order.
    checks += 1
    let bySnapshot = saves.sorted { $0.snapshot < $1.snapshot }
    for (earlier, later) in zip(bySnapshot, bySnapshot.dropFirst()) where later.generation <= earlier.generation {
      return "generation order: snapshot \(later.snapshot) became generation \(later.generation), "
        + "not after snapshot \(earlier.snapshot)'s generation \(earlier.generation) on \(device.name)"
    }
    // Every durable save is still there, or pruned by the rule.
    let prunedHere = pruned[device.name] ?? []
    for save in saves where !gone.contains(save.generation) && !prunedHere.contains(save.generation) {
      checks += 1
      if let sha = device.sha256(of: save.generation) {
        if sha != save.sha256 {
          return "durable save lost: generation \(save.generation) on \(device.name) no longer holds the bytes "
            + "reported durable"
        }
        continue
      }
      let newer = onDisk.filter { $0 > save.generation }.count
      if save.schema > device.build.schema {
        return "unreadable generation deleted: generation \(save.generation) (schema \(save.schema)) on "
          + "\(device.name) is gone, though build \(device.build.rawValue) cannot read it and nobody discarded it"
      }
      if newer < SimulatedDevice.generationsToKeep {
        return "durable save lost: generation \(save.generation) on \(device.name) is gone with only \(newer) "
          + "newer generations (the rule keeps \(SimulatedDevice.generationsToKeep))"
      }
      pruned[device.name, default: []].insert(save.generation)
    }
    // Memory stays bounded.
    checks += 1
    if let store = device.store, store.heldSnapshots(of: SimulatedDevice.slot) > 2 {
      return "held snapshots: \(store.heldSnapshots(of: SimulatedDevice.slot)) on \(device.name) (at most 2)"
    }
    return nil
  }

  /// Every acknowledged upload is on the server or pruned by rule; losers are kept.
  mutating func checkServer(_ server: InProcessServer, acknowledged: [Acknowledged]) async -> String? {
    guard let backend = server.backend else { return nil }
    guard let player = try? await backend.player(tokenHash: BearerToken.hash(InProcessServer.token)) else {
      return "server: the player is gone"
    }
    let revisions = (try? await backend.revisions(player: player, slot: SimulatedDevice.slot.name)) ?? []
    var byNumber: [Int64: RevisionMetadata] = [:]
    for revision in revisions { byNumber[revision.revision] = revision }
    for revision in revisions where revision.lostTo != nil { losers.insert(revision.revision) }
    for loser in losers.sorted() where !discardedRevisions.contains(loser) {
      checks += 1
      if byNumber[loser] == nil { return "server: conflict loser r\(loser) was removed without a discard" }
    }
    for ack in acknowledged {
      checks += 1
      let number = Int64(ack.revision)
      if let stored = byNumber[number] {
        if stored.sha256 != ack.sha256 { return "server: r\(number) acknowledged to \(ack.device) holds other bytes" }
        continue
      }
      if discardedRevisions.contains(number) { continue }
      if losers.contains(number) { return "server: r\(number), a conflict's loser, is gone" }
      // The server prunes by number: what is `keepRevisions` or more below the head.
      let head = revisions.map(\.revision).max() ?? 0
      if head - number < server.keepRevisions {
        return "server: r\(number) acknowledged with 201 to \(ack.device) is gone, \(head - number) below the head "
          + "r\(head) (the server keeps \(server.keepRevisions))"
      }
    }
    return nil
  }
}
