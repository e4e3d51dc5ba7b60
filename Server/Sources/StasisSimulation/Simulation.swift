import Dispatch
import Foundation
@_spi(Simulation) import Stasis
@_spi(Simulation) import StasisCloud
@_spi(Simulation) import StasisMerge
import StasisReplay
import StasisServer
import StasisTesting
import Synchronization

/// A known bug the honesty check plants (``Simulation/run(seed:operations:planting:echo:)``).
public enum PlantedBug: String, Sendable, CaseIterable {
  /// Issue 14's race: writes not in snapshot order (no superseding, newest waiting first).
  case generationAtLockTime = "generation-at-lock-time"
  /// Pruning deletes a generation this build cannot read.
  case pruneUnreadable = "prune-unreadable"
  /// After a lost `201`, only the newest generation is compared with the head.
  case newestOnlyAfterLostAnswer = "newest-only-after-lost-201"
  /// The server prunes acknowledged uploads past the rule.
  case dropAcknowledgedUpload = "drop-acknowledged-upload"
  /// Issue 27, case 1: a write keeps nothing before it goes beside a save its build cannot read.
  case keepNothingBeforeWriting = "keep-nothing-before-writing"
  /// Issue 27, case 9: a new process writes the state the slot's newest file already holds.
  case sameStateTwice = "same-state-twice"
  /// Issue 27, case 3: undeclared sections merge one by one, so a new level meets old creatures.
  case mergeSectionBySection = "merge-section-by-section"
  /// Issue 27, case 4: a conflict merges against the base this device continues, although the
  /// server's head began a history of its own.
  case mergeAcrossUnrelatedHistories = "merge-across-unrelated-histories"
  /// Issue 28: the server's collection keeps the pieces revisions name, not the pieces their
  /// deltas are built on.
  case collectionIgnoresChains = "collection-ignores-chains"
  /// Issue 31: settings and timers are written without a flush, so a crash takes one back.
  case unflushedSettingsAndTimers = "unflushed-settings-and-timers"
  /// Issue 31: the server's settings merge takes every key sent, whatever its stamp.
  case settingsOverwriteNewer = "settings-overwrite-newer"
  /// Issue 45: the game's step reads state no save holds (a count of the run's steps, as a
  /// `static var` would be), so a replay cannot take its steps again.
  case stepReadsHiddenState = "step-reads-hidden-state"
  /// Issue 55: the world build saves the creature each creature follows as its ECS id, a plain
  /// number, not a reference: a restore gives the entities new ids, and it follows another.
  case worldIDsSavedRaw = "world-ids-saved-raw"

  /// The bugs planted in the server's storage: on SQLite or on PostgreSQL, whichever the run's
  /// server uses (`--postgres`).
  public static let inStorage: [PlantedBug] = [
    .dropAcknowledgedUpload, .collectionIgnoresChains, .settingsOverwriteNewer,
  ]
}

// A bug in the game's own code, not a library's rule: no seam, and the same in every build.
extension PlantedBug? {
  /// Whether the world build saves the creature each creature follows as its raw ECS id.
  var savesWorldReferencesRaw: Bool { self == .worldIDsSavedRaw }
}

/// What one seed's run did, and the invariant it broke, if one broke.
public struct SimulationResult: Sendable {
  /// The seed.
  public var seed: UInt64
  /// Every operation, in order, as one line each.
  public var trace: [String]
  /// The broken invariant's message, nil when every check passed.
  public var failure: String?
  /// The invariant it broke, nil when every check passed: what tests ask, not the message's text.
  public var broken: Invariant?
  /// The scenarios the run met, in order: what tests look for, not the trace's text.
  public var events: [SimulationEvent] = []
  /// Operations run.
  public var operations = 0
  /// Devices killed.
  public var kills = 0
  /// Disk and network faults injected (EIO, ENOSPC, failed fsync, lost answers, server crashes).
  public var faults = 0
  /// Conflicts the devices settled.
  public var conflicts = 0
  /// Invariant checks made.
  public var checks = 0
  /// Checks that could not be made (what they compare was gone), each counted.
  public var skippedChecks = 0
  /// Conflicts settled by a three-way merge that combined the two sides.
  public var merges = 0
  /// Conflicts between histories that do not continue each other (no three-way merge).
  public var unrelated = 0
  /// Uploads sent as deltas.
  public var deltaUploads = 0
  /// Parts of resumable uploads sent.
  public var parts = 0
  /// Cut uploads asked about and resumed.
  public var resumptions = 0
  /// Replays verified at the end of the run, and the frames they played back.
  public var replaysVerified = 0
  public var replayedTicks = 0
}

/// Each invariant the checker holds every run to (27, as `docs/SIMULATION.md` describes them),
/// and ``harness`` for a run that could not go on. A failure names the one it broke
/// (``SimulationResult/broken``), with a message for people.
public enum Invariant: String, Sendable, CaseIterable {
  /// Every save reported durable is on its device with the same bytes, unless pruned by the rule.
  case durableSaveKept = "durable-save-kept"
  /// Generation order is snapshot order.
  case generationOrder = "generation-order"
  /// At most 2 snapshots are held per slot.
  case heldSnapshots = "held-snapshots"
  /// A generation this build cannot read is never deleted unless discarded.
  case unreadableGenerationKept = "unreadable-generation-kept"
  /// A generation the rule keeps for good stays until discarded.
  case keptGenerationKept = "kept-generation-kept"
  /// No two consecutive generations hold one state.
  case stateWrittenOnce = "state-written-once"
  /// Every ledger entry saved durably is in a file of some device or a revision on the server.
  case progressKept = "progress-kept"
  /// Every revision acknowledged with a `201` is on the server with its bytes, unless pruned.
  case acknowledgedRevisionKept = "acknowledged-revision-kept"
  /// A conflict's loser stays on the server until discarded.
  case loserKept = "loser-kept"
  /// Every revision the server lists reads back with its SHA-256.
  case revisionsReadBack = "revisions-read-back"
  /// A save a tool stripped of its signature never goes up.
  case unsignedNeverUploaded = "unsigned-never-uploaded"
  /// An unsigned file never loads in a signed slot.
  case unsignedNeverLoads = "unsigned-never-loads"
  /// A cold start restores the newest durable generation it can read.
  case coldStartRestoresNewest = "cold-start-restores-newest"
  /// A restored state is the state that was saved (its digest).
  case restoredStateIsSaved = "restored-state-is-saved"
  /// The game is held while the slot or the cloud holds a save it cannot read, and only then.
  case heldWhenUnreadable = "held-when-unreadable"
  /// A quit's save goes up, or waits in the sync record.
  case quitUploadGoesUp = "quit-upload-goes-up"
  /// A device never conflicts with its own upload.
  case noSelfConflict = "no-self-conflict"
  /// A merge keeps every ledger entry of both sides.
  case mergeKeepsLedger = "merge-keeps-ledger"
  /// A merge builds no world no device saw (no creature in a wall).
  case mergedWorldSeen = "merged-world-seen"
  /// A merged save carries the game's summary of the merged state.
  case mergedSummary = "merged-summary"
  /// After every device syncs, they hold the same state.
  case devicesConverge = "devices-converge"
  /// No acknowledged setting change is lost, on a device or on the server.
  case settingKept = "setting-kept"
  /// An acknowledged timer fires once: never twice, never lost.
  case timerFiresOnce = "timer-fires-once"
  /// A device's settings and timers open at each start.
  case settingsAndTimersOpen = "settings-and-timers-open"
  /// Nothing the game waits for needs its thread while its loop holds it.
  case loopHoldsItsThread = "loop-holds-its-thread"
  /// Every replay a device recorded plays back through the game's step to every digest.
  case replaysVerify = "replays-verify"
  /// A restored entity world holds the saved entities under their identities, with their
  /// components and the next identity, and each reference points at the entity saved.
  case worldRestoredByEntity = "world-restored-by-entity"
  /// The run itself could not go on (a fault could not be armed, the server not restarted).
  case harness
}

/// A broken invariant and what the checker saw.
public struct BrokenInvariant: Sendable, Equatable, CustomStringConvertible {
  /// The invariant.
  public var invariant: Invariant
  /// One line for people: what was found, naming devices, generations and revisions.
  public var message: String

  /// A broken `invariant`, as `message` says.
  public init(_ invariant: Invariant, _ message: String) {
    self.invariant = invariant
    self.message = message
  }

  public var description: String { message }
}

