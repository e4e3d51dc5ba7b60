import Foundation
import StasisSimulation
import Testing

@Suite("stasis-sim", .serialized)
struct SimulationTests {
  /// How many seeds a scenario test tries, from its hint.
  static let searchWidth: UInt64 = 150

  /// The run of the first seed, from `hint` on, whose run shows the scenario; nil if none does
  /// within `searchWidth` seeds. The hint is the seed that met it last: a change to the operations
  /// the simulation draws moves scenarios between seeds, and the test follows rather than breaks.
  private func scenario(
    from hint: UInt64, where shows: (SimulationResult) async -> Bool
  ) async -> SimulationResult? {
    for seed in hint..<(hint + Self.searchWidth) {
      let result = await Simulation.run(seed: seed, operations: 150)
      if await shows(result) { return result }
    }
    return nil
  }

  @Test("a seed replays operation by operation")
  func replay() async {
    let first = await Simulation.run(seed: 7, operations: 80)
    let second = await Simulation.run(seed: 7, operations: 80)
    #expect(first.trace == second.trace)
    #expect(first.failure == nil, "\(first.failure ?? "")\n\(first.trace.joined(separator: "\n"))")
  }

  // Issue 43: the games' loops never yield (the default): where they wait for their syncs they
  // block the main thread, so anything of the library that hopped to the main queue, the main
  // actor or a run loop would never arrive and the run would fail. The same seed gives the same
  // trace whichever way the loop waits: everything arrives at update(), in order.
  @Test("a game loop that never yields keeps every invariant, and its trace is the awaiting loop's")
  func neverYields() async {
    let blocked = await Simulation.run(seed: 12, operations: 150, loop: .neverYields)
    let awaiting = await Simulation.run(seed: 12, operations: 150, loop: .awaits)
    #expect(blocked.failure == nil, "\(blocked.failure ?? "")")
    #expect(blocked.checks > 1000)
    #expect(blocked.trace == awaiting.trace)
  }

  @Test(
    "a lost 201, then more than 8 uploads tried while offline: still recognised as the device's own (seed 129000208)"
  )
  func lostAnswerThenLongOffline() async {
    let result = await Simulation.run(seed: 129_000_208, operations: 150)
    #expect(result.failure == nil, "\(result.failure ?? "")")
    #expect(result.met(.lostAnswerRecognised), "it still occurs")
  }

  // Found as seed 129452363; the simulation now loses a discard's answer on purpose. Which seed
  // meets the scenario moves whenever the operations drawn change, so the test looks for it.
  @Test("a discard of a server's loser whose answer was lost may have happened")
  func lostDiscardAnswer() async {
    let found = await scenario(from: 28) { result in
      result.met(.discardAnswerLost)
    }
    #expect(found != nil, "the scenario occurs within \(Self.searchWidth) seeds")
    #expect(found?.failure == nil, "seed \(found?.seed ?? 0): \(found?.failure ?? "")")
  }

  // Found as seed 139114736; the operations the simulation draws have changed since, and seed 2
  // now meets the same scenario (the assertion below says it still occurs).
  @Test("a head uploaded by a newer build is refused by older builds, which are then not compared (seed 2)")
  func newerSchemaHead() async {
    let result = await Simulation.run(seed: 2, operations: 150)
    #expect(result.failure == nil, "\(result.failure ?? "")")
    #expect(result.met(.refusedNewerSchemaHead))
  }

  // Issue 43 case 6: the simulation carries the slot to the newer build while a device on the
  // older one is in step, and sends that device to the background and back. Seed 8 met it first.
  @Test("an older build whose cloud head is a newer schema is held at its return, and the player answers")
  func heldBehindANewerHead() async {
    let found = await scenario(from: 8) { result in
      result.met(.heldBehindNewerSchemaHead)
    }
    #expect(found != nil, "the scenario occurs within \(Self.searchWidth) seeds")
    #expect(found?.failure == nil, "seed \(found?.seed ?? 0): \(found?.failure ?? "")")
  }

