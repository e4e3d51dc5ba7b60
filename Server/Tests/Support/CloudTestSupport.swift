import Foundation
@_spi(Simulation) import Stasis
@_spi(Simulation) import StasisCloud
import StasisTesting
import Synchronization

/// The HTTP transport the sync suites hold to the contract: `STASIS_TEST_TRANSPORT=asynchttpclient`
/// picks `HTTPCloudTransport` (AsyncHTTPClient), anything else the default, URLSession's.
/// scripts/test.sh runs the suites with each.
func testTransport() -> any CloudTransport {
  ProcessInfo.processInfo.environment["STASIS_TEST_TRANSPORT"] == "asynchttpclient"
    ? HTTPCloudTransport() : URLSessionCloudTransport()
}

/// A player's state for the sync tests: a score with a high score, settings, an inventory and
/// a bulk array, so every kind of merge shows.
struct Shard: BulkStorable, Equatable {
  var x: Float = 0
  var y: Float = 0
  static let bulkLayout = BulkLayout(of: Shard.self, [.field("x", \.x), .field("y", \.y)])
}

struct PlayerState: Codable, Sendable, Equatable {
  struct Score: Codable, Sendable, Equatable {
    var points: Int64 = 0
    var highScore: Int64 = 0
  }
  var score = Score()
  var volume = 0.5
  var inventory: [String: Int] = ["potion": 1]
  var shards: [Shard] = (0..<8).map { Shard(x: Float($0)) }
}

let playerCodec = SaveCodec<PlayerState>(game: GameIdentity(name: "sync-test", build: "1", schemaVersion: 1))

/// One device of the player: the one fixture every sync suite builds on. It is a name, a save
/// folder of its own that outlives any one store (a new launch finds what the last one left),
/// the wall clock its saves are stamped by, and its credentials on the test server. Each suite
/// drives one kind of sync on it: ``Device`` a tool's `CloudSync`, `SettingsDevice` a
/// `SettingsSync`, `Launch` a game's coordinator and application, one process at a time.
struct TestDevice: Sendable {
  let name: String
  let folder: URL
  /// The wall clock its saves are stamped by, in milliseconds: the test sets it.
  let time = SettableTime()
  let credentials: CloudCredentials

  init(_ name: String, server url: String, token: String, folder: URL? = nil) {
    self.name = name
    self.folder = folder ?? temporaryURL("stasis-device-\(name)")
    credentials = CloudCredentials(url: url, token: token, device: name)
  }

  /// A store over the device's folder: what one process of it opens. Its saves are stamped by
  /// ``time``, or by `wallClock` when one is given (a game that plays in real time).
  func store(
    generationsToKeep: Int = 3, signing: SigningPolicy = .none, fileSystem: any FileSystem = PosixFileSystem(),
    wallClock: (any WallClock)? = nil
  ) -> SaveStore {
    SaveStore(
      directory: folder.path, generationsToKeep: generationsToKeep, signing: signing, fileSystem: fileSystem,
      wallClock: wallClock ?? SettableWallClock(time: time), device: name)
  }

  /// A client of the test server, as this device.
  func client(transport: any CloudTransport = testTransport()) -> CloudClient {
    CloudClient(credentials: credentials, transport: transport)
  }
}

/// A tool on one device (a ``TestDevice``): a store and the cloud sync of slot `autosave`.
final class Device: Sendable {
  let device: TestDevice
  let store: SaveStore
  let sync: CloudSync
  var clock: SettableTime { device.time }