/// A scenario a run met, and the device that met it (nil: the server). The trace says the
/// same for people; tests look for these, so a reworded trace line breaks no test.
public struct SimulationEvent: Sendable, Hashable, CustomStringConvertible {
  /// What was met.
  public enum Kind: String, Sendable, CaseIterable {
    /// A device launched offline with the slot empty and started its own game.
    case startedOwnGameOffline = "started-own-game-offline"
    /// An upload whose `201` was lost was recognised as the device's own on the server.
    case lostAnswerRecognised = "lost-answer-recognised"
    /// A discard of the server's loser was carried out and its answer lost.
    case discardAnswerLost = "discard-answer-lost"
    /// A catch-up refused the cloud's head: it was saved by a newer schema.
    case refusedNewerSchemaHead = "refused-newer-schema-head"
    /// An older build was held behind the cloud's head of a newer schema.
    case heldBehindNewerSchemaHead = "held-behind-newer-schema-head"
    /// A conflict between histories that do not continue each other (one that meets a new game's
    /// history is ``newHistoryMet``).
    case unrelatedHistories = "unrelated-histories"
    /// A conflict whose device's save begins a history of its own (a new game).
    case newHistoryMet = "new-history-met"
    /// A device started a new game.
    case newGame = "new-game"
    /// A tool edited the newest save and wrote it back unsigned.
    case toolStrippedSignature = "tool-stripped-signature"
    /// A restore refused an unsigned save, and the player played on from an older generation.
    case unsignedRefusedPlayedOn = "unsigned-refused-played-on"
    /// A device was killed while a write was held in the disk.
    case killedWhileWriteHeld = "killed-while-write-held"
    /// A quit with an upload in flight, the line letting it go.
    case quitWithUploadLetGo = "quit-with-upload-let-go"
    /// The server was armed to die inside an upload's transaction, before its commit.
    case deathInsideCommitArmed = "death-inside-commit-armed"
    /// A new process went on recording the replay of the process before it (killed or quit),
    /// which ended on the state it restored.
    case replayWentOn = "replay-went-on"
    /// The world build restored its entity worlds, with creatures, in a process started after a kill.
    case worldRestoredAfterKill = "world-restored-after-kill"
    /// The world build merged a conflict (its ledger by entity, its creatures with the level).
    case worldMerged = "world-merged"
  }

  /// What was met.
  public var kind: Kind
  /// The device that met it (`device-1`); nil for the server.
  public var device: String?

  /// `kind` met by `device`.
  public init(_ kind: Kind, by device: String? = nil) {
    self.kind = kind
    self.device = device
  }

  public var description: String { device.map { "\($0): \(kind.rawValue)" } ?? kind.rawValue }
}

extension SimulationResult {
  /// True when the run met `kind` (by `device`, when given).
  public func met(_ kind: SimulationEvent.Kind, by device: String? = nil) -> Bool {
    events.contains { $0.kind == kind && (device == nil || $0.device == device) }
  }

  /// How many times the run met `kind` (by `device`, when given).
  public func count(_ kind: SimulationEvent.Kind, by device: String? = nil) -> Int {
    events.filter { $0.kind == kind && (device == nil || $0.device == device) }.count
  }
}

/// How the simulated games' loops wait for the library.
public enum GameLoop: String, Sendable, CaseIterable {
  /// The game's thread never yields: it never awaits, never pumps the main queue or a run
  /// loop. Where it must wait for its sync (a catch-up, the uploads an operation queued), it
  /// blocks its own thread, as a headless loop does, and everything the library hands it comes
  /// at its next `update()`. A wait for work that needed the main thread to make progress
  /// would never end: it runs out and the run fails. (The checker's reads of the server
  /// between operations still await.)
  case neverYields = "never-yields"
  /// The game's thread awaits its sync (`await cloud.settle()`), freeing the main actor meanwhile.
  case awaits
}

/// The deterministic simulation: several devices of one player and one in-process server,
/// operations drawn from a seed, each run to completion, and every invariant checked after
/// each. The same seed gives the same trace.
///
/// ```swift
/// let result = await Simulation.run(seed: 42, operations: 200)
/// if let failure = result.failure { print(result.trace.joined(separator: "\n"), failure) }
/// ```
@MainActor
public final class Simulation {
  private var random: SeededGenerator
  private let server: InProcessServer
  private var devices: [SimulatedDevice]
  private var checker = Checker()
  private var result: SimulationResult
  private let wallClock: SimulatedWallClock
  private var snapshot = 0
  private let echo: Bool
  /// The bug planted in this run's instances; nil in an honest run.
  private let plantedBug: PlantedBug?
  /// Ledger entries played so far in the run: each play adds the next, unique in the run.
  private var ledgerEntries: Int64 = 0
  /// The hidden state ``PlantedBug/stepReadsHiddenState`` plants (nil in every other run).
  private let hidden: SimulatedReplays.HiddenState?
  /// In part of the runs, an upload stays in flight while the game saves, another device
  /// uploads and a catch-up begins; the seed decides the order (``interleave(_:)``).
  private var interleaves = false
  /// The settings' and timers' operations (``settingsOrTimers(_:)``).
  private var recipeRandom: SeededGenerator
  /// How the games' loops wait for their syncs.
  private let loop: GameLoop
  /// Where builds meet across devices (``carryOnWithNewerBuild(_:)``): its own
  /// generator, so adding it moved no seed's other draws.
  private var buildsRandom: SeededGenerator
  /// Whether a quit that runs v2 runs the world build instead: its own generator, so adding
  /// the build moved no seed's other draws.
  private var worldsRandom: SeededGenerator

  /// The declared merge: the level goes with its creatures, from one side; the ledger is a
  /// union; the rest by play time.
  static let declaredMerge: (ConflictPolicy, String) = (
    .merge(rules: MergeRules(["ledger": .union], groups: [["depth", "creatures"]]), fallback: .longestPlayTime),
    "merge with declarations"
  )

  private init(
    seed: UInt64, server: InProcessServer, wallClock: SimulatedWallClock, plantedBug: PlantedBug?, loop: GameLoop,
    echo: Bool
  ) {
    self.loop = loop
    self.wallClock = wallClock
    self.plantedBug = plantedBug
    hidden = plantedBug == .stepReadsHiddenState ? SimulatedReplays.HiddenState() : nil
    random = SeededGenerator(seed: seed)
    recipeRandom = SeededGenerator(seed: seed ^ 0x7E_C1_9E)
    buildsRandom = SeededGenerator(seed: seed ^ 0xB0_11_D5)
    worldsRandom = SeededGenerator(seed: seed ^ 0x3C_5E_E7)
    self.server = server
    devices = []
    result = SimulationResult(seed: seed, trace: [])
    self.echo = echo
  }

  /// Runs one seed for `operations` operations (stopping at the first broken invariant), with
  /// `bug` planted in this run's stores, syncs, merges and server only: other runs, and
  /// everything else in the process, are untouched. `echo` prints each operation as it runs
  /// (`--trace`).
  public static func run(
    seed: UInt64, operations: Int = 150, planting bug: PlantedBug? = nil, loop: GameLoop = .neverYields,
    database: SimulatedDatabase = .sqlite, echo: Bool = false
  ) async -> SimulationResult {
    if bug != nil, !canPlant {
      return SimulationResult(
        seed: seed, trace: [],
        failure: "nothing can be planted: built without the SimulationSeams trait (--traits SimulationSeams)")
    }
    let folder = Self.scratchFolder(seed: seed)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let wallClock = SimulatedWallClock()
    let server: InProcessServer
    do {
      var seedRandom = SeededGenerator(seed: seed ^ 0x5EED)
      server = try await InProcessServer(
        path: folder + "/server.sqlite", keepRevisions: 3 + seedRandom.below(3), clock: wallClock.read,
        planting: bug, database: database)
    } catch {
      return SimulationResult(seed: seed, trace: [], failure: "the server could not start: \(error)")
    }
    let simulation = Simulation(
      seed: seed, server: server, wallClock: wallClock, plantedBug: bug, loop: loop, echo: echo)
    await simulation.run(operations: operations)
    await server.finish()
    return simulation.result
  }

  private static func scratchFolder(seed: UInt64) -> String {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    return "\(base)/stasis-sim-\(getpid())-\(seed)-\(UInt64.random(in: 0...UInt64.max))"
  }

  private var now: @Sendable () -> Int64 { wallClock.read }

  /// How long the game's thread waits for its sync before the run calls it stuck: far longer
  /// than any operation takes, and only ever reached when the work waited for cannot progress.
  static let gameThreadPatience: DispatchTimeInterval = .seconds(120)

