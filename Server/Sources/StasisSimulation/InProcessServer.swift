import Crypto
import Foundation
import GRDB
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
@_spi(Simulation) import Stasis
import StasisCloud
import StasisServer
import Synchronization

/// The real `stasis-server` request handling (its Hummingbird router, middleware included)
/// over its real SQLite backend, called in the same process: no sockets, no threads of its own.
/// It can crash (the database is closed and opened again from its file) and lose answers.
public final class InProcessServer: Sendable {
  /// The player every simulated device plays as.
  public static let token = "stasis-sim-token"
  /// How many revisions a slot keeps (small, so pruning happens in short runs).
  public let keepRevisions: Int
  private let path: String
  private let clock: @Sendable () -> Int64
  private let plantedBug: PlantedBug?
  private struct Running: Sendable {
    var backend: SQLiteBackend
    var responder: RouterResponder<ServerContext>
    /// The fault that kills the server inside an upload's commit, when armed.
    var death: DeathInsideCommit
  }
  private let running = Mutex<Running?>(nil)
  /// The database opened for the checker's reading while the server is down.
  private let inspection = Mutex<SQLiteBackend?>(nil)

  /// The database as the checker reads it: the running server's, or, while it is down, its
  /// file opened for reading (what was committed is there whether the server runs or not).
  package var committedState: SQLiteBackend? {
    if let backend { return backend }
    return inspection.withLock { inspection in
      if inspection == nil { inspection = try? SQLiteBackend(path: path) }
      return inspection
    }
  }

  /// A server whose database lives at `path` (created), keeping `keepRevisions` per slot, with
  /// `bug` planted in its backend (a server bug; the others do nothing here).
  public init(
    path: String, keepRevisions: Int, clock: @escaping @Sendable () -> Int64, planting bug: PlantedBug? = nil
  ) async throws {
    plantedBug = bug
    self.path = path
    self.keepRevisions = keepRevisions
    self.clock = clock
    try start()
    _ = try await backend!.addPlayer(name: "player", tokenHash: BearerToken.hash(Self.token), at: clock())
  }

  /// The backend while the server is up.
  package var backend: SQLiteBackend? { running.withLock { $0?.backend } }
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
  public func start() throws {
    // Every revision stored as a delta when it may be, however small: the simulation's saves
    // are a few KB, and its chains, pins and collection must be the real ones.
    #if SimulationSeams
      let backend = try SQLiteBackend(path: path, seams: plantedBug.serverSeams, smallestDelta: 0)
    #else
      let backend = try SQLiteBackend(path: path, smallestDelta: 0)
    #endif
    let death = DeathInsideCommit()
    backend.pool.add(transactionObserver: death)
    var logger = Logger(label: "stasis.sim.server")
    logger.logLevel = .critical
    let server = SaveServer(
      backend: backend, options: ServerOptions(keepRevisions: keepRevisions), clock: clock)
    let responder = server.router().buildResponder()
    running.withLock { $0 = Running(backend: backend, responder: responder, death: death) }
    inspection.withLock { $0 = nil }
  }

  /// The process dies: the database is closed (what was committed stays in its file).
  public func crash() { running.withLock { $0 = nil } }

  /// The next upload's transaction dies at its commit, after its last write, and the server
  /// with it (or, with `false`, no longer). Nothing of that transaction stays: SQLite rolls it
  /// back, as after a crash.
  public func dieInsideNextUpload(_ armed: Bool = true) {
    running.withLock { $0?.death.arm(armed) }
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
    let answer = await handle(request, responder)
    if death.takeDied() {
      crash()
      return .died
    }
    return answer.map(Answer.answered) ?? .down
  }

  private func handle(_ request: CloudRequest, _ responder: RouterResponder<ServerContext>) async -> CloudResponse? {
    var fields = HTTPFields()
    for (name, value) in request.headers {
      if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
    }
    if let body = request.body { fields[.contentLength] = String(body.count) }
    let head = HTTPRequest(
      method: HTTPRequest.Method(request.method) ?? .get, scheme: "http", authority: "localhost",
      path: request.path, headerFields: fields)
    let hbRequest = Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: request.body ?? [])))
    var logger = Logger(label: "stasis.sim.request")
    logger.logLevel = .critical
    let context = ServerContext(
      source: ApplicationRequestContextSource(channel: NIOAsyncTestingChannel(), logger: logger))
    let response: Response
    do {
      response = try await responder.respond(to: hbRequest, context: context)
    } catch let error as any HTTPResponseError {
      guard let answer = try? error.response(from: hbRequest, context: context) else {
        return CloudResponse(status: 500)
      }
      response = answer
    } catch {
      return CloudResponse(status: 500)
    }
    let writer = CollectingWriter()
    try? await response.body.write(writer)
    return CloudResponse(
      status: Int(response.status.code), headers: response.headers.map { ($0.name.rawName, $0.value) },
      body: writer.bytes.withLock { $0 })
  }
}

/// Collects a response's body.
private final class CollectingWriter: ResponseBodyWriter, Sendable {
  let bytes = Mutex<[UInt8]>([])
  func write(_ buffer: ByteBuffer) async throws { bytes.withLock { $0.append(contentsOf: buffer.readableBytesView) } }
  func finish(_ trailingHeaders: HTTPFields?) async throws {}
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

/// The simulation's crash inside the server's upload, injected from outside the server: a GRDB
/// transaction observer on its database. When armed, the next transaction that stores a
/// revision throws from `databaseWillCommit`, after its last write and before its commit, and
/// GRDB rolls the transaction back (nothing of it stays, as after the process died there).
/// The server itself holds no crash switch.
final class DeathInsideCommit: TransactionObserver, Sendable {
  private struct State {
    var armed = false
    var storingRevision = false
    var died = false
  }
  private let state = Mutex(State())

  /// The error the commit throws, as the process dying there.
  struct Died: Error {}

  /// Arms (or disarms) the fault for the next transaction that stores a revision.
  func arm(_ armed: Bool) { state.withLock { $0.armed = armed } }

  /// True once, after an armed transaction died.
  func takeDied() -> Bool {
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