  // Seed 48 met it first; the operations drawn have changed since (issue 43's newer build
  // carrying the slot on), so the test looks for a seed where an offline device starts its own
  // game, the histories meet, and the planted merge across them loses ledger entries.
  @Test("devices that start the slot independently meet as unrelated histories, never merged")
  func independentStarts() async {
    let found = await scenario(from: 48) { result in
      guard result.met(.startedOwnGameOffline), result.met(.unrelatedHistories) else { return false }
      let planted = await Simulation.run(
        seed: result.seed, operations: 150, planting: .mergeAcrossUnrelatedHistories)
      return planted.broken == .mergeKeepsLedger
    }
    #expect(found != nil, "the scenario occurs, and the planted merge is found, within \(Self.searchWidth) seeds")
    #expect(found?.failure == nil, "seed \(found?.seed ?? 0): \(found?.failure ?? "")")
  }

  // Found as seed 215542042 in a 150-s run: device-1 started a new game, and its sync never
  // heard (the simulation's tap between coordinator and sync dropped beganNewHistory), so its
  // new game merged against the old history's base and lost 22 ledger entries. The test looks
  // for a seed where a device starts a new game after synced play and the planted merge across
  // histories loses ledger entries.
  @Test("a new game after synced play is a history of its own: never merged against the old base")
  func newGameAfterSyncedPlay() async {
    let found = await scenario(from: 8) { result in
      guard result.met(.newGame), result.met(.newHistoryMet) else { return false }
      let planted = await Simulation.run(seed: result.seed, operations: 150, planting: .mergeAcrossUnrelatedHistories)
      return planted.broken == .mergeKeepsLedger
    }
    #expect(found != nil, "the scenario occurs, and the planted merge is found, within \(Self.searchWidth) seeds")
    #expect(found?.failure == nil, "seed \(found?.seed ?? 0): \(found?.failure ?? "")")
  }

  // Found as seed 34 when the simulation began to sign and strip signatures: a save a tool wrote
  // back unsigned is refused, the player plays on from an older generation, and that branch
  // went up as a continuation of the revision the refused save held: its merge lost 30 ledger
  // entries. The operations have changed since; seed 2 meets the same scenario.
  @Test("a stripped signature is refused, and playing on from an older generation is a branch (seed 2)")
  func strippedThenOlderGeneration() async {
    let result = await Simulation.run(seed: 2, operations: 150)
    #expect(result.failure == nil, "\(result.failure ?? "")")
    #expect(result.met(.toolStrippedSignature), "the scenario still occurs")
    #expect(result.met(.unsignedRefusedPlayedOn))
  }

  // Found as seed 218726817 by the 150-s run: a tool edited device-0's first save, the player
  // started over, and the tool edited the start-over's save to the same state. The checker
  // blamed the store for two identical generations; a tool's rewrite is the tool's.
  @Test("two saves a tool rewrote to one state are not the store writing it twice")
  func toolRewritesTwice() async {
    let found = await scenario(from: 43) { result in
      result.count(.toolStrippedSignature, by: "device-0") >= 2
    }
    #expect(found != nil, "the scenario occurs within \(Self.searchWidth) seeds")
    #expect(found?.failure == nil, "seed \(found?.seed ?? 0): \(found?.failure ?? "")")
  }

  @Test("a kill while a write is held, after an upload whose 201 was written unflushed: no self-conflict (seed 6)")
  func unflushedRecordAfterKill() async {
    let result = await Simulation.run(seed: 6, operations: 150)
    #expect(result.failure == nil, "\(result.failure ?? "")")
    #expect(result.met(.killedWhileWriteHeld))
    #expect(result.deltaUploads > 0 && result.parts > 0, "deltas and parts went over the line")
  }