  /// The game waits for `work` of its sync (`what`): with ``GameLoop/neverYields``, on its own
  /// thread, blocked, while the work runs on the sync's tasks — nothing of it may need the main
  /// thread; with ``GameLoop/awaits``, by awaiting. Nil (and the run failed) when it never ended.
  private func waitOnGameThread<T: Sendable>(
    _ what: String, _ work: @escaping @Sendable () async -> T
  ) async -> T? {
    guard loop == .neverYields else { return await work() }
    let answer = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task.detached {
      let value = await work()
      answer.withLock { $0 = value }
      done.signal()
    }
    guard done.wait(timeout: .now() + Self.gameThreadPatience) == .success else {
      fail(
        .loopHoldsItsThread, "\(what) did not end while the game's loop held its thread: the library needed that thread"
      )
      return nil
    }
    return answer.withLock { $0 }
  }

  /// The run met `kind`, by `device` (nil: the server).
  private func met(_ kind: SimulationEvent.Kind, by device: SimulatedDevice? = nil) {
    result.events.append(SimulationEvent(kind, by: device?.name))
  }

  private func note(_ line: String) {
    result.trace.append(line)
    if echo { print(line) }
  }

  private func run(operations: Int) async {
    let count = 2 + random.below(2)
    // Part of the runs sign every save, and accept unsigned ones (the key-rotation recipe).
    let signs = random.chance(30)
    interleaves = random.chance(40)
    if interleaves { note("uploads stay in flight while saves, other devices and catch-ups go on") }
    if signs { note("every device signs its saves (accepting unsigned ones, as the rotation recipe does)") }
    for index in 0..<count {
      let device = SimulatedDevice(
        name: "device-\(index)", server: server, wallClock: wallClock, plantedBug: plantedBug)
      device.timerClock = wallClock
      devices.append(device)
      if signs { device.signing = .signed(with: Self.signingKey, acceptingUnsigned: true) }
      // Most devices merge from the start, with declarations or without; the others keep the
      // default policy.
      switch random.below(10) {
      case 0..<4: (device.policy, device.policyName) = Self.declaredMerge
      case 4..<7: (device.policy, device.policyName) = (.merge(rules: MergeRules(), fallback: .mostRecent), "merge")
      default: break
      }
      // Devices that start the slot independently: one plays offline before it ever syncs,
      // while another starts the slot online. Their histories are unrelated.
      if index > 0, random.chance(25) {
        device.network.isOnline = false
        note("launch \(device.name), offline (\(device.policyName)): it starts its own game")
        met(.startedOwnGameOffline, by: device)
      } else {
        note("launch \(device.name) (\(device.policyName))")
      }
      await coldStart(device)
    }
    for _ in 0..<operations {
      wallClock.advance(by: 1000)
      // Settings and timers draw from their own generator, so adding them moved no seed's
      // other operations.
      if recipeRandom.chance(6) {
        let device = devices[recipeRandom.below(devices.count)]
        if device.isRunning { await settingsOrTimers(device) }
      }
      await step()
      // Which call met an armed fault (the game's, a save's worker's, the sync's) is traced: a
      // seed whose threads met it in another order is then another trace, never the same trace
      // with another outcome.
      for device in devices {
        // Sorted: the order two threads met them in is not part of the run; which calls met them is.
        for fault in device.disk.takeStruckFaults().map(\.description).sorted() {
          note("\(device.name): disk: \(fault)")
        }
      }
      result.operations += 1
      if result.failure == nil { await checkAll() }
      if result.failure != nil { break }
    }
    if result.failure == nil {
      await converge()
      result.operations += 1
      if result.failure == nil { await checkAll() }
      if result.failure == nil { fireEveryTimer() }
      if result.failure == nil { checkReplays() }
    }
    for device in devices where device.isRunning {
      guard let cloud = device.sync else { continue }
      await waitOnGameThread("\(device.name)'s sync") { await cloud.settle() }
    }
    result.checks = checker.checks
    result.skippedChecks += checker.skipped
    // Faults as injected, not as armed: answers lost, uploads the server died inside, and
    // file-system calls failed.
    for device in devices {
      result.faults += device.network.lostAnswers + device.network.diedInside + device.disk.faultsInjected
      let transfers = device.network.transfers
      result.deltaUploads += transfers.deltaUploads
      result.parts += transfers.parts
      result.resumptions += transfers.resumptions
    }
  }

  /// A setting changed, a timer scheduled, or the settings carried through the server (15.4, 15.6).
  private func settingsOrTimers(_ device: SimulatedDevice) async {
    let recipes = device.recipes
    var random = recipeRandom
    defer { recipeRandom = random }
    switch random.below(10) {
    case 0..<4:
      let volume: Int64? = random.chance(60) ? Int64(random.below(11)) : nil
      let palettes = ["standard", "deuteranopia", "protanopia", "tritanopia"]
      let palette: String? = volume == nil || random.chance(40) ? palettes[random.below(palettes.count)] : nil
      let outcome = recipes.change(volume: volume, palette: palette)
      note("\(device.name): settings volume=\(volume.map(String.init) ?? "-") palette=\(palette ?? "-"): \(outcome)")
    case 4..<8:
      let after = Duration.seconds(random.below(900))
      note("\(device.name): timer after \(after): \(recipes.schedule(after: after, now: now()))")
    default:
      guard let client = device.sync?.client else { return note("\(device.name): settings sync: not running") }
      note("\(device.name): settings synced through the server: \(await recipes.syncSettings(through: client))")
    }
  }

  /// The end: every device in the foreground, the clock past every timer's date, one check
  /// each; then every acknowledged timer has fired exactly once.
  private func fireEveryTimer() {
    // Past every date, and a second on at least: a timers write that failed in the last
    // operation is tried again a second after it (the center's rule for a failing disk), as a
    // game's clock would reach. (Seed 634541936: a firing's write failed with EIO in the last
    // operation, the clock was already past its date, and the final check came in the same
    // second: the timer was called lost.)
    let latest = devices.compactMap(\.recipes.latestDue).max() ?? 0
    wallClock.advance(by: max(latest - now(), 0) + 1000)
    for device in devices {
      guard let process = device.process else { continue }
      if process.application.state.isInBackground { process.application.enterForeground() }
      process.application.update()
      if let broken = device.recipes.checkAllFired(device: device.name) { return fail(broken) }
    }
    let fired = devices.reduce(0) { $0 + $1.recipes.timersFired }
    let settings = devices.reduce(0) { $0 + $1.recipes.acknowledgedSettings.count }
    note("timers: \(fired) fired, each once; settings: \(settings) keys acknowledged, none lost")
  }

  private func fail(_ invariant: Invariant, _ message: String) {
    fail(BrokenInvariant(invariant, message))
  }

  private func fail(_ broken: BrokenInvariant) {
    if result.failure == nil {
      result.failure = broken.message
      result.broken = broken.invariant
    }
  }

  private func checkAll() async {
    for device in devices {
      if let broken = checker.checkDevice(device) { return fail(broken) }
      if let failure = device.recipesFailure { return fail(.settingsAndTimersOpen, failure) }
      if let broken = device.recipes.check(device: device.name) { return fail(broken) }
    }
    if let stored = await server.settings() {
      for device in devices {
        if let broken = device.recipes.checkServer(stored, device: device.name) { return fail(broken) }
      }
    }
    let acknowledged = devices.flatMap { $0.network.acknowledged }
    let committed = devices.flatMap { $0.network.committed }
    var checker = checker
    let broken = await checker.checkServer(server, acknowledged: acknowledged, committed: committed)
    if broken == nil {
      switch await checker.checkNothingLost(devices: devices, server: server) {
      case nil: result.skippedChecks += 1  // the server is down: what it holds cannot be read
      case .some(let lost?): fail(lost)
      case .some(nil): break
      }
    }
    self.checker = checker
    if let broken { fail(broken) }
  }

  // MARK: Operations

