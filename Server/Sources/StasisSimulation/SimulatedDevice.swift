import Crypto
import Logging
@_spi(Plumbing) @_spi(Simulation) import Stasis
@_spi(Plumbing) @_spi(Simulation) import StasisCloud
import StasisServer
import StasisTesting
import Synchronization

/// One device of the player, running one build of the game: while its process runs, an
/// `Application` whose delegate is a real `SaveCoordinator` over a real `SaveStore` on the
/// device's own simulated disk, and `CloudSync` over its own line to the server. Its
/// process can be killed.
@MainActor
final class SimulatedDevice {
  nonisolated static let slot: SaveSlot = "autosave"
  nonisolated static let directory = "/saves"
  static let generationsToKeep = 3

  /// Whether `path` is a save's generation being written (`/saves/autosave/.N.tmp-…`), the
  /// write the simulation holds mid-way; the folder and slot files written beside it are not.
  nonisolated static func isGenerationWrite(_ path: String) -> Bool {
    let folder = "\(directory)/\(slot.name)/."
    guard path.hasPrefix(folder), let tag = path.range(of: ".tmp-") else { return false }
    let name = path[path.index(path.startIndex, offsetBy: folder.count)..<tag.lowerBound]
    return !name.isEmpty && name.allSatisfy(\.isASCII) && name.allSatisfy(\.isNumber)
  }

  let name: String
  let network: SimulatedNetwork
  let wallClock: any WallClock
  var disk = SimulatedDisk()
  var build = GameBuild.v1
  /// How the device's store signs: in part of the runs every device signs with the game's key
  /// and, as the key-rotation recipe has it, accepts unsigned saves.
  var signing = SigningPolicy.none
  var policy: ConflictPolicy = .mostRecent
  /// The policy's name, for the trace.
  var policyName = "recent"
  /// The running process; nil while the game is not running.
  var process: (any DeviceProcess)?
  /// The running process's own line to the server: cut when the process dies, so nothing it
  /// had queued reaches the server afterwards.
  private var line: ProcessLine?
  /// After a restore failed over saves it cannot read, the game plays on alongside them.
  var unreadableNewest = UnreadableNewest.refuse
  /// The events the sync reported since the last look.
  let cloudEvents = EventLog()
  /// The bug planted in this run's instances: its store and its sync.
  let plantedBug: PlantedBug?
  /// Its settings and timers, and what was acknowledged of them.
  let recipes = DeviceRecipes()
  /// The wall clock the timers are due by (the run's).
  var timerClock: (any WallClock)?
  /// Why the settings or timers could not be opened at the last start, if they could not.
  var recipesFailure: String?
  /// The replay the running process records (``SimulatedReplays``); nil before its first play.
  var replay: SimulatedReplays.Recorder?
  /// The latest replay's name: a cold start goes on in it when it ends on the restored state.
  var replayName: String?
  /// Replays started on this device: the next is named `device-N`.
  var replaysStarted = 0
  /// Processes started on this device: the world build's ECS ids start elsewhere in each.
  private var launches: UInt64 = 0
  /// Whether the last process was killed (not quit).
  private var endedByKill = false
  /// Whether the running process started after a kill.
  private(set) var startedAfterKill = false

  init(name: String, server: InProcessServer, wallClock: any WallClock, plantedBug: PlantedBug?) {
    self.plantedBug = plantedBug
    self.name = name
    network = SimulatedNetwork(server: server, device: name)
    self.wallClock = wallClock
  }

  var isRunning: Bool { process != nil }
  /// The game in memory; nil while the process is not running.
  var model: GameModel? { process?.model }
  var store: SaveStore? { process?.store }
  var sync: CloudSync? { process?.cloud }

