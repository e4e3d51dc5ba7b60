import Logging
import Stasis
import StasisCloud
import StasisTesting

/// A build's game as its process's ``SaveCoordinator`` sees it, and as the simulation plays it:
/// through the build-independent model.
@MainActor
protocol DeviceGame: SaveableGame {
  /// The game's state as the model: read, and played to.
  var model: GameModel { get set }
  /// The digest of the model the latest snapshot was taken of: the save started next is of it.
  var snapshotDigest: String { get }
  /// For a game of entity worlds, what its restore of `document` failed to rebuild, entity by
  /// entity (nil when it holds); nil for any other game.
  func worldDifferences(from document: SaveDocument) -> String??
}

/// The simulated game as a ``SaveCoordinator`` sees it: a model in memory whose snapshot is
/// the running build's state type.
@MainActor
final class CoordinatedGame<State: BuildState>: DeviceGame {
  var model = GameModel()
  var isPaused = false
  private(set) var snapshotDigest = ""

  func snapshot() -> State {
    snapshotDigest = model.digest
    return State(model)
  }

  func restore(_ state: State) throws { model = state.model }

  func summary(of state: State) throws -> SaveSummary { GameModel.summary(of: state.model) }

  func worldDifferences(from document: SaveDocument) -> String?? { nil }
}

/// The world build's game: two entity worlds and the progress, played through the model.
@MainActor
final class WorldGame: DeviceGame {
  let worlds: SimWorlds
  let codec: SaveCodec<StateV3>
  var isPaused = false
  private(set) var snapshotDigest = ""

  init(worlds: SimWorlds, codec: SaveCodec<StateV3>) {
    self.worlds = worlds
    self.codec = codec
  }

  var model: GameModel {
    get { worlds.model }
    set { worlds.apply(newValue) }
  }

  func snapshot() -> StateV3 {
    snapshotDigest = worlds.model.digest
    return worlds.snapshot()
  }

  func restore(_ state: StateV3) throws { try worlds.restore(state) }

  func summary(of state: StateV3) throws -> SaveSummary { GameModel.summary(of: state.model ?? GameModel()) }

  func worldDifferences(from document: SaveDocument) -> String?? {
    guard let saved = try? codec.state(from: document) else { return .some("the restored save does not decode") }
    return .some(worlds.differences(from: saved))
  }
}

/// A save the device's coordinator started: its handle, why, the digest of its snapshot, and
/// the SHA-256 of the file it wrote (read on the save's worker the moment it was durable).
struct StartedSave {
  var handle: SaveHandle
  var reason: SaveReason
  var digest: String
  var file: FileDigest
}

/// One running process of the game on a device, whatever its build: an `Application` on a
/// manual clock, a `SaveCoordinator` as its delegate, and the cloud through `CloudSync`.
/// The simulation drives it as a game loop would.
@MainActor
protocol DeviceProcess: AnyObject {
  var model: GameModel { get set }
  var isPaused: Bool { get }
  var application: Application { get }
  var clock: ManualClock { get }
  var store: SaveStore { get }
  var cloud: CloudSync { get }
  var restoreFailure: RestoreFailure? { get }
  var isCatchingUp: Bool { get }
  /// For a game of entity worlds, what its restore of `document` failed to rebuild (nil when
  /// it holds); nil for any other game.
  func worldDifferences(from document: SaveDocument) -> String??
  /// Tells the coordinator the model has stepped.
  func didStep()
  func saveNow(_ reason: SaveReason) -> SaveHandle
  func restoreSlot() -> Bool
  func resolveRestoreFailure(_ choice: RestoreChoice) throws(SaveFileError)
  func waitForCatchUp()
  func collectFinishedSaves()
  /// The coordinator's events since the last call.
  func takeEvents() -> [SaveEvent]
  /// The saves the coordinator started since the last call, in the order it started them.
  func takeStartedSaves() -> [StartedSave]
  /// While true, saves reach the cloud only at ``releaseUploads()``: when several saves finish
  /// on their worker while the sync's task runs, which of them it sees first is up to the
  /// threads, so the simulation hands them over once all have finished.
  var holdsUploads: Bool { get set }
  /// Hands the held saves to the cloud, in the order they started.
  func releaseUploads()
}