  private func step() async {
    let device = devices[random.below(devices.count)]
    guard device.isRunning else {
      note("\(device.name): cold start (build \(device.build.rawValue))")
      return await coldStart(device)
    }
    if let failure = device.process?.restoreFailure {  // held while playing: the player answers first
      return answer(device, failure)
    }
    let roll = random.below(100)
    switch roll {
    case 0..<6 where interleaves:
      await interleave(device)
    case 0..<18:
      play(device, frames: 1 + random.below(600))
    case 18..<30:
      play(device, frames: 1 + random.below(60))
      await save(device, .autosave)
    case 30..<36:
      await save(device, .manual)
    case 36..<44:
      await overlap(device)
    case 44..<50:
      await background(device)
    case 50..<52:
      note("\(device.name): quit")
      await quit(device)
    case 52..<54:
      await quitWithUploadInFlight(device)
    case 54..<60:
      let lost = device.kill(&random)
      result.kills += 1
      note("\(device.name): SIGKILL (\(lost) unflushed changes lost)")
    case 60..<64:
      device.network.isOnline.toggle()
      note("\(device.name): \(device.network.isOnline ? "online" : "offline")")
    case 64..<67:
      if server.isUp, random.chance(40) {
        do { try await server.dieInsideNextUpload() } catch {
          return fail(.harness, "the fault could not be armed: \(error)")
        }
        note("server: the next upload's transaction will die before its commit")  // counted when one dies
        met(.deathInsideCommitArmed)
      } else if server.isUp {
        await server.crash()
        result.faults += 1
        note("server: crash")
      } else {
        do { try await server.start() } catch { return fail(.harness, "the server could not restart: \(error)") }
        note("server: restart")
      }
    case 67..<72:
      device.network.loseAnswers(1)  // counted when an answer is lost, not when armed
      note("\(device.name): the next answer is lost")
      play(device, frames: 1 + random.below(120))
      await save(device, .autosave)
      play(device, frames: 1 + random.below(120))
      await save(device, .manual)
    case 72..<78:
      let operations: [FileOperation] = [.write, .fsync, .rename, .fsyncDirectory, .open]
      let errnos: [Errno] = [.ioError, .noSpace]
      let operation = operations[random.below(operations.count)]
      let errno = errnos[random.below(errnos.count)]
      device.disk.fail(operation, times: 1 + random.below(2), with: errno)  // counted when it fails a call
      note("\(device.name): disk fault: \(operation) fails with \(errno)")
      play(device, frames: 1 + random.below(60))
      await save(device, .autosave)
      device.disk.clearFaults()
    case 78..<81:
      let jump = Int64(random.below(7200) - 3600) * 1000
      wallClock.advance(by: jump)
      note("clock: jumps \(jump / 1000) s")
    case 81..<86:
      var build = GameBuild.drawn[random.below(GameBuild.drawn.count)]
      if build == .v2, worldsRandom.chance(50) { build = .v3World }
      let newGame = random.chance(35)
      note("\(device.name): quit, then run build \(build.rawValue)\(newGame ? " and start a new game" : "")")
      await quit(device)
      // What the old build's last save pruned, it pruned as a build that could read it.
      await checkAll()
      if result.failure != nil { return }
      device.build = build
      await coldStart(device, newGame: newGame)
      if !newGame {
        await carryOnWithNewerBuild(device)
        await worldsMeet(device)
      }
    case 86..<89:
      let policies: [(String, ConflictPolicy)] = [
        ("recent", .mostRecent), ("playtime", .longestPlayTime), ("progress", .highestProgress),
        ("last-known-good", .lastKnownGood), ("merge", .merge(rules: MergeRules(), fallback: .mostRecent)),
        (Self.declaredMerge.1, Self.declaredMerge.0),
      ]
      let (name, policy) = policies[random.below(policies.count)]
      (device.policy, device.policyName) = (policy, name)
      note("\(device.name): conflict policy \(name) (from the next launch)")
    case 89..<91:
      await discard(device)
    case 91..<92:
      await stripSignature(device)
    default:
      note("\(device.name): sync")
      await synchronize(device)
    }
  }

  /// Issue 55, generated: `device` has just come back on the world build. The update reaches
  /// another device too, which launches on it merging by the declarations. Both start from the
  /// slot's head, and each plays and saves, spawning ledger entities under identities both give
  /// out; each syncs, and the second meets the first's upload as a conflict: its declared merge
  /// takes the ledgers by entity and the level with its creatures from one side. Everything it
  /// draws comes from its own generator: the seed's other operations stay as they were.
  private func worldsMeet(_ device: SimulatedDevice) async {
    guard device.build == .v3World, device.network.isOnline, server.isUp, device.process?.isPaused == false,
      device.sync?.status.state != .conflict, worldsRandom.chance(60),
      let other = devices.first(where: {
        $0 !== device && $0.isRunning && $0.network.isOnline && $0.process?.isPaused == false
          && $0.sync?.status.state != .conflict
      })
    else { return }
    swap(&random, &worldsRandom)
    defer { swap(&random, &worldsRandom) }
    note("\(other.name): quit, then run build v3-world (\(Self.declaredMerge.1)): the update reaches it too")
    await quit(other)
    await checkAll()
    guard result.failure == nil else { return }
    other.build = .v3World
    (other.policy, other.policyName) = Self.declaredMerge
    await coldStart(other)
    await save(device, .manual)
    await synchronize(device)
    await synchronize(other)
    guard device.sync?.status.state == .synced, other.sync?.status.state == .synced else {
      return note("worlds: the two devices are not in step; they do not meet")
    }
    for player in [device, other] {
      play(player, frames: 1 + random.below(60))
      await save(player, .manual)
    }
    await synchronize(device)
    await synchronize(other)
    await checkAll()
  }

  /// Issue 43 case 6, generated: `device` has just come back on the newer build. Another device
  /// on the older build saves and syncs (nothing of its own left to send), `device` plays on
  /// and carries the slot to the newer schema, and the other goes to the background and back:
  /// its return finds the cloud's head a save its build cannot read, and must be held as one
  /// device is held (``checkHeldBehindNewerHead(_:_:after:)``), never play on beside it unsaid.
  private func carryOnWithNewerBuild(_ device: SimulatedDevice) async {
    guard device.build == .v2, device.network.isOnline, server.isUp, device.process?.isPaused == false,
      device.sync?.status.state != .conflict, buildsRandom.chance(80),
      let other = devices.first(where: {
        $0 !== device && $0.isRunning && $0.network.isOnline && $0.build == .v1 && $0.process?.isPaused == false
          && $0.sync?.status.state != .conflict
      }), let process = other.process
    else { return }
    // Everything it draws comes from its own generator: the seed's other operations stay as they were.
    swap(&random, &buildsRandom)
    defer { swap(&random, &buildsRandom) }
    note("\(other.name): saves and syncs on build v1 before \(device.name) carries the slot on")
    await save(other, .manual)
    await synchronize(other)
    guard other.sync?.status.state == .synced else { return note("\(other.name): not in step; nothing carried on") }
    play(device, frames: 1 + random.below(60))
    await save(device, .manual)
    await synchronize(device, answering: true)
    await checkAll()
    guard result.failure == nil else { return }
    note("\(other.name): background and back, nothing played since its sync")
    process.application.enterBackground()
    for save in started(other) { finish(other, save) }
    await settle(other)
    await foreground(other)
  }

  private func play(_ device: SimulatedDevice, frames: Int) {
    guard let process = device.process else { return }
    guard !process.isPaused else {
      return note("\(device.name): held (\(process.isCatchingUp ? "catching up" : "paused")); no frames played")
    }
    var model = process.model
    // The frames' draws, in the order they were always drawn: the steps are the replay's inputs.
    var steps = (0..<frames).map { _ in SimulatedReplays.Step(draw: Int64(random.below(1000))) }
    ledgerEntries += 1
    steps[frames - 1].ledgerEntry = ledgerEntries
    // The creatures move on their level; now and then the player goes down to a new one.
    let descends = random.chance(15)
    if descends {
      steps[frames - 1].descends = true
      steps[frames - 1].creatures = Int64(2 + random.below(4))
    } else if !model.creatures.isEmpty {
      steps[frames - 1].moved = Int64(random.below(model.creatures.count))
      steps[frames - 1].position = Int64(random.below(1000))
    }
    let replay = device.recorder(continuingFrom: model, note: note) { met(.replayWentOn, by: device) }
    for step in steps {
      SimulatedReplays.step(&model, step, hidden: hidden?.next() ?? 0)
      replay?.record(step, reaching: model)
    }
    process.model = model
    process.didStep()
    note(
      "\(device.name): play \(frames) frames (frame \(model.frame)\(descends ? ", down to depth \(model.depth)" : ""))")
  }

  /// A save the coordinator started: its handle, its snapshot's number and digest, and the
  /// SHA-256 of the file it wrote, read the moment it was reported durable.
  private struct PendingSave {
    var handle: SaveHandle
    var reason: SaveReason
    var number: Int
    var digest: String
    var file: FileDigest
  }

  /// The saves the device's coordinator started since the last look, numbered in the order
  /// their snapshots were taken.
  private func started(_ device: SimulatedDevice) -> [PendingSave] {
    guard let process = device.process else { return [] }
    return process.takeStartedSaves().map { save in
      snapshot += 1
      return PendingSave(
        handle: save.handle, reason: save.reason, number: snapshot, digest: save.digest, file: save.file)
    }
  }