  /// Starts the process: a store over the disk, a coordinator, an application and the cloud.
  /// The application is not launched yet.
  func start() -> any DeviceProcess {
    var logger = Logger(label: "stasis.sim.\(name)")
    logger.logLevel = .critical
    let store = plantedBug.store(
      directory: Self.directory, generationsToKeep: Self.generationsToKeep, signing: signing, disk: disk,
      wallClock: wallClock, device: name, logger: logger)
    // A merged state's summary is the game's own, made from the state alone, off the main thread.
    var configuration = CloudSyncConfiguration(
      policy: build.policy(policy, declared: policyName == Simulation.declaredMerge.1),
      summarize: { document in
        guard let model = GameBuild.model(of: document) else { return document.summary }
        return GameModel.summary(of: model)
      }, autosaveUploadInterval: .zero, sleep: { _ in throw CancellationError() })
    plantedBug.varySync(&configuration)
    // Parts of 256 bytes: the simulation's saves and deltas are a few KB, and their uploads
    // must go in parts, cut and resumed, as a large save's do.
    configuration.transfer.partSize = 256
    let line = ProcessLine(network: network)
    let process = build.process(
      store: store, disk: disk, slot: Self.slot,
      server: CloudCredentials(url: "sim://server", token: InProcessServer.token, device: name), transport: line,
      configuration: configuration, logger: logger, firstID: 1 + launches * 1000,
      rawReferences: plantedBug.savesWorldReferencesRaw)
    launches += 1
    startedAfterKill = endedByKill
    endedByKill = false
    let events = cloudEvents
    process.cloud.onEvent { event in events.append(event) }
    self.process = process
    self.line = line
    unreadableNewest = .refuse
    if let timerClock {
      recipesFailure = recipes.open(store: store, application: process.application, wallClock: timerClock)
    }
    return process
  }

  /// The process ends without a word (SIGKILL); the disk keeps what a real one would.
  func kill(_ random: inout SeededGenerator) -> Int {
    endedByKill = true
    if disk.unflushedAfterFailedFlush.contains("\(Self.directory)/.timers") {  // TimerCenter's file
      recipes.killedWithUnflushedTimers()
    }
    let crashed = disk.crash { choices in random.below(choices) }
    disk = crashed.disk
    line?.cut()
    line = nil
    recipes.close()
    process = nil
    replay = nil
    return crashed.lost
  }

  /// The process has quit (its saves have all finished), its replay flushed first; the
  /// replay's write failure, if it failed.
  @discardableResult
  func quit() -> String? {
    let failure = flushReplay()
    replay = nil
    defer { process = nil }
    line?.cut()
    line = nil
    recipes.close()
    return failure
  }

  /// The generations on the disk now, newest first.
  func generationsOnDisk() -> [Int] {
    let names = (try? disk.contents(ofDirectory: "\(Self.directory)/\(Self.slot.name)")) ?? []
    return names.compactMap(SaveStore.generationNumber(fileName:)).sorted(by: >)
  }

  func path(of generation: Int) -> String {
    let digits = String(generation)
    return
      "\(Self.directory)/\(Self.slot.name)/\(String(repeating: "0", count: max(0, 10 - digits.count)))\(digits).stasis"
  }

  /// The SHA-256 of a generation's bytes, nil when it is not there.
  func sha256(of generation: Int) -> String? {
    disk.contents(of: path(of: generation)).map(sha256Hex)
  }

  func takeEvents() -> [CloudEvent] { cloudEvents.take() }
}

/// Lowercase hex SHA-256.
func sha256Hex(_ bytes: [UInt8]) -> String { hexEncoded(SHA256.hash(data: bytes)) }

/// One process's line to the server over the device's network: once cut (the process died),
/// every request fails as never sent.
final class ProcessLine: CloudTransport {
  private let network: SimulatedNetwork
  private let isCut = Mutex(false)

  init(network: SimulatedNetwork) { self.network = network }

  func cut() { isCut.withLock { $0 = true } }

  func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
    if isCut.withLock({ $0 }) {
      var error = CloudError(.offline, "the process is gone")
      error.neverSent = true
      throw error
    }
    return try await network.send(request, to: server)
  }
}

/// The events a device's sync reported, collected on the sync's task.
final class EventLog: Sendable {
  private let events = Mutex<[CloudEvent]>([])

  func append(_ event: CloudEvent) { events.withLock { $0.append(event) } }

  /// Every event since the last call, oldest first.
  func take() -> [CloudEvent] {
    events.withLock { events in
      let taken = events
      events.removeAll()
      return taken
    }
  }
}
