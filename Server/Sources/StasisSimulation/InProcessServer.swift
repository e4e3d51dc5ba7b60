import Crypto
import Foundation
import GRDB
import Hummingbird
import Logging
import NIOCore
import PostgresNIO
@_spi(Simulation) import Stasis
import StasisCloud
import StasisServer
import StasisServerTesting
import Synchronization

/// Which database the in-process server runs on.
public enum SimulatedDatabase: Sendable, Equatable {
  /// A SQLite file in the run's scratch folder (the default).
  case sqlite
  /// A database of the run's own, made on the PostgreSQL server that `url` reaches (its
  /// role needs `CREATEDB`) and dropped when the run ends.
  case postgres(url: String)
}

/// The real `stasis-server` request handling (its Hummingbird router, middleware included)
/// over its real backend (SQLite, or PostgreSQL in a database of the run's own), called in the
/// same process: no sockets, no threads of its own. It can crash (the database is closed and
/// opened again) and lose answers.
public final class InProcessServer: Sendable {
  /// The player every simulated device plays as.
  public static let token = "stasis-sim-token"
  /// How many revisions a slot keeps (small, so pruning happens in short runs).
  public let keepRevisions: Int
  /// Where the database is: the SQLite file's path, or the run's PostgreSQL database's URL.
  private let location: Location
  private let clock: @Sendable () -> Int64
  private let plantedBug: PlantedBug?
  private struct Running: Sendable {
    var backend: any SaveBackend
    var responder: RouterResponder<ServerContext>
    /// The fault that kills the server inside an upload's commit, when armed.
    var death: any DeathInsideCommit
    /// Closes the database (stops its connection pool, and waits until it stopped).
    var close: @Sendable () async -> Void
  }
  private enum Location: Sendable {
    case sqlite(path: String)
    case postgres(url: String, admin: String, name: String)
  }
  private let running = Mutex<Running?>(nil)
  /// The database opened for the checker's reading while the server is down.
  private let inspection = Mutex<Opened?>(nil)

  /// A backend open on the database, and what closes it.
  private struct Opened: Sendable {
    var backend: any SaveBackend
    var close: @Sendable () async -> Void
  }

  /// The database as the checker reads it: the running server's, or, while it is down, the
  /// database opened for reading (what was committed is there whether the server runs or not).
  package var committedState: (any SaveBackend)? {
    if let backend { return backend }
    return inspection.withLock { inspection in
      if inspection == nil { inspection = try? Self.open(location, plantedBug: nil) }
      return inspection?.backend
    }
  }

  /// A server whose database is `database` (a SQLite file at `path`, created; or a new
  /// PostgreSQL database of its own), keeping `keepRevisions` per slot, with
  /// `bug` planted in its backend (a server bug; the others do nothing here).
  public init(
    path: String, keepRevisions: Int, clock: @escaping @Sendable () -> Int64, planting bug: PlantedBug? = nil,
    database: SimulatedDatabase = .sqlite
  ) async throws {
    plantedBug = bug
    switch database {
    case .sqlite:
      location = .sqlite(path: path)
    case .postgres(let url):
      // Named from the host, never seen by the run: its trace holds no database name.
      let name = "stasis_sim_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
      location = .postgres(url: try await PostgresDatabases.create(name, on: url), admin: url, name: name)
    }
    self.keepRevisions = keepRevisions
    self.clock = clock
    do {
      try await start()
      _ = try await backend!.addPlayer(name: "player", tokenHash: BearerToken.hash(Self.token), at: clock())
    } catch {
      await finish()  // the run's own PostgreSQL database goes with it
      throw error
    }
  }

  /// The backend while the server is up.
  package var backend: (any SaveBackend)? { running.withLock { $0?.backend } }
  /// True while the server answers.
  public var isUp: Bool { running.withLock { $0 != nil } }

  /// The schema version of the slot's head revision, as its header declares it; nil when the
  /// slot has no head or the server is down.
  public func headSchema(slot: String) async -> Int64? {
    guard let backend, let player = try? await backend.player(tokenHash: BearerToken.hash(Self.token)) else {
      return nil
    }
    return try? await backend.head(player: player, slot: slot)?.schema
  }