  // Found as seed 558583401 by CI's 60-s run of fresh seeds: a tool edited the generation the
  // sync record named as the base, the next save went up as a delta made against the edited
  // bytes, the server answered 400, and the save was dropped as refused. The server answers 409
  // now ("send the whole file") and the client sends it whole.
  // Issue 56 made a return read and write less (the sync record written once fewer per upload,
  // the newest file read once), so a fault drawn for the disk meets another operation: the
  // seed still runs clean, and the scenario is followed from it.
  @Test("a save on a base a tool edited goes up whole, not dropped (from seed 558583401)")
  func deltaOnAnEditedBase() async {
    let pinned = await Simulation.run(seed: 558_583_401, operations: 150)
    #expect(pinned.failure == nil, "\(pinned.failure ?? "")")
    let found = await scenario(from: 558_583_401) { result in
      result.met(.toolStrippedSignature, by: "device-1") && result.met(.quitWithUploadLetGo, by: "device-1")
    }
    #expect(found != nil, "the scenario occurs within \(Self.searchWidth) seeds")
    #expect(found?.failure == nil, "seed \(found?.seed ?? 0): \(found?.failure ?? "")")
  }

  // Found as seed 558847250 by a 20-minute run of fresh seeds: a timer's firing was written,
  // renamed into place, and the folder's flush failed (then the retry's rename failed too): the
  // center delivered nothing, as it must, and the process was killed before any flush, so the
  // crash kept the file without the timer. Delivering at most once, nothing can prevent it; the
  // checker now knows the disk held such a write at the kill (`unflushedAfterFailedFlush`).
  @Test(
    "a kill after a timers write whose flush failed: the timer may be lost, and nothing else breaks (from seed 558847250)"
  )
  func timerWriteUnflushedAtKill() async {
    let pinned = await Simulation.run(seed: 558_847_250, operations: 150)
    #expect(pinned.failure == nil, "\(pinned.failure ?? "")")
    let found = await scenario(from: 558_847_250) { result in result.met(.killedWhileWriteHeld, by: "device-2") }
    #expect(found != nil, "the scenario occurs within \(Self.searchWidth) seeds")
    #expect(found?.failure == nil, "seed \(found?.seed ?? 0): \(found?.failure ?? "")")
  }

  // Issue 55: the world build (schema 3) keeps its creatures and its ledger as entity worlds,
  // whose creatures spawn and die with each level and follow one another by reference. A device
  // on it is killed, cold-starts in a process whose ECS ids start elsewhere, and restores its
  // worlds entity by entity; the same seed with the creature's leader saved as a raw ECS id
  // breaks `world-restored-by-entity`.
  @Test("an entity-world device restores its worlds by identity across kills; a raw ECS id saved is caught")
  func entityWorldAcrossKills() async {
    let found = await scenario(from: 1) { result in
      guard result.met(.worldRestoredAfterKill) else { return false }
      let planted = await Simulation.run(seed: result.seed, operations: 150, planting: .worldIDsSavedRaw)
      return planted.broken == .worldRestoredByEntity
    }
    #expect(found != nil, "the scenario occurs, and the planted bug is found, within \(Self.searchWidth) seeds")
    #expect(found?.failure == nil, "seed \(found?.seed ?? 0): \(found?.failure ?? "")")
  }

  // Issue 55: a world-build device merges a conflict: its ledger world by entity (the entries
  // both sides spawned since the base, under identities both gave out), its creatures' world
  // whole with the level. Every ledger entry of both sides is kept, no creature stands in a wall.
  @Test("an entity-world device merges its ledger by entity and keeps every entry of both sides")
  func entityWorldMerged() async {
    let found = await scenario(from: 1) { $0.met(.worldMerged) }
    #expect(found != nil, "the scenario occurs within \(Self.searchWidth) seeds")
    #expect(found?.failure == nil, "seed \(found?.seed ?? 0): \(found?.failure ?? "")")
  }

