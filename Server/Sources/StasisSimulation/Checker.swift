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
  /// Per device: generations a player's tool rewrote.
  var tampered: [String: Set<Int>] = [:]
  /// Per device: generations removed by an explicit discard.
  var discarded: [String: Set<Int>] = [:]
  /// Per device: generations seen gone when the rule allowed it.
  var pruned: [String: Set<Int>] = [:]
  /// A file's SHA-256 → the digest of the state it was saved from.
  var digests: [String: String] = [:]
  /// Revisions the server marked as a conflict's loser.
  var losers: Set<Int64> = []
  /// The SHA-256 of every save a tool edited and wrote back unsigned: none may load anywhere,
  /// nor reach the server.
  var stripped: Set<String> = []
  /// Revisions discarded on the server on purpose.
  var discardedRevisions: Set<Int64> = []
  /// How many invariant checks ran.
  var checks = 0
  /// How many checks could not be made (what they compare cannot be read).
  var skipped = 0
  /// Every ledger entry a device saved durably: each must stay in some file of some device or
  /// some revision on the server, unless a discard let it go.
  var requiredEntries: Set<Int64> = []
  /// Entries an explicit discard let go (every entry of what was discarded).
  var releasedEntries: Set<Int64> = []
  /// A file's SHA-256 → its ledger (nil: not a save the checker reads).
  private var ledgers: [String: [Int64]?] = [:]

  /// The ledger of a file's bytes, cached by their SHA-256.
  mutating func ledger(of bytes: [UInt8]) -> [Int64]? {
    let sha = sha256Hex(bytes)
    if let known = ledgers[sha] { return known }
    let ledger = GameBuild.model(ofFile: bytes)?.ledger
    ledgers[sha] = ledger
    return ledger
  }

  /// Nothing a player reached is lost: every entry of every durable save is in a file on some
  /// device or a revision on the server, unless discarded. Nil when the server cannot be read
  /// (the check is then skipped and counted).
  mutating func checkNothingLost(devices: [SimulatedDevice], server: InProcessServer) async -> BrokenInvariant?? {
    guard let present = await presentEntries(devices: devices, server: server) else { return nil }
    checks += 1
    let lost = requiredEntries.subtracting(releasedEntries).subtracting(present)
    guard let first = lost.min() else { return .some(nil) }
    return
      .init(
        .progressKept,
        "progress lost: \(lost.count) ledger entries saved durably (entry \(first) among them) are in no file on any "
          + "device and in no revision on the server, and nothing that held them was discarded")
  }

  /// A durable save holds `entries`: required from now on, even those a discard let go of
  /// before (a ledger is cumulative, so a discard of an old save releases a prefix the newest
  /// saves still hold; they hold it again, so it is required again).
  mutating func required(_ entries: [Int64]) {
    requiredEntries.formUnion(entries)
    releasedEntries.subtract(entries)
  }

  /// Every ledger entry in a file of some device or a revision on the server; nil when the
  /// server's database cannot be read.
  private mutating func presentEntries(devices: [SimulatedDevice], server: InProcessServer) async -> Set<Int64>? {
    guard let backend = server.committedState,
      let player = try? await backend.player(tokenHash: BearerToken.hash(InProcessServer.token))
    else { return nil }
    var present: Set<Int64> = []
    for device in devices {
      for generation in device.generationsOnDisk() {
        if let bytes = device.disk.contents(of: device.path(of: generation)), let entries = ledger(of: bytes) {
          present.formUnion(entries)
        }
      }
    }
    let revisions = (try? await backend.revisions(player: player, slot: SimulatedDevice.slot.name)) ?? []
    for revision in revisions {
      if let known = ledgers[revision.sha256] {
        present.formUnion(known ?? [])
        continue
      }
      guard let (_, bytes) = try? await backend.file(player: player, slot: revision.slot, revision: revision.revision)
      else { continue }
      present.formUnion(ledger(of: bytes) ?? [])
    }
    return present
  }
  /// Per device: generations the rule keeps until an explicit discard (generation → its
  /// bytes' SHA-256 and why), learned from this ledger: a newer build's save an older build
  /// saved after, the newest save before a start-over or a new game.
  var mustKeep: [String: [Int: (sha256: String, why: String)]] = [:]
  /// A file's SHA-256 → the state and schema it holds (nil: not one the checker can read).
  private var models: [String: (model: GameModel, schema: UInt32)?] = [:]

  mutating func recordDurable(device: SimulatedDevice, save: DurableSave, digest: String) {
    // An older build saved after a newer build's save that is still there: it is kept for good.
    for earlier in durable[device.name] ?? [] where earlier.schema > save.schema {
      guard !(discarded[device.name] ?? []).contains(earlier.generation),
        device.sha256(of: earlier.generation) == earlier.sha256
      else { continue }
      mustKeep[device.name, default: [:]][earlier.generation] = (
        earlier.sha256, "schema \(earlier.schema), and schema \(save.schema) saved after it"
      )
    }
    durable[device.name, default: []].append(save)
    digests[save.sha256] = digest
  }

  /// The newest durable save still on the device's disk is kept until discarded (a start-over
  /// or a new game is about to go on top of it).
  mutating func keepNewest(_ device: SimulatedDevice, why: String) {
    let gone = discarded[device.name] ?? []
    guard
      let newest = (durable[device.name] ?? []).filter({
        !gone.contains($0.generation) && device.sha256(of: $0.generation) == $0.sha256
      }).max(by: { $0.generation < $1.generation }),
      newest.generation == device.generationsOnDisk().first
    else { return }
    mustKeep[device.name, default: [:]][newest.generation] = (newest.sha256, why)
  }

  /// Every invariant of one device's disk; the first broken one, if any.
  mutating func checkDevice(_ device: SimulatedDevice) -> BrokenInvariant? {
    let onDisk = device.generationsOnDisk()
    let saves = durable[device.name] ?? []
    let gone = discarded[device.name] ?? []
    // Generation order is snapshot order.
    checks += 1
    let bySnapshot = saves.sorted { $0.snapshot < $1.snapshot }
    for (earlier, later) in zip(bySnapshot, bySnapshot.dropFirst()) where later.generation <= earlier.generation {
      return .init(
        .generationOrder,
        "generation order: snapshot \(later.snapshot) became generation \(later.generation), "
          + "not after snapshot \(earlier.snapshot)'s generation \(earlier.generation) on \(device.name)")
    }
    // Every durable save is still there, or pruned by the rule.
    let prunedHere = pruned[device.name] ?? []
    for save in saves where !gone.contains(save.generation) && !prunedHere.contains(save.generation) {
      checks += 1
      if let sha = device.sha256(of: save.generation) {
        if sha != save.sha256 {
          return .init(
            .durableSaveKept,
            "durable save lost: generation \(save.generation) on \(device.name) no longer holds the bytes "
              + "reported durable")
        }
        continue
      }
      let newer = onDisk.filter { $0 > save.generation }.count
      if save.schema > device.build.schema {
        return .init(
          .unreadableGenerationKept,
          "unreadable generation deleted: generation \(save.generation) (schema \(save.schema)) on "
            + "\(device.name) is gone, though build \(device.build.rawValue) cannot read it and nobody discarded it")
      }
      if newer < SimulatedDevice.generationsToKeep {
        return .init(
          .durableSaveKept,
          "durable save lost: generation \(save.generation) on \(device.name) is gone with only \(newer) "
            + "newer generations (the rule keeps \(SimulatedDevice.generationsToKeep))")
      }
      pruned[device.name, default: []].insert(save.generation)
    }
    // What the rule keeps until a discard is there, byte for byte.
    for (generation, kept) in (mustKeep[device.name] ?? [:]).sorted(by: { $0.key < $1.key })
    where !gone.contains(generation) {
      checks += 1
      if device.sha256(of: generation) != kept.sha256 {
        return .init(
          .keptGenerationKept,
          "kept generation lost: generation \(generation) on \(device.name) (\(kept.why)) is gone without a "
            + "discard")
      }
    }
    // No two consecutive generations hold the same state (of one schema).
    // (A file a tool rewrote is the tool's, not the store's.)
    let edited = tampered[device.name] ?? []
    for generation in onDisk
    where onDisk.contains(generation - 1) && !edited.contains(generation) && !edited.contains(generation - 1) {
      checks += 1
      guard let newer = model(device, generation), let older = model(device, generation - 1) else {
        skipped += 1
        continue
      }
      if newer.schema == older.schema, newer.model == older.model {
        return .init(
          .stateWrittenOnce,
          "the same state written twice: generations \(generation - 1) and \(generation) on \(device.name)")
      }
    }
    // Memory stays bounded.
    checks += 1
    if let store = device.store, store.heldSnapshots(of: SimulatedDevice.slot) > 2 {
      return .init(
        .heldSnapshots, "held snapshots: \(store.heldSnapshots(of: SimulatedDevice.slot)) on \(device.name) (at most 2)"
      )
    }
    return nil
  }

  private mutating func model(_ device: SimulatedDevice, _ generation: Int) -> (model: GameModel, schema: UInt32)? {
    guard let bytes = device.disk.contents(of: device.path(of: generation)) else { return nil }
    let sha = sha256Hex(bytes)
    if let known = models[sha] { return known }
    var found: (model: GameModel, schema: UInt32)?
    if let document = try? SaveFileFormat.decode(bytes, path: "sim"), let model = GameBuild.model(ofFile: bytes) {
      found = (model, document.game.schemaVersion)
    }
    models[sha] = found
    return found
  }

  /// Every acknowledged upload is on the server or pruned by rule; losers are kept. The losers
  /// are learnt from what went over the wire (`committed`: each upload the server committed,
  /// and the loser it named), never from the server's own columns.
  mutating func checkServer(
    _ server: InProcessServer, acknowledged: [Acknowledged], committed: [Acknowledged]
  ) async -> BrokenInvariant? {
    guard let backend = server.backend else { return nil }
    guard let player = try? await backend.player(tokenHash: BearerToken.hash(InProcessServer.token)) else {
      return .init(.acknowledgedRevisionKept, "server: the player is gone")
    }
    let revisions = (try? await backend.revisions(player: player, slot: SimulatedDevice.slot.name)) ?? []
    var byNumber: [Int64: RevisionMetadata] = [:]
    for revision in revisions { byNumber[revision.revision] = revision }
    for upload in committed { if let loser = upload.loser { losers.insert(Int64(loser)) } }
    for loser in losers.sorted() where !discardedRevisions.contains(loser) {
      checks += 1
      if byNumber[loser] == nil {
        return .init(.loserKept, "server: conflict loser r\(loser) was removed without a discard")
      }
    }
    // Deltas are an encoding: every revision the server lists reads back, byte for byte.
    for revision in revisions {
      checks += 1
      guard let (_, file) = try? await backend.file(player: player, slot: revision.slot, revision: revision.revision)
      else {
        return .init(
          .revisionsReadBack,
          "server: r\(revision.revision) is listed but does not read back (its pieces are gone or damaged)")
      }
      if sha256Hex(file) != revision.sha256 {
        return .init(
          .revisionsReadBack, "server: r\(revision.revision) reads back with other bytes than its SHA-256 says")
      }
    }
    for ack in acknowledged {
      checks += 1
      if stripped.contains(ack.sha256) {
        return .init(
          .unsignedNeverUploaded,
          "server: r\(ack.revision) from \(ack.device) is a save a tool edited and stripped of its signature")
      }
      let number = Int64(ack.revision)
      if let stored = byNumber[number] {
        if stored.sha256 != ack.sha256 {
          return .init(.acknowledgedRevisionKept, "server: r\(number) acknowledged to \(ack.device) holds other bytes")
        }
        continue
      }
      if discardedRevisions.contains(number) { continue }
      if losers.contains(number) { return .init(.loserKept, "server: r\(number), a conflict's loser, is gone") }
      // The server prunes by number: what is `keepRevisions` or more below the head.
      let head = revisions.map(\.revision).max() ?? 0
      if head - number < server.keepRevisions {
        return .init(
          .acknowledgedRevisionKept,
          "server: r\(number) acknowledged with 201 to \(ack.device) is gone, \(head - number) below the head "
            + "r\(head) (the server keeps \(server.keepRevisions))")
      }
    }
    return nil
  }
}