  /// The bytes of one revision of `slot`, read from the database; nil when it is gone or the
  /// server is down.
  public func file(slot: String, revision: Int) async -> [UInt8]? {
    guard let backend, let player = try? await backend.player(tokenHash: BearerToken.hash(Self.token)) else {
      return nil
    }
    return try? await backend.file(player: player, slot: slot, revision: Int64(revision))?.1
  }

  /// The player's settings as the database holds them (committed, whether the server runs or
  /// not); nil when the database cannot be read.
  public func settings() async -> SettingsFile? {
    guard let backend = committedState,
      let player = try? await backend.player(tokenHash: BearerToken.hash(Self.token))
    else { return nil }
    return try? await backend.settings(player: player)
  }

  /// Opens the database and builds the router.
  public func start() async throws {
    let opened = try Self.open(location, plantedBug: plantedBug)
    let backend = opened.backend
    let death: any DeathInsideCommit
    switch (location, backend) {
    case (.postgres, let postgres as PostgresBackend):
      try await postgres.migrate()
      death = try await PostgresDeathInsideCommit(postgres)
    case (_, let sqlite as SQLiteBackend):
      let observer = SQLiteDeathInsideCommit()
      sqlite.pool.add(transactionObserver: observer)
      death = observer
    default:
      fatalError("unreachable: each location opens its own backend")
    }
    let server = SaveServer(backend: backend, options: ServerOptions(keepRevisions: keepRevisions), clock: clock)
    let responder = server.router().buildResponder()
    running.withLock { $0 = Running(backend: backend, responder: responder, death: death, close: opened.close) }
    await closeInspection()
  }

  private func closeInspection() async {
    let opened = inspection.withLock { inspection in
      defer { inspection = nil }
      return inspection
    }
    await opened?.close()
  }

  /// Opens the backend at `location` (its rules varied for `plantedBug`, in the simulation's
  /// build), and what closes it.
  private static func open(_ location: Location, plantedBug: PlantedBug?) throws -> Opened {
    switch location {
    case .sqlite(let path):
      // Every revision stored as a delta when it may be, however small: the simulation's saves
      // are a few KB, and its chains, pins and collection must be the real ones.
      let backend = try plantedBug.sqlite(path: path, smallestDelta: 0)
      return Opened(backend: backend, close: {})
    case .postgres(let url, _, _):
      var logger = Logger(label: "stasis.sim.postgres")
      logger.logLevel = .critical
      let backend = try plantedBug.postgres(url: url, connections: 2, smallestDelta: 0, logger: logger)
      let pool = Task { await backend.run() }
      return Opened(
        backend: backend,
        close: {
          pool.cancel()
          await pool.value  // its connections closed: runs and crashes do not pile them up
        })
    }
  }

  /// The process dies: the database is closed (what was committed stays in it).
  public func crash() async {
    let closed = running.withLock { running in
      defer { running = nil }
      return running?.close
    }
    await closed?()
  }

  /// The run is over: the server stops, and a PostgreSQL database of the run's own is dropped.
  public func finish() async {
    await crash()
    await closeInspection()
    if case .postgres(_, let admin, let name) = location { try? await PostgresDatabases.drop(name, on: admin) }
  }

  /// The next upload's transaction dies at its commit, after its last write, and the server
  /// with it (or, with `false`, no longer). Nothing of that transaction stays: the database
  /// rolls it back, as after a crash. Throws when the fault could not be armed or disarmed.
  public func dieInsideNextUpload(_ armed: Bool = true) async throws {
    guard let death = running.withLock({ $0?.death }) else { return }
    try await death.arm(armed)
  }

  /// What a request met.
  enum Answer {
    /// The server answered.
    case answered(CloudResponse)
    /// The server was down: nothing was sent.
    case down
    /// The server died while it handled the request: sent, and no answer.
    case died
  }

  /// Answers one request as the server would over HTTP.
  func respond(_ request: CloudRequest) async -> Answer {
    guard let (responder, death) = running.withLock({ $0.map { ($0.responder, $0.death) } }) else { return .down }
    let answer = await RouterTransport.respond(to: request, with: responder)
    if await death.takeDied() {
      await crash()
      return .died
    }
    return .answered(answer)
  }
}