  /// Asks the coordinator for a save now; nil when it started none (a failed restore holds it).
  private func startSave(_ device: SimulatedDevice, _ reason: SaveReason) -> PendingSave? {
    guard let process = device.process else { return nil }
    let handle = process.saveNow(reason)
    guard let save = started(device).last else {
      if case .failure(let error)? = handle.result { note("\(device.name): \(reason) refused: \(error.kind)") }
      return nil
    }
    return save
  }

  /// Waits for a save and records what it reported.
  private func finish(_ device: SimulatedDevice, _ save: PendingSave) {
    let handle = save.handle
    let number = save.number
    let reason = save.reason.rawValue
    switch handle.waitForResult() {
    case .success(let receipt):
      switch receipt.outcome {
      case .written:
        guard let sha = save.file.value else {
          return fail(.durableSaveKept, "a durable save's file was not there when reported")
        }
        checker.recordDurable(
          device: device,
          save: .init(generation: receipt.generation, sha256: sha, schema: device.build.schema, snapshot: number),
          digest: save.digest)
        if let bytes = device.disk.contents(of: device.path(of: receipt.generation)), sha256Hex(bytes) == sha,
          let entries = checker.ledger(of: bytes)
        {
          checker.required(entries)
        }
        note("\(device.name): \(reason) snapshot \(number) durable as generation \(receipt.generation)")
      case .unchanged:
        note("\(device.name): \(reason) snapshot \(number) unchanged (generation \(receipt.generation))")
      case .superseded:
        note("\(device.name): \(reason) snapshot \(number) superseded (generation \(receipt.generation))")
      }
    case .failure(let error):
      note("\(device.name): \(reason) snapshot \(number) failed: \(error.kind)")
    }
  }

  /// Waits for the device's uploads (the coordinator's sync queued them) and looks at its events.
  @discardableResult
  private func settle(_ device: SimulatedDevice) async -> [CloudEvent] {
    guard let process = device.process else { return [] }
    let cloud = process.cloud
    await waitOnGameThread("\(device.name)'s sync") { await cloud.settle() }
    process.application.update()
    return await collectEvents(device)
  }

  /// Issue 43 case 6: a catch-up that found the cloud's head of a newer schema (or format) than
  /// this build reads, with nothing of the device's own unsynced (the sync is behind), holds the
  /// game as one device does when its newest generation is such a save: paused, with the
  /// choices, loudly. Never playing on as if nothing were there.
  private func checkHeldBehindNewerHead(_ device: SimulatedDevice, _ events: [CloudEvent], after: String) {
    guard let process = device.process else { return }
    let refusedNewer = events.contains { event in
      // A download refused before anything local changed, for its schema or format.
      guard case .refused(let error) = event, error.kind == .refusedLocally else { return false }
      return [.newerSchema, .newerFormat].contains(error.fileError?.kind)
    }
    guard refusedNewer, device.sync?.status.state == .behind else { return }
    checker.checks += 1
    guard let failure = process.restoreFailure, process.isPaused else {
      return fail(
        .heldWhenUnreadable,
        "\(device.name): \(after): the cloud's head is of a newer schema and the game plays on, not held")
    }
    note("\(device.name): \(after): held behind the cloud's newer head (\(failure.error.kind))")
    if failure.error.kind == .newerSchema { met(.heldBehindNewerSchemaHead, by: device) }
  }

  private func save(_ device: SimulatedDevice, _ reason: SaveReason) async {
    guard let started = startSave(device, reason) else { return }
    finish(device, started)
    device.process?.collectFinishedSaves()
    checkHeldAfterRefusal(device, started.handle)
    await settle(device)
  }

  /// A save refused because the slot holds a save this build cannot read: every later save
  /// would be refused too, so the game must be held, never left playing on unsaved.
  private func checkHeldAfterRefusal(_ device: SimulatedDevice, _ handle: SaveHandle) {
    guard case .failure(let error)? = handle.result, error.kind == .newerSaveInSlot, let process = device.process
    else { return }
    checker.checks += 1
    if process.restoreFailure == nil || !process.isPaused {
      fail(.heldWhenUnreadable, "\(device.name): a save was refused (newerSaveInSlot) and the game plays on unsaved")
    }
  }

  /// Quits: the coordinator saves as the application terminates, within the budget.
  private func quit(_ device: SimulatedDevice) async {
    guard let process = device.process else { return }
    process.application.terminate()
    for save in started(device) { finish(device, save) }
    await settle(device)
    if let failure = device.quit() { note("\(device.name): the replay's last batch could not be written: \(failure)") }
  }

  /// Saves, uploads and catch-ups interleaving, under the seed's order: an autosave's upload is
  /// held on the line; meanwhile, in an order the seed draws, the game plays and saves again
  /// (the store writes while the upload is in flight, and its upload queues behind it),
  /// another device syncs (the server moves under the held upload), and the game goes to the
  /// background and comes back (its catch-up waits behind the upload); the line lets the upload
  /// go at a step the seed draws. Every step waits for the one before to reach its point, so a
  /// seed replays the same interleaving.
  private func interleave(_ device: SimulatedDevice) async {
    guard let process = device.process, !process.isPaused, device.network.isOnline, server.isUp,
      process.cloud.status.state != .conflict
    else { return play(device, frames: 1 + random.below(60)) }
    play(device, frames: 1 + random.below(60))
    let reached = DispatchSemaphore(value: 0)
    device.network.holdNextUpload(notify: reached)
    guard let first = startSave(device, .autosave) else { return device.network.releaseHold() }
    finish(device, first)
    guard uploadReachesTheLine(device, reached) else {
      result.skippedChecks += 1
      return note("\(device.name): the autosave sent nothing to hold")
    }
    note("\(device.name): autosave snapshot \(first.number)'s upload is in flight")
    var held = true
    let steps = 1 + random.below(3)
    let releaseAt = random.below(steps + 1)
    var returned = false
    for step in 0..<steps {
      if held, step == releaseAt {
        held = false
        await letUploadGo(device, caughtUp: returned)
      }
      switch random.below(3) {
      case 0:
        play(device, frames: 1 + random.below(60))
        if let save = startSave(device, .autosave) { finish(device, save) }
      case 1:
        let others = devices.filter { $0 !== device && $0.isRunning && $0.network.isOnline }
        guard !others.isEmpty else { continue }
        let other = others[random.below(others.count)]
        play(other, frames: 1 + random.below(60))
        note("\(other.name): sync while \(device.name)'s upload is \(held ? "in flight" : "done")")
        await save(other, .manual)
        await synchronize(other)
      default:
        guard !returned else { continue }
        returned = true
        note("\(device.name): background and back while its upload is \(held ? "in flight" : "done")")
        process.application.enterBackground()
        for save in started(device) { finish(device, save) }
        process.application.enterForeground()  // while held, its catch-up waits behind the upload
        checkRestores(device, after: "foreground", coldStart: false)  // before the state moves on
        if !held {
          process.waitForCatchUp()
          await settle(device)
          checkRestores(device, after: "catch-up", coldStart: false)
        }
      }
      // Once the line let go, what the step queued runs to its end before the next step.
      if !held { await settle(device) }
    }
    if held { await letUploadGo(device, caughtUp: returned) }
  }

  /// Waits until the device's next upload is held on the line (true), or its sync has sent
  /// everything it had without one (false: the hold is disarmed). No clock: whichever comes.
  private func uploadReachesTheLine(_ device: SimulatedDevice, _ reached: DispatchSemaphore) -> Bool {
    guard let cloud = device.sync else {
      device.network.releaseHold()
      return false
    }
    Task.detached {
      await cloud.settle()  // after the held upload is let go, or at once when nothing was sent
      reached.signal()
    }
    reached.wait()
    if device.network.isHolding { return true }
    device.network.releaseHold()
    return false
  }

  /// The line lets the held upload go, and the device's sync runs to its end (a catch-up
  /// queued behind it included) before anything else happens.
  private func letUploadGo(_ device: SimulatedDevice, caughtUp returned: Bool) async {
    device.network.releaseHold()
    note("\(device.name): the line lets the upload go")
    guard let process = device.process else { return }
    if returned { process.waitForCatchUp() }
    await settle(device)
    if returned { checkRestores(device, after: "catch-up", coldStart: false) }
  }

  /// The game's signing key in the runs that sign.
  static let signingKey = SigningKey(bytes: Array("stasis-sim's key, 32 bytes long!".utf8))