  // A fixed range, so `swift test` alone exercises every operation; CI then runs fresh seeds
  // for a minute on SQLite and half a minute on PostgreSQL (scripts/test.sh).
  @Test("fifteen seeds break no invariant")
  func seeds() async {
    for seed in UInt64(100)..<UInt64(115) {
      let result = await Simulation.run(seed: seed, operations: 150)
      #expect(result.failure == nil, "seed \(seed): \(result.failure ?? "")\n\(result.trace.joined(separator: "\n"))")
      if result.failure != nil { break }
    }
  }

  // Seed 18: with the tick alone to tell whether a replay goes on (as the demo had it), a
  // restore of another state at the replay's frame went on in the same replay, which then did
  // not play back (first divergence at tick 2587); `ReplayRecorder.continues(from:)` compares
  // the state's digest.
  @Test("replays recorded across kills, suspends, cold starts and restores play back to the bit")
  func replaysPlayBack() async {
    var wentOn = 0
    for seed: UInt64 in [1, 2, 3, 4, 18] {
      let result = await Simulation.run(seed: seed, operations: 150)
      #expect(result.failure == nil, "seed \(seed): \(result.failure ?? "")")
      #expect(result.replaysVerified > 0 && result.replayedTicks > 0, "seed \(seed) verified replays")
      wentOn += result.count(.replayWentOn)
    }
    #expect(wentOn > 0, "a new process went on in the replay of the one before, and it still plays back")
  }

  @Test("a timer whose firing's write failed in the last operation fires once the clock moves on (seed 634541936)")
  func timerWriteFailedLast() async {
    let result = await Simulation.run(seed: 634_541_936, operations: 150)
    #expect(result.failure == nil, "\(result.failure ?? "")")
  }

  /// The seed that found each planted bug last (where it is not seed 1).
  static let lastFound: [PlantedBug: UInt64] = [
    .newestOnlyAfterLostAnswer: 3, .keepNothingBeforeWriting: 2, .sameStateTwice: 10, .mergeSectionBySection: 19,
    .mergeAcrossUnrelatedHistories: 8, .settingsOverwriteNewer: 370,
  ]