/// What the transport saw: the checker's record of acknowledged uploads.
public struct Acknowledged: Sendable, Equatable {
  /// The device that uploaded.
  public var device: String
  /// The revision the `201` named.
  public var revision: Int
  /// The file's SHA-256.
  public var sha256: String
  /// The revision the upload named as the loser of the conflict it resolved, if any.
  public var loser: Int? = nil
}

/// One device's line to the in-process server: it can be offline, and it can lose the answer
/// of a request the server did carry out (the `201` lost after the commit).
public final class SimulatedNetwork: CloudTransport {
  /// The server.
  public let server: InProcessServer
  /// The device this line belongs to.
  public let device: String
  private struct State {
    var online = true
    var loseNextAnswers = 0
    var acknowledged: [Acknowledged] = []
    var committed: [Acknowledged] = []
    var lostAnswers = 0
    var diedInside = 0
    var transfers = LineTransfers()
  }
  private let state = Mutex(State())
  /// An upload held on the line: armed with the semaphore to signal when one arrives, then the
  /// arrived upload waiting for its release.
  private let hold = Mutex<(reached: DispatchSemaphore?, waiting: CheckedContinuation<Bool, Never>?)>((nil, nil))

  /// The next upload stops on the line (in flight: sent, not yet at the server) until
  /// ``releaseHold()``; `reached` is signalled when it arrives.
  public func holdNextUpload(notify reached: DispatchSemaphore) { hold.withLock { $0.reached = reached } }

  /// True while an upload waits on the line.
  public var isHolding: Bool { hold.withLock { $0.waiting != nil } }

  /// Lets the held upload go on (or no upload be held any more). One cancelled meanwhile (the
  /// budget expired) never reaches the server.
  public func releaseHold() {
    let waiting = hold.withLock { hold in
      defer { hold = (nil, nil) }
      return hold.waiting
    }
    waiting?.resume(returning: true)
  }

  /// What went over a line besides whole files: delta uploads, resumable parts, resumptions
  /// (a `HEAD` asking where a cut upload's bytes end), and downloads that asked for a delta.
  public struct LineTransfers: Sendable, Equatable {
    public var deltaUploads = 0
    public var parts = 0
    public var resumptions = 0
    public var deltaDownloads = 0
  }

  /// A line from `device` to `server`.
  public init(server: InProcessServer, device: String) {
    self.server = server
    self.device = device
  }

  /// Whether the device can reach the server.
  public var isOnline: Bool {
    get { state.withLock { $0.online } }
    set { state.withLock { $0.online = newValue } }
  }

  /// The answers of the next `count` requests the server carries out are lost.
  public func loseAnswers(_ count: Int) { state.withLock { $0.loseNextAnswers = count } }

  /// Every `201` the device received, in order.
  public var acknowledged: [Acknowledged] { state.withLock { $0.acknowledged } }
  /// Every upload the server committed for the device, its answer delivered or lost.
  public var committed: [Acknowledged] { state.withLock { $0.committed } }
  /// How many answers were lost.
  public var lostAnswers: Int { state.withLock { $0.lostAnswers } }
  /// How many of this line's uploads the server died inside, before their commit.
  public var diedInside: Int { state.withLock { $0.diedInside } }
  /// The deltas and parts that went over this line.
  public var transfers: LineTransfers { state.withLock { $0.transfers } }

  private static func neverSent(_ message: String) -> CloudError {
    var error = CloudError(.offline, message)
    error.neverSent = true
    return error
  }

