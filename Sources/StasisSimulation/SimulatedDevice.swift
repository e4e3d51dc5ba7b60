import Crypto
import Logging
import Stasis
import StasisCloud
import StasisTesting
import Synchronization

/// One device of the player: a real `SaveStore` and `CloudSync` over its own simulated disk
/// and line to the server, running one build of the game. Its process can be killed.
final class SimulatedDevice {
  static let slot: SaveSlot = "autosave"
  static let directory = "/saves"
  static let generationsToKeep = 3

  let name: String
  let network: SimulatedNetwork
  let wallClock: @Sendable () -> Int64
  var disk = SimulatedDisk()
  var build = GameBuild.v1
  var policy: ConflictPolicy = .mostRecent
  /// The game in memory; nil while the process is not running.
  var model: GameModel?
  var store: SaveStore?
  var sync: CloudSync?
  /// After a restore failed over saves it cannot read, the game plays on alongside them.
  var unreadableNewest = UnreadableNewest.refuse
  /// The events the sync reported since the last look.
  let cloudEvents = EventLog()

  init(name: String, server: InProcessServer, wallClock: @escaping @Sendable () -> Int64) {
    self.name = name
    network = SimulatedNetwork(server: server, device: name)
    self.wallClock = wallClock
  }

  var isRunning: Bool { model != nil }

  /// Starts the process: a store over the disk, and a sync over the line.
  func launch() {
    var logger = Logger(label: "stasis.sim.\(name)")
    logger.logLevel = .critical
    let store = SaveStore(
      directory: Self.directory, generationsToKeep: Self.generationsToKeep, fileSystem: disk, wallClock: wallClock,
      device: name, logger: logger)
    let build = build
    let configuration = CloudSyncConfiguration(
      policy: policy, validate: { document in try build.validate(document) }, autosaveUploadInterval: .zero,
      sleep: { _ in throw CancellationError() })
    let client = CloudClient(
      server: CloudServer(url: "sim://server", token: InProcessServer.token, device: name), transport: network)
    let sync = CloudSync(client: client, store: store, slot: Self.slot, configuration: configuration, logger: logger)
    let events = cloudEvents
    sync.onEvent { event in events.append(event) }
    self.store = store
    self.sync = sync
    model = GameModel()
    unreadableNewest = .refuse
  }

  /// The process ends without a word (SIGKILL); the disk keeps what a real one would.
  func kill(_ random: inout SeededGenerator) -> Int {
    let crashed = disk.crash { choices in random.below(choices) }
    disk = crashed.disk
    store = nil
    sync = nil
    model = nil
    return crashed.lost
  }

  /// The process quits cleanly (its saves have all finished).
  func quit() {
    store = nil
    sync = nil
    model = nil
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
    disk.contents(of: path(of: generation)).map(hex)
  }

  func takeEvents() -> [CloudEvent] { cloudEvents.take() }
}

/// Lowercase hex SHA-256.
func hex(_ bytes: [UInt8]) -> String {
  SHA256.hash(data: bytes).map { byte in
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
  }.joined()
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