  /// A player's tool edits the newest save while the game is not running, and writes it back
  /// without its signature. In a slot that holds signed saves it must never load.
  private func stripSignature(_ device: SimulatedDevice) async {
    guard device.signing.current != nil else { return note("\(device.name): nothing to edit") }
    if device.isRunning {
      note("\(device.name): quit")
      await quit(device)
    }
    guard let newest = device.generationsOnDisk().first,
      let bytes = device.disk.contents(of: device.path(of: newest)), let edited = GameBuild.editedUnsigned(bytes)
    else { return note("\(device.name): nothing to edit") }
    device.disk.overwrite(device.path(of: newest), with: edited)
    // The player replaced it: the checker lets go of its bytes, and no device may load these.
    checker.discarded[device.name, default: []].insert(newest)
    checker.tampered[device.name, default: []].insert(newest)
    checker.stripped.insert(sha256Hex(edited))
    result.faults += 1
    note("\(device.name): a tool edits generation \(newest) and writes it back unsigned")
    met(.toolStrippedSignature, by: device)
  }

  /// A quit while an upload is in flight: an autosave's upload is held on the line, the game
  /// quits (its save and its upload queue behind the held one), and then either the line lets
  /// it go or the budget expires first. The quit's save must reach the server, or still wait
  /// in the sync record for the next launch: never be dropped.
  private func quitWithUploadInFlight(_ device: SimulatedDevice) async {
    guard let process = device.process, !process.isPaused, device.network.isOnline, server.isUp,
      process.cloud.status.state != .conflict
    else { return await quit(device) }
    play(device, frames: 1 + random.below(60))
    let reached = DispatchSemaphore(value: 0)
    device.network.holdNextUpload(notify: reached)
    guard let autosave = startSave(device, .autosave) else {
      device.network.releaseHold()
      return await quit(device)
    }
    finish(device, autosave)
    guard uploadReachesTheLine(device, reached) else {
      result.skippedChecks += 1
      note("\(device.name): the autosave sent nothing to hold; a plain quit")
      return await quit(device)
    }
    play(device, frames: 1 + random.below(60))
    let expires = random.chance(40)
    note(
      "\(device.name): quit with an upload in flight; \(expires ? "the budget expires first" : "the line lets it go")")
    if !expires { met(.quitWithUploadLetGo, by: device) }
    process.application.terminate()
    let saves = started(device)
    for save in saves { finish(device, save) }
    let quitSave = saves.last.flatMap { save -> (generation: Int, sha: String)? in
      guard case .success(let receipt)? = save.handle.result, receipt.outcome == .written, let sha = save.file.value
      else { return nil }
      return (receipt.generation, sha)
    }
    if expires {
      process.clock.advance(by: process.application.configuration.backgroundBudget + .seconds(1))
      process.application.update()  // the expiration handlers cancel the uploads
    }
    device.network.releaseHold()
    await settle(device)
    if let quitSave {
      checker.checks += 1
      let arrived = device.network.committed.contains { $0.sha256 == quitSave.sha }
      let waits = process.cloud.status.pending > 0 || process.cloud.status.state == .conflict
      if !arrived && !waits {
        fail(
          .quitUploadGoesUp,
          "quit upload lost: \(device.name)'s quit save, generation \(quitSave.generation), neither reached the "
            + "server nor waits in the sync record; the sync is \(process.cloud.status.state), its last event: "
            + (process.cloud.status.events.last.map { "\($0)" } ?? "none"))
      }
      if !expires, !arrived, process.cloud.status.state != .conflict, server.isUp {
        fail(
          .quitUploadGoesUp,
          "quit upload: \(device.name)'s quit save did not go up although the line let it go and nothing conflicted")
      }
    }
    if let failure = device.quit() { note("\(device.name): the replay's last batch could not be written: \(failure)") }
  }

  /// An autosave held mid-write by the disk while the game goes on and saves again, and
  /// perhaps goes to the background (whose save then waits behind the held one).
  private func overlap(_ device: SimulatedDevice) async {
    guard let process = device.process, !process.isPaused else { return }
    play(device, frames: 1 + random.below(30))
    let reached = DispatchSemaphore(value: 0)
    device.disk.holdNextWrite(where: SimulatedDevice.isGenerationWrite, notify: reached)
    process.holdsUploads = true
    guard let first = startSave(device, .autosave) else {
      device.disk.releaseHold()
      return process.releaseUploads()
    }
    first.handle.onCompletion { _ in reached.signal() }
    reached.wait()
    guard device.disk.isHolding else {
      device.disk.releaseHold()
      finish(device, first)
      process.releaseUploads()
      await settle(device)
      return
    }
    note("\(device.name): autosave snapshot \(first.number) held mid-write by the disk")
    var later: [PendingSave] = []
    for _ in 0..<(1 + random.below(3)) {
      play(device, frames: 1 + random.below(30))
      if let next = startSave(device, .autosave) { later.append(next) }
      if process.store.heldSnapshots(of: SimulatedDevice.slot) > 2 {
        fail(.heldSnapshots, "held snapshots: \(process.store.heldSnapshots(of: SimulatedDevice.slot)) (at most 2)")
      }
    }
    let backgrounded = random.chance(50)
    if backgrounded {
      note("\(device.name): background while the write is held")
      process.application.enterBackground()
      later += started(device)
    }
    if random.chance(25) {
      let lost = device.kill(&random)
      result.kills += 1
      note("\(device.name): SIGKILL while the write is held (\(lost) unflushed changes lost)")
      met(.killedWhileWriteHeld, by: device)
      for save in [first] + later { _ = save.handle.waitForResult() }
      return
    }
    device.disk.releaseHold()
    for save in [first] + later { finish(device, save) }
    process.releaseUploads()
    await settle(device)
    if backgrounded { await foreground(device) }
  }

  /// Sent to the background: the coordinator saves within a budget that runs out at a random
  /// point or not at all; then killed while suspended, or back to the foreground.
  private func background(_ device: SimulatedDevice) async {
    guard let process = device.process, !process.isPaused else { return }
    play(device, frames: 1 + random.below(30))
    let expires = random.chance(50)
    note("\(device.name): background, the budget \(expires ? "expires mid-save" : "lasts")")
    let reached = DispatchSemaphore(value: 0)
    if expires { device.disk.holdNextWrite(where: SimulatedDevice.isGenerationWrite, notify: reached) }
    process.application.enterBackground()
    let saves = started(device)
    if expires {
      if let save = saves.last {
        save.handle.onCompletion { _ in reached.signal() }
        reached.wait()
      }
      process.clock.advance(by: process.application.configuration.backgroundBudget + .seconds(1))
      process.application.update()  // the expiration handlers cancel the save and its upload
      device.disk.releaseHold()
    }
    for save in saves { finish(device, save) }
    await settle(device)
    // The replay's batch, on the way to the background: a kill while suspended loses none of it.
    if let failure = device.flushReplay() {
      note("\(device.name): the replay's batch could not be written: \(failure)")
    }
    if random.chance(25) {
      let lost = device.kill(&random)
      result.kills += 1
      return note("\(device.name): SIGKILL while suspended (\(lost) unflushed changes lost)")
    }
    await foreground(device)
  }

  /// Back to the foreground: the coordinator restores the background save (or keeps memory)
  /// and holds the game while the cloud catches up.
  private func foreground(_ device: SimulatedDevice) async {
    guard let process = device.process else { return }
    process.application.enterForeground()
    process.waitForCatchUp()
    let events = await settle(device)
    checkRestores(device, after: "foreground", coldStart: false)
    checkHeldBehindNewerHead(device, events, after: "foreground")
  }

  /// A new process: the application launches with the slot to restore, the coordinator
  /// restores it (or holds the game on a failure, which the player answers), and the cloud
  /// catches up before the first step.
  private func coldStart(_ device: SimulatedDevice, newGame: Bool = false) async {
    let process = device.start()
    if newGame {
      // A new game keeps the slot's newest save until it is discarded, and saves beside it.
      checker.keepNewest(device, why: "the newest save before a new game")
      device.unreadableNewest = .saveAlongside
      process.application.launch(options: LaunchOptions())
      process.waitForCatchUp()
      await settle(device)
      note("\(device.name): a new game (build \(device.build.rawValue))")
      return met(.newGame, by: device)
    }
    process.application.launch(options: LaunchOptions(restoreSlot: SimulatedDevice.slot))
    var events: [CloudEvent] = []
    if process.restoreFailure == nil {
      // The launch's one load outcome waits for the catch-up when the local restore failed,
      // and the catch-up runs on the sync's own task: whether it has ended by now is the
      // threads' to say. Wait for it, so the trace does not depend on them.
      process.waitForCatchUp()
      events = await settle(device)
    }
    checkRestores(device, after: "cold start", coldStart: true)
    checkHeldBehindNewerHead(device, events, after: "cold start")
    if let failure = process.restoreFailure { answer(device, failure) }
    process.waitForCatchUp()
    await settle(device)
    checkRestores(device, after: "cold start: catch-up", coldStart: false)
  }