  public func send(_ request: CloudRequest, to cloud: CloudCredentials) async throws(CloudError) -> CloudResponse {
    guard isOnline else { throw Self.neverSent("\(device) is offline") }
    // An upload's request: a slot's PUT (not the settings'), or the one that completes a resumable upload (a delta's one
    // POST, or the last PATCH of its parts).
    let isUpload =
      (request.method == "PUT" && request.path.hasPrefix("/v1/slots/")) || request.header("Upload-Complete") == "?1"
    state.withLock { state in
      if isUpload, request.header("X-Stasis-Delta-Base") != nil { state.transfers.deltaUploads += 1 }
      if request.method == "PATCH" { state.transfers.parts += 1 }
      if request.method == "HEAD" { state.transfers.resumptions += 1 }
      if request.header("A-IM") != nil { state.transfers.deltaDownloads += 1 }
    }
    if isUpload {
      // Armed or not is decided and the wait installed in one step, so a release cannot fall
      // between them.
      let held = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        let armed = hold.withLock { hold -> Bool in
          guard let reached = hold.reached else { return false }
          hold = (nil, continuation)
          reached.signal()
          return true
        }
        if !armed { continuation.resume(returning: false) }
      }
      if held, Task.isCancelled { throw Self.neverSent("the upload was cancelled on the line") }
    }
    let response: CloudResponse
    switch await server.respond(request) {
    case .down: throw Self.neverSent("the server is down (connection refused)")
    case .died:
      state.withLock { $0.diedInside += 1 }
      throw CloudError(.offline, "the server died before it answered")
    case .answered(let answer): response = answer
    }
    var upload: Acknowledged?
    if isUpload, response.status == 201,
      let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any],
      let revision = json["revision"] as? Int, let sha256 = json["sha256"] as? String
    {
      // The revision the upload named as its conflict's loser, as it went over the wire.
      let loser = request.headers.first { $0.0.lowercased() == "x-stasis-conflict-loser" }.flatMap {
        Int($0.1.trimmingCharacters(in: ["\"", " "]))
      }
      // The file's SHA-256 as the server rebuilt it: the body may be a delta.
      upload = Acknowledged(device: device, revision: revision, sha256: sha256, loser: loser)
    }
    let lost = state.withLock { state -> Bool in
      if let upload { state.committed.append(upload) }
      guard state.loseNextAnswers > 0 else {
        if let upload { state.acknowledged.append(upload) }
        return false
      }
      state.loseNextAnswers -= 1
      state.lostAnswers += 1
      return true
    }
    if lost { throw CloudError(.offline, "the connection dropped before the answer") }
    return response
  }
}

/// The simulation's crash inside the server's upload, injected from outside the server (which
/// holds no crash switch): when armed, the next transaction that stores a revision fails at its
/// commit, after its last write, and the database rolls all of it back, as when the process
/// dies there.
protocol DeathInsideCommit: Sendable {
  /// Arms (or disarms) the fault for the next transaction that stores a revision.
  func arm(_ armed: Bool) async throws
  /// True once, after an armed transaction died.
  func takeDied() async -> Bool
}

/// On SQLite: a GRDB transaction observer that throws from `databaseWillCommit` (GRDB then rolls
/// the transaction back).
final class SQLiteDeathInsideCommit: TransactionObserver, DeathInsideCommit {
  private struct State {
    var armed = false
    var storingRevision = false
    var died = false
  }
  private let state = Mutex(State())

  /// The error the commit throws, as the process dying there.
  struct Died: Error {}

  func arm(_ armed: Bool) async throws { state.withLock { $0.armed = armed } }

  func takeDied() async -> Bool {
    state.withLock { state in
      defer { state.died = false }
      return state.died
    }
  }

  func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool {
    if case .insert(let table) = eventKind { return table == "revisions" }
    return false
  }

  func databaseDidChange(with event: DatabaseEvent) { state.withLock { $0.storingRevision = true } }

  func databaseWillCommit() throws {
    let dies = state.withLock { state in
      guard state.armed, state.storingRevision else { return false }
      state.armed = false
      state.died = true
      return true
    }
    if dies { throw Died() }
  }

  func databaseDidCommit(_ db: Database) { state.withLock { $0.storingRevision = false } }

  func databaseDidRollback(_ db: Database) { state.withLock { $0.storingRevision = false } }
}

/// On PostgreSQL: a deferred constraint trigger on `revisions`, in the run's own database, that
/// raises at the commit of a transaction that stored a revision while a one-row table says
/// armed. It counts each death in a sequence first (a sequence is not rolled back), which is how
/// the simulation learns that the server died.
final class PostgresDeathInsideCommit: DeathInsideCommit {
  private let backend: PostgresBackend
  private let logger: Logger
  private let deaths: Mutex<Int64>