/// ``DeviceProcess`` for one build's game.
@MainActor
final class CoordinatedProcess<Game: DeviceGame>: DeviceProcess, SaveSyncing {
  let game: Game
  let coordinator: SaveCoordinator<Game>
  let application: Application
  let clock: ManualClock
  private let cloudSync: CloudSync
  private let disk: SimulatedDisk
  private var events: [SaveEvent] = []
  private var started: [StartedSave] = []
  private var held: [(SaveHandle, SaveReason)] = []
  var holdsUploads = false

  init(
    game: Game, codec: SaveCodec<Game.State>, store: SaveStore, disk: SimulatedDisk, slot: SaveSlot,
    server: CloudCredentials, transport: any CloudTransport, configuration: CloudSyncConfiguration, logger: Logger
  ) {
    self.game = game
    coordinator = SaveCoordinator(game: game, store: store, codec: codec, slot: slot, logger: logger)
    clock = ManualClock()
    application = Application(
      delegate: coordinator, configuration: Application.Configuration(backgroundBudget: .seconds(10), clock: clock),
      logger: logger)
    cloudSync = CloudSync(
      coordinator: coordinator, credentials: server, configuration: configuration, clock: clock, transport: transport,
      logger: logger)
    self.disk = disk
    coordinator.sync = self  // sees every save's handle, then hands it to the cloud
    coordinator.onEvent = { [unowned self] event in events.append(event) }
  }

  var model: GameModel {
    get { game.model }
    set { game.model = newValue }
  }
  var isPaused: Bool { game.isPaused }
  var store: SaveStore { coordinator.store }
  var cloud: CloudSync { cloudSync }
  var restoreFailure: RestoreFailure? { coordinator.restoreFailure }
  var isCatchingUp: Bool { coordinator.isCatchingUp }
  func worldDifferences(from document: SaveDocument) -> String?? { game.worldDifferences(from: document) }

  func didStep() { coordinator.didStep(frame: model.frame) }
  func saveNow(_ reason: SaveReason) -> SaveHandle { coordinator.saveNow(reason) }
  func restoreSlot() -> Bool { coordinator.restoreSlot() }
  func resolveRestoreFailure(_ choice: RestoreChoice) throws(SaveFileError) {
    try coordinator.resolveRestoreFailure(choice)
  }
  func waitForCatchUp() { coordinator.waitForCatchUp() }
  func collectFinishedSaves() { coordinator.collectFinishedSaves() }

  func takeEvents() -> [SaveEvent] {
    defer { events.removeAll() }
    return events
  }

  func takeStartedSaves() -> [StartedSave] {
    defer { started.removeAll() }
    return started
  }

  // MARK: SaveSyncing (a tap between the coordinator and the cloud)

  func saveStarted(_ handle: SaveHandle, reason: SaveReason, application: Application) {
    let file = FileDigest()
    let disk = disk
    // Runs on the save's worker before its next write can prune anything.
    handle.onCompletion { result in
      guard case .success(let receipt) = result, receipt.outcome == .written else { return file.set(nil) }
      file.set(disk.contents(of: receipt.path).map(sha256Hex))
    }
    started.append(StartedSave(handle: handle, reason: reason, digest: game.snapshotDigest, file: file))
    if holdsUploads { return held.append((handle, reason)) }
    cloudSync.saveStarted(handle, reason: reason, application: application)
  }

  func releaseUploads() {
    holdsUploads = false
    for (handle, reason) in held { cloudSync.saveStarted(handle, reason: reason, application: application) }
    held.removeAll()
  }

  func catchUp(stateGeneration: Int, application: Application) -> CatchUp {
    cloudSync.catchUp(stateGeneration: stateGeneration, application: application)
  }

  func resumeUploads(application: Application) { cloudSync.resumeUploads(application: application) }

  func beganNewHistory(application: Application) { cloudSync.beganNewHistory(application: application) }

  func restoredOlderGeneration(_ generation: Int, application: Application) {
    cloudSync.restoredOlderGeneration(generation, application: application)
  }
}