  @Test(
    "each planted bug is found within a bounded number of seeds, and its seed replays", arguments: PlantedBug.allCases)
  func planted(_ bug: PlantedBug) async {
    var found: SimulationResult?
    // The search starts at the seed that met the bug last, and tries 100 from there: a change
    // to the operations drawn moves a scenario between seeds, and the search follows it. (The
    // settings' lost update needs two devices to change one key and sync in the order that
    // loses it: seed 45 until issue 43's holds moved the operations, 295 since. The others, from
    // seed 1 on, as of issue 44: 1, 1, 3, 1, 2, 10, 19, 8, 1, 1.)
    let first = Self.lastFound[bug] ?? 1
    for seed in first...(first + 99) {
      let result = await Simulation.run(seed: seed, operations: 150, planting: bug)
      if result.failure != nil {
        found = result
        break
      }
    }
    guard let found else {
      Issue.record("\(bug.rawValue) was not found in 100 seeds")
      return
    }
    let expected: [PlantedBug: [Invariant]] = [
      .generationAtLockTime: [.generationOrder, .heldSnapshots],
      .pruneUnreadable: [.unreadableGenerationKept, .keptGenerationKept, .progressKept],
      .newestOnlyAfterLostAnswer: [.noSelfConflict],
      .dropAcknowledgedUpload: [.acknowledgedRevisionKept, .loserKept, .progressKept],
      .keepNothingBeforeWriting: [.keptGenerationKept, .unreadableGenerationKept, .progressKept],
      .sameStateTwice: [.stateWrittenOnce],
      .mergeSectionBySection: [.mergedWorldSeen, .mergeKeepsLedger],
      .mergeAcrossUnrelatedHistories: [.mergeKeepsLedger],
      .collectionIgnoresChains: [.revisionsReadBack],
      .unflushedSettingsAndTimers: [.settingKept, .timerFiresOnce],
      .settingsOverwriteNewer: [.settingKept],
      .stepReadsHiddenState: [.replaysVerify],
      .worldIDsSavedRaw: [.worldRestoredByEntity],
    ]
    #expect(
      found.broken.map { expected[bug]!.contains($0) } == true,
      "seed \(found.seed): \(found.broken?.rawValue ?? "nothing broken"): \(found.failure ?? "")")
    let replayed = await Simulation.run(seed: found.seed, operations: 150, planting: bug)
    #expect(replayed.failure == found.failure)
    #expect(replayed.trace == found.trace)
    // Planted per run: the same seed without the bug breaks nothing.
    let honest = await Simulation.run(seed: found.seed, operations: 150)
    #expect(honest.failure == nil, "seed \(found.seed) without \(bug.rawValue): \(honest.failure ?? "")")
  }

  /// The PostgreSQL server the tests use (`scripts/test.sh` starts one); never a skip without it.
  private static func postgres() throws -> SimulatedDatabase {
    guard let url = ProcessInfo.processInfo.environment["STASIS_TEST_POSTGRES_URL"], !url.isEmpty else {
      throw PostgresMissing()
    }
    return .postgres(url: url)
  }

  private struct PostgresMissing: Error, CustomStringConvertible {
    var description: String { "STASIS_TEST_POSTGRES_URL is not set: run scripts/test.sh, which starts PostgreSQL" }
  }

  // One rule on both backends: the same seed's run, over the server on SQLite and over the
  // server on PostgreSQL (a database of the run's own), is the same run, operation by operation:
  // every status, revision number, conflict and delta the devices saw. Seeds 2 and 3 each kill
  // the server inside an upload's commit (on PostgreSQL, a deferred trigger raises at COMMIT):
  // before the upload ran in an explicit transaction, PostgreSQL answered that upload `201`
  // (postgres-nio completes an autocommit query with its row, before the implicit commit) and
  // seed 1 failed with "r3 acknowledged with 201 … is gone". (Seed 1 no longer draws that death
  // since issue 56's return does less disk work: the assertion below says each seed still does.)
  @Test("the same seed is the same run on SQLite and on PostgreSQL, deaths inside commits included", arguments: [2, 3])
  func sameRunOnBothBackends(seed: UInt64) async throws {
    let sqlite = await Simulation.run(seed: seed, operations: 150)
    let postgres = await Simulation.run(seed: seed, operations: 150, database: try Self.postgres())
    #expect(postgres.failure == nil, "\(postgres.failure ?? "")")
    #expect(sqlite.failure == nil, "\(sqlite.failure ?? "")")
    #expect(postgres.trace == sqlite.trace)
    #expect(sqlite.met(.deathInsideCommitArmed), "the fault is drawn")
    #expect(postgres.faults == sqlite.faults)
  }

  @Test(
    "each bug planted in the server's storage is found on PostgreSQL too, and its seed replays",
    arguments: PlantedBug.inStorage)
  func plantedOnPostgres(_ bug: PlantedBug) async throws {
    let database = try Self.postgres()
    let first = Self.lastFound[bug] ?? 1
    var found: SimulationResult?
    for seed in first...(first + 19) {
      let result = await Simulation.run(seed: seed, operations: 150, planting: bug, database: database)
      if result.failure != nil {
        found = result
        break
      }
    }
    guard let found else {
      Issue.record("\(bug.rawValue) was not found on PostgreSQL in 20 seeds")
      return
    }
    let expected: [PlantedBug: Invariant] = [
      .dropAcknowledgedUpload: .acknowledgedRevisionKept,
      .collectionIgnoresChains: .revisionsReadBack,
      .settingsOverwriteNewer: .settingKept,
    ]
    #expect(found.broken == expected[bug], "seed \(found.seed): \(found.failure ?? "")")
    let replayed = await Simulation.run(seed: found.seed, operations: 150, planting: bug, database: database)
    #expect(replayed.trace == found.trace)
    // The same seed and bug on SQLite is found the same way: one rule, varied the same way.
    let onSQLite = await Simulation.run(seed: found.seed, operations: 150, planting: bug)
    #expect(onSQLite.failure == found.failure)
  }
}