  init(_ backend: PostgresBackend) async throws {
    self.backend = backend
    var logger = Logger(label: "stasis.sim.postgres")
    logger.logLevel = .critical
    self.logger = logger
    for statement in [
      "CREATE SEQUENCE IF NOT EXISTS sim_deaths",
      "CREATE TABLE IF NOT EXISTS sim_fault (armed BOOLEAN NOT NULL)",
      "INSERT INTO sim_fault SELECT FALSE WHERE NOT EXISTS (SELECT 1 FROM sim_fault)",
      "UPDATE sim_fault SET armed = FALSE",
      """
      CREATE OR REPLACE FUNCTION sim_die() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF (SELECT armed FROM sim_fault) THEN
          PERFORM nextval('sim_deaths');
          RAISE EXCEPTION 'the simulation: the server died inside this commit';
        END IF;
        RETURN NULL;
      END $$
      """,
      "DROP TRIGGER IF EXISTS sim_die ON revisions",
      """
      CREATE CONSTRAINT TRIGGER sim_die AFTER INSERT ON revisions DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION sim_die()
      """,
    ] {
      try await backend.client.query(PostgresQuery(unsafeSQL: statement), logger: logger)
    }
    deaths = Mutex(try await Self.count(backend, logger))
  }

  private static func count(_ backend: PostgresBackend, _ logger: Logger) async throws -> Int64 {
    let rows = try await backend.client.query(
      "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM sim_deaths", logger: logger)
    for try await value in rows.decode(Int64.self) { return value }
    return 0
  }

  func arm(_ armed: Bool) async throws {
    try await backend.client.query(
      PostgresQuery(unsafeSQL: "UPDATE sim_fault SET armed = \(armed ? "TRUE" : "FALSE")"), logger: logger)
  }

  /// Compares the deaths counted with those seen, after every request: whatever the simulation
  /// believes armed, a death is never missed. (A count that cannot be read is taken as none;
  /// the checker then finds what a missed death left.)
  func takeDied() async -> Bool {
    guard let now = try? await Self.count(backend, logger) else { return false }
    let died = deaths.withLock { deaths in
      defer { deaths = now }
      return now > deaths
    }
    if died { try? await arm(false) }
    return died
  }
}

/// Databases of the simulation's own on a PostgreSQL server, made and dropped through the
/// database the URL names (its role needs `CREATEDB`).
enum PostgresDatabases {
  /// Creates database `name` (dropping one left by a run that died) on the server `url`
  /// reaches; returns its URL.
  static func create(_ name: String, on url: String) async throws -> String {
    // First, the databases of runs whose process is gone (killed before it could drop them).
    var stale: [String] = []
    try await run(["SELECT datname FROM pg_database WHERE datname LIKE 'stasis\\_sim\\_%'"], on: url) { found in
      stale = found.filter { name in
        let parts = name.split(separator: "_")
        guard parts.count == 4, let pid = pid_t(parts[2]) else { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
      }
    }
    try await run(stale.map { "DROP DATABASE IF EXISTS \($0) WITH (FORCE)" } + ["CREATE DATABASE \(name)"], on: url)
    guard var parts = URLComponents(string: url) else {
      throw StorageError(.configuration, "not a PostgreSQL URL: \(url)")
    }
    parts.path = "/" + name
    return parts.string ?? url
  }

  /// Drops database `name`, closing whatever is still connected to it.
  static func drop(_ name: String, on url: String) async throws {
    try await run(["DROP DATABASE IF EXISTS \(name) WITH (FORCE)"], on: url)
  }

  /// Runs `statements` on the database `url` names, one connection, closed after; the last
  /// statement's first column, as text, goes to `rows`.
  private static func run(
    _ statements: [String], on url: String, rows: ([String]) -> Void = { _ in }
  ) async throws {
    var logger = Logger(label: "stasis.sim.postgres")
    logger.logLevel = .critical
    let admin = try PostgresBackend(url: url, connections: 1, logger: logger)
    let pool = Task { await admin.run() }
    do {
      var last: [String] = []
      for statement in statements {
        last = []
        for try await value in try await admin.client.query(PostgresQuery(unsafeSQL: statement), logger: logger)
          .decode(String.self)
        {
          last.append(value)
        }
      }
      rows(last)
    } catch {
      pool.cancel()
      await pool.value
      throw error
    }
    pool.cancel()
    await pool.value
  }
}