  init(
    server url: String, token: String, name: String, policy: ConflictPolicy = .mostRecent,
    onConflict: (@Sendable (Conflict) async -> ConflictDecision?)? = nil, signing: SigningPolicy = .none,
    generationsToKeep: Int = 3, folder: URL? = nil, fileSystem: (any FileSystem)? = nil,
    transport: any CloudTransport = testTransport(),
    configure: (inout CloudSyncConfiguration) -> Void = { _ in }
  ) {
    device = TestDevice(name, server: url, token: token, folder: folder)
    store = device.store(
      generationsToKeep: generationsToKeep, signing: signing, fileSystem: fileSystem ?? PosixFileSystem())
    var configuration = CloudSyncConfiguration(
      policy: policy, onConflict: onConflict, validate: { _ = try playerCodec.load(from: $0) },
      // Retries only when told (retryNow): a test never waits on a backoff.
      sleep: { _ in try await Task.sleep(for: .seconds(3600)) })
    configure(&configuration)  // this device's sync only (a planted bug, in the simulation's build)
    sync = CloudSync(
      client: device.client(transport: transport), store: store, slot: "autosave", configuration: configuration)
  }

  /// Saves `state` as the slot's next generation at wall-clock time `at`.
  @discardableResult
  func save(_ state: PlayerState, playTime: Double = 0, progress: Double? = nil, at time: Int64? = nil) throws -> Int {
    if let time { clock.now = time }
    let summary = SaveSummary(playTime: playTime, progress: progress)
    return try store.save(state, codec: playerCodec, slot: "autosave", summary: summary).wait().generation
  }

  /// The newest generation's state.
  func newest() throws -> PlayerState { try store.load(codec: playerCodec, slot: "autosave").state }

  var generations: [Int] { (try? store.generations(of: "autosave")) ?? [] }
  var kept: [Int] { store.keptGenerations(of: "autosave").map(\.generation) }
}

/// A new, empty folder of this test process's own, removed with everything in it when the
/// process exits (`TemporaryFolder.untilExit`): every fixture's save folder and database, so a
/// run leaves nothing behind in the temporary directory.
func temporaryURL(_ prefix: String) -> URL {
  do {
    return URL(fileURLWithPath: try TemporaryFolder.untilExit(prefix: prefix))
  } catch {
    // No folder under the temporary directory is a broken machine: the test stops, loudly.
    fatalError("no temporary folder for '\(prefix)': \(error)")
  }
}

/// A wall clock the test sets: the saves' creation times.
final class SettableTime: Sendable {
  private let value = Mutex<Int64>(1_000)
  var now: Int64 {
    get { value.withLock { $0 } }
    set { value.withLock { $0 = newValue } }
  }
}

/// A store's wall clock that reads a ``SettableTime``, to the millisecond.
struct SettableWallClock: WallClock {
  let time: SettableTime
  func now() -> Date { Date(timeIntervalSince1970: Double(time.now) / 1000) }
  func unixMilliseconds() -> Int64 { time.now }
}

/// The server's history of slot `autosave`, newest first: (revision, base, sha256).
func history(_ client: Client) async throws -> [(revision: Int, base: Int?, sha: String)] {
  let list = try await client.send(.GET, "/v1/slots/autosave/revisions").json["revisions"] as? [[String: Any]] ?? []
  return list.map { ($0["revision"] as? Int ?? 0, $0["baseRevision"] as? Int, $0["sha256"] as? String ?? "") }
}

/// The same, read through a ``CloudClient`` (the in-memory server's, say).
func history(_ client: CloudClient) async throws -> [(revision: Int, base: Int?, sha: String)] {
  (try await client.revisions(slot: "autosave") ?? []).map { ($0.revision, $0.baseRevision, $0.sha256) }
}

func fileSHA(_ device: Device, _ generation: Int) throws -> String {
  sha256(try device.store.readBytes(at: device.store.path(of: "autosave", generation: generation)))
}

/// The smallest game's state, a counter (played by StasisTesting's `TestGame`).
struct CounterState: Codable, Sendable, Equatable {
  var count: Int64 = 0
}

let counterCodec = SaveCodec<CounterState>(game: GameIdentity(name: "counter", build: "1", schemaVersion: 1))

/// A sync's events as they come, read by the test.
final class EventLog: Sendable {
  private let events = Mutex<[CloudEvent]>([])
  func append(_ event: CloudEvent) { events.withLock { $0.append(event) } }
  var all: [CloudEvent] { events.withLock { $0 } }
}