  /// The player answers a failed restore: play on from the older generation, or start over.
  private func answer(_ device: SimulatedDevice, _ failure: RestoreFailure) {
    guard let process = device.process else { return }
    device.unreadableNewest = .saveAlongside
    // Held by the cloud's newer head while holding a generation, the choices are to play on
    // or to wait: a start-over is refused (the draw is made either way, so the seed's stream stays).
    let choice: RestoreChoice =
      failure.olderGeneration.map {
        random.chance(80) || failure.reason == .newerInCloud ? .loadGeneration($0) : .startOver
      }
      ?? .startOver
    switch choice {
    case .loadGeneration(let generation):
      note("\(device.name): restore failed (\(failure.error.kind)); the player plays on from generation \(generation)")
      if failure.error.kind == .unsigned { met(.unsignedRefusedPlayedOn, by: device) }
    case .startOver:
      note("\(device.name): restore failed (\(failure.error.kind)); the player starts over")
      checker.keepNewest(device, why: "the newest save before a start-over")
    }
    do throws(SaveFileError) {
      try process.resolveRestoreFailure(choice)
    } catch {
      note("\(device.name): the answer failed (\(error.kind)); the player starts over")
      try? process.resolveRestoreFailure(.startOver)
    }
    checker.checks += 1
    if process.restoreFailure != nil {
      fail(.heldWhenUnreadable, "\(device.name): the game is still held after the player answered")
    }
    checkRestores(device, after: "the answer", coldStart: false)
  }

  /// Checks each restore the coordinator reported: the restored state's digest, and on a cold
  /// start that it is the newest durable generation unless the load says what it skipped.
  private func checkRestores(_ device: SimulatedDevice, after: String, coldStart: Bool) {
    guard let process = device.process else { return }
    process.collectFinishedSaves()
    let newestDurable =
      (checker.durable[device.name] ?? []).filter {
        !(checker.discarded[device.name] ?? []).contains($0.generation) && $0.schema <= device.build.schema
      }.map(\.generation).max() ?? 0
    let events = process.takeEvents()
    for (index, event) in events.enumerated() {
      switch event {
      case .restored(let generation, let summary, let skipped, _):
        note("\(device.name): \(after): restored generation \(generation) (frame \(summary.frame))")
        checker.checks += 1
        if let sha = device.sha256(of: generation), checker.stripped.contains(sha) {
          fail(
            .unsignedNeverLoads,
            "\(device.name): an unsigned file loaded in a signed slot (generation \(generation), edited by a tool)")
        }
        if index == events.lastIndex(where: { if case .restored = $0 { true } else { false } }) {
          checkDigest(device, generation: generation, model: process.model)
          checkWorld(device, generation: generation, process: process, coldStart: coldStart)
        }
        checker.checks += 1
        if coldStart, generation < newestDurable, skipped.isEmpty, device.sha256(of: newestDurable) != nil {
          fail(
            .coldStartRestoresNewest,
            "cold start: \(device.name) restored generation \(generation), not the newest durable \(newestDurable)")
        }
      case .loadFailed(let error):
        note(
          "\(device.name): \(after): \(error.kind == .notFound ? "nothing to restore, a new game" : "load failed (\(error.kind))")"
        )
      case .keptMemory(let reason):
        note("\(device.name): \(after): kept the in-memory state (\(reason))")
      case .held(.restoreFailure(let error), _):
        note("\(device.name): \(after): held (\(error.kind))")
      case .held(.catchingUp, _):
        continue
      case .saved, .saveFailed:
        continue
      }
    }
  }

  /// A generation the sync wrote (a download, a resolved or merged conflict) carries the
  /// game's own summary of the state it holds, never another state's.
  private func checkSummary(_ device: SimulatedDevice, generation: Int) {
    guard let bytes = device.disk.contents(of: device.path(of: generation)),
      let document = try? SaveFileFormat.decode(bytes, path: "sim"), let model = GameBuild.model(ofFile: bytes)
    else {
      result.skippedChecks += 1
      return
    }
    checker.checks += 1
    if model.creaturesInWalls > 0 {
      return fail(
        .mergedWorldSeen,
        "world: generation \(generation) on \(device.name) has \(model.creaturesInWalls) creatures in walls "
          + "(depth \(model.depth), creatures \(model.creatures)): a merge built a world no device saw")
    }
    let expected = GameModel.summary(of: model)
    let summary = document.summary
    if summary.frame != expected.frame || summary.playTime != expected.playTime || summary.progress != expected.progress
    {
      fail(
        .mergedSummary,
        "summary: generation \(generation) on \(device.name) says frame \(summary.frame), but its state is at frame "
          + "\(model.frame)")
    }
  }

  /// A world build's restore rebuilt the saved worlds entity by entity (``SimWorlds/differences(from:)``).
  private func checkWorld(_ device: SimulatedDevice, generation: Int, process: any DeviceProcess, coldStart: Bool) {
    guard device.build == .v3World else { return }
    guard let bytes = device.disk.contents(of: device.path(of: generation)),
      let document = try? SaveFileFormat.decode(bytes, path: "sim"),
      let found = process.worldDifferences(from: document)
    else {
      result.skippedChecks += 1
      return
    }
    checker.checks += 1
    if let found {
      return fail(.worldRestoredByEntity, "world: \(device.name) restored generation \(generation), but \(found)")
    }
    if coldStart, device.startedAfterKill, !(process.model.creatures.isEmpty) {
      met(.worldRestoredAfterKill, by: device)
    }
  }

  private func checkDigest(_ device: SimulatedDevice, generation: Int, model: GameModel) {
    // A generation this run never saw saved (a download) has no digest to compare with.
    guard let sha = device.sha256(of: generation), let expected = checker.digests[sha] else {
      result.skippedChecks += 1
      return
    }
    checker.checks += 1
    if expected != model.digest {
      fail(
        .restoredStateIsSaved,
        "digest: \(device.name) restored generation \(generation) whose state differs from the state saved")
    }
  }

  /// Syncs the device; with `answering`, a conflict its policy leaves to the player (the
  /// base is gone) is answered as a player would, by the most recent side.
  private func synchronize(_ device: SimulatedDevice, answering: Bool = false) async {
    guard let sync = device.sync else { return }
    guard var report = await waitOnGameThread("\(device.name)'s sync", { await sync.synchronize() }) else { return }
    await collectEvents(device)
    if answering, report.state == .conflict, report.error == nil {
      note("\(device.name): the player settles the pending conflict: recent")
      let resolve: @Sendable () async -> SyncReport = { await sync.resolve(with: .mostRecent) }
      guard let resolved = await waitOnGameThread("\(device.name)'s resolution", resolve) else { return }
      report = resolved
      await collectEvents(device)
    }
    if let generation = report.restore {
      note("\(device.name): sync wrote generation \(generation); restoring it")
      checkSummary(device, generation: generation)
      _ = device.process?.restoreSlot()
      checkRestores(device, after: "sync", coldStart: false)
    } else {
      let error = report.error.map { " (\($0.kind): \($0.message))" } ?? ""
      note("\(device.name): sync: \(report.state?.rawValue ?? "unknown")\(error)")
      if let refusal = report.error, refusal.kind == .refusedLocally, refusal.fileError?.kind == .newerSchema {
        met(.refusedNewerSchemaHead, by: device)
      }
    }
  }

  @discardableResult
  private func collectEvents(_ device: SimulatedDevice) async -> [CloudEvent] {
    let events = device.takeEvents()
    // An upload whose 201 was lost, taken as the device's own when it meets it on the server.
    let answered = Set(device.network.acknowledged.map(\.revision))
    for case .uploaded(_, let revision, _) in events where !answered.contains(revision) {
      note("\(device.name): r\(revision), whose answer was lost, recognised as its own")
      met(.lostAnswerRecognised, by: device)
    }
    let conflicts = events.compactMap { event -> ConflictReport? in
      if case .conflict(let report) = event { report } else { nil }
    }
    for (index, report) in conflicts.enumerated() {
      result.conflicts += 1
      if report.history == .unrelated || report.history == .newGame {
        result.unrelated += 1
        met(report.history == .newGame ? .newHistoryMet : .unrelatedHistories, by: device)
      }
      note("\(device.name): conflict: \(report.summary)")
      checker.checks += 1
      let own = device.network.committed.contains { $0.revision == report.theirs }
      if own { fail(.noSelfConflict, "self-conflict: \(device.name) conflicted with its own upload r\(report.theirs)") }
      if report.outcome == .merged {
        result.merges += 1
        if device.build == .v3World { met(.worldMerged, by: device) }
        await checkMergedLedger(device, report, isLast: index == conflicts.count - 1)
      }
    }
    return events
  }

  /// A merge combined the two sides: the declared union keeps every ledger entry of both (a
  /// ledger only grows, so a base both continue holds none that either lacks). An entry
  /// missing is a merge against a base one side does not continue.
  private func checkMergedLedger(_ device: SimulatedDevice, _ report: ConflictReport, isLast: Bool) async {
    let ours = device.disk.contents(of: device.path(of: report.ours)).flatMap(GameBuild.model(ofFile:))
    let theirs = await server.file(slot: SimulatedDevice.slot.name, revision: report.theirs).flatMap(
      GameBuild.model(ofFile:))
    let merged: GameModel? =
      if let revision = report.revision {
        await server.file(slot: SimulatedDevice.slot.name, revision: revision).flatMap(GameBuild.model(ofFile:))
      } else if isLast, let newest = device.generationsOnDisk().first {
        device.disk.contents(of: device.path(of: newest)).flatMap(GameBuild.model(ofFile:))
      } else {
        nil
      }
    guard let ours, let theirs, let merged else {
      result.skippedChecks += 1  // a side gone (pruned, discarded, the server down): nothing to compare
      return
    }
    checker.checks += 1
    let lost = Set(ours.ledger).union(theirs.ledger).subtracting(merged.ledger)
    if !lost.isEmpty {
      fail(
        .mergeKeepsLedger,
        "ledger: the merge on \(device.name) of generation \(report.ours) and r\(report.theirs) lost \(lost.count) "
          + "entries of its two sides (base r\(report.base.map(String.init) ?? "none"))")
    }
  }

  private func discard(_ device: SimulatedDevice) async {
    guard let store = device.store else { return }
    let kept = store.keptGenerations(of: SimulatedDevice.slot).map(\.generation)
    let unreadable = device.generationsOnDisk().filter { generation in
      (checker.durable[device.name] ?? []).contains { $0.generation == generation && $0.schema > device.build.schema }
    }
    if let generation = (kept + unreadable).sorted().first, generation != device.generationsOnDisk().first {
      let entries = device.disk.contents(of: device.path(of: generation)).flatMap { checker.ledger(of: $0) } ?? []
      do throws(SaveFileError) {
        try store.discard(generation: generation, slot: SimulatedDevice.slot)
        checker.discarded[device.name, default: []].insert(generation)
        release(entries)
        note("\(device.name): discard generation \(generation)")
      } catch {
        note("\(device.name): discard generation \(generation) failed: \(error.kind)")
      }
      return
    }
    guard let loser = checker.losers.subtracting(checker.discardedRevisions).sorted().first, server.isUp,
      device.network.isOnline
    else { return note("\(device.name): nothing to discard") }
    let client = CloudClient(
      credentials: CloudCredentials(url: "sim://server", token: InProcessServer.token, device: device.name),
      transport: device.network)
    // Now and then the discard's own answer is lost after the server carried it out.
    let losesAnswer = random.chance(30)
    if losesAnswer {
      device.network.loseAnswers(1)
      note("\(device.name): the discard's answer will be lost")
    }
    // What only the loser held is let go with it, once it is gone (its answer lost or not).
    let entries =
      await server.file(slot: SimulatedDevice.slot.name, revision: Int(loser)).flatMap { checker.ledger(of: $0) }
      ?? []
    do throws(CloudError) {
      try await client.discard(slot: SimulatedDevice.slot, revision: Int(loser))
      checker.discardedRevisions.insert(loser)
      note("\(device.name): discard the server's loser r\(loser)")
    } catch {
      // An answer lost after the server carried it out: the revision may well be gone.
      if error.kind == .offline, !error.neverSent { checker.discardedRevisions.insert(loser) }
      note("\(device.name): discard r\(loser) failed: \(error.kind)")
      if losesAnswer, error.kind == .offline, !error.neverSent { met(.discardAnswerLost, by: device) }
    }
    if checker.discardedRevisions.contains(loser) { release(entries) }
  }

  /// A discard let go of `entries` (the next durable save that holds one requires it again).
  private func release(_ entries: [Int64]) {
    checker.releasedEntries.formUnion(entries)
  }

  /// Everyone online, the server up, no new play: the devices reach the same head.
  /// Every replay of every device plays back through the game's step to every recorded
  /// digest and keyframe (``Invariant/replaysVerify``): after kills, suspends, cold starts,
  /// restores and merges, each replay is one line of steps the game can take again.
  private func checkReplays() {
    for device in devices {
      if let failure = device.flushReplay() {
        note("\(device.name): the replay's batch could not be written: \(failure)")
      }
      for (name, bytes) in device.replaysOnDisk() {
        checker.checks += 1
        let hidden = self.hidden
        let verifier = ReplayVerifier(codec: SimulatedReplays.codec, digest: SimulatedReplays.scope) {
          (model: inout GameModel, step: SimulatedReplays.Step) in
          SimulatedReplays.step(&model, step, hidden: hidden?.next() ?? 0)
        }
        do {
          let file = try ReplayFile(bytes: bytes, path: "\(device.name):\(name)")
          let verification = try verifier.verify(file)
          if let divergence = verification.divergence {
            return fail(
              .replaysVerify,
              "\(device.name)'s replay \(name) (frames \(file.manifest.startTick) to \(file.manifest.endTick)) does not "
                + "play back: \(divergence.report.summary)")
          }
          result.replaysVerified += 1
          result.replayedTicks += Int(verification.ticks)
        } catch {
          return fail(.replaysVerify, "\(device.name)'s replay \(name) does not read: \(error.description)")
        }
      }
    }
    note("replays: \(result.replaysVerified) verified, \(result.replayedTicks) frames played back")
  }

  private func converge() async {
    note("converge: all online, no new play")
    do { try await server.dieInsideNextUpload(false) } catch {
      return fail(.harness, "the fault could not be disarmed: \(error)")
    }
    if !server.isUp {
      do { try await server.start() } catch { return fail(.harness, "the server could not restart: \(error)") }
    }
    for device in devices {
      device.network.isOnline = true
      device.disk.clearFaults()
      if !device.isRunning { await coldStart(device) }
    }
    // Unsaved progress is saved first (as a quit would): what is only in memory cannot sync.
    for device in devices { await save(device, .manual) }
    let builds = Set(devices.map(\.build.schema))
    // A head uploaded by a newer build is refused by older ones (named, never overwritten), so
    // the devices cannot meet until they update: nothing to compare.
    let headSchema = await server.headSchema(slot: SimulatedDevice.slot.name) ?? 0
    let comparable =
      builds.count == 1 && headSchema <= Int64(builds.first ?? 0)
      && devices.allSatisfy { $0.unreadableNewest == .refuse }
    let rounds = 5
    for round in 1...rounds {
      for device in devices { await synchronize(device, answering: true) }
      guard comparable else { continue }
      let digests = devices.map { $0.model?.digest ?? "" }
      if Set(digests).count == 1 { return note("converge: the same state after \(round) rounds") }
    }
    guard comparable else {
      return note(
        "converge: the builds differ (or the head is of a newer schema, or one plays alongside saves it cannot read); not compared"
      )
    }
    checker.checks += 1
    let frames = devices.map { "\($0.name) at frame \($0.model?.frame ?? -1)" }.joined(separator: ", ")
    fail(.devicesConverge, "convergence: after \(rounds) rounds of sync the devices differ: \(frames)")
  }
}

/// The simulated wall clock, in milliseconds since the Unix epoch: the devices' stores (save
/// headers) and timers, and the server's upload times, read it; it jumps back and forward when
/// told to. A `WallClock` like the system's, read to the millisecond.
final class SimulatedWallClock: WallClock {
  private let milliseconds = Mutex<Int64>(1_800_000_000_000)

  /// The time now.
  var read: @Sendable () -> Int64 { { self.milliseconds.withLock { $0 } } }

  /// Moves the clock by `amount` milliseconds (negative: back).
  func advance(by amount: Int64) { milliseconds.withLock { $0 += amount } }

  /// The clock as a date, for the timers.
  func now() -> Date { Date(timeIntervalSince1970: Double(read()) / 1000) }

  /// The clock's own count, exactly.
  func unixMilliseconds() -> Int64 { read() }
}

/// The SHA-256 of a save's file, set on the save's worker when it is reported durable.
final class FileDigest: Sendable {
  private let sha = Mutex<String?>(nil)
  private let done = DispatchSemaphore(value: 0)

  /// The SHA-256, once the save's completion ran (nil: nothing was written).
  var value: String? {
    done.wait()
    done.signal()
    return sha.withLock { $0 }
  }

  func set(_ value: String?) {
    sha.withLock { $0 = value }
    done.signal()
  }
}
