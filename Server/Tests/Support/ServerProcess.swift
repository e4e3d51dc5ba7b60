import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import Stasis
import StasisDemoGame
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The server's package (`Server/`), whose `.build` holds what the tests run.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent()

/// The repository: the demo's levels, `docs/openapi.yaml`, the schemathesis environment.
let repositoryRoot = packageRoot.deletingLastPathComponent()

/// Where `swift build` put the tests, and the server beside them: `Server/.build/debug` by
/// default, the root's `.build/debug` when the tests were built with `--scratch-path ../.build`
/// (as `scripts/test.sh` builds them, so the packages both need are compiled once).
let productsFolder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
  .deletingLastPathComponent()

/// The built `stasis-server` (`swift build` puts it next to the tests); `STASIS_SERVER_BINARY`
/// names another one.
let serverBinary: String = {
  if let path = ProcessInfo.processInfo.environment["STASIS_SERVER_BINARY"], !path.isEmpty { return path }
  let beside = productsFolder.appendingPathComponent("stasis-server").path
  let release = productsFolder.deletingLastPathComponent().appendingPathComponent("release/stasis-server").path
  if ProcessInfo.processInfo.environment["STASIS_USE_RELEASE"] == "1", FileManager.default.fileExists(atPath: release) {
    return release
  }
  if FileManager.default.fileExists(atPath: beside) { return beside }
  return packageRoot.appendingPathComponent(".build/debug/stasis-server").path
}()

/// The two backends every server test runs against.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case sqlite
  case postgres

  var testDescription: String { rawValue }

  /// The PostgreSQL the tests use: `scripts/test.sh` installs and starts it and sets this.
  static var postgresURL: String? { ProcessInfo.processInfo.environment["STASIS_TEST_POSTGRES_URL"] }
}

/// A fresh database for one test: a SQLite file in a new folder, or the shared PostgreSQL
/// database (tests keep apart by their players, each with a new name).
struct Database: Sendable {
  let backend: Backend
  /// The SQLite file (SQLite), or nil.
  let sqlitePath: String?
  /// The PostgreSQL URL (PostgreSQL), or nil.
  let postgresURL: String?
  /// What `stasis-server` is given to open it.
  var arguments: [String] { sqlitePath.map { ["--database", $0] } ?? ["--postgres", postgresURL ?? ""] }

  /// A PostgreSQL database of the test's own (made by it), at `postgresURL`.
  init(postgresURL: String) {
    backend = .postgres
    sqlitePath = nil
    self.postgresURL = postgresURL
  }

  init(_ backend: Backend) throws {
    self.backend = backend
    switch backend {
    case .sqlite:
      let folder = temporaryURL("stasis-server")
      sqlitePath = folder.appendingPathComponent("server.sqlite").path
      postgresURL = nil
    case .postgres:
      guard let url = Backend.postgresURL else {
        // Never a skip: without PostgreSQL the PostgreSQL half of the suite fails, loudly.
        throw ServerTestError("STASIS_TEST_POSTGRES_URL is not set: run scripts/test.sh, which starts PostgreSQL")
      }
      sqlitePath = nil
      postgresURL = url
    }
  }

  /// `stasis-server players add NAME`: the token it printed.
  func addPlayer(_ name: String = "p-\(UUID().uuidString.prefix(8))") throws -> (name: String, token: String) {
    let result = try run(serverBinary, ["players", "add", name] + arguments)
    guard result.status == 0 else { throw ServerTestError("players add failed: \(result.err)") }
    let lines = result.out.split(separator: "\n")
    guard lines.count == 1 else { throw ServerTestError("players add printed \(lines.count) lines") }
    return (name, String(lines[0]))
  }
}

struct ServerTestError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// A `stasis-server serve` process on a free loopback port. The tests wait on what it prints
/// (its `listening on` line), never on time.
final class ServerProcess: @unchecked Sendable {
  let process = Process()
  let port: Int
  private let errors: Pipe
  /// What it logged so far: read as it comes, so a busy server never blocks on a full pipe.
  private let logged = LockedData()

  /// The `listening on` line.
  let banner: String

  /// Starts a server; with `descriptors`, under that `ulimit -n` (soft and hard), set by a
  /// shell (soft first, then hard) that then becomes the server (`exec`), so the process is the server itself.
  init(_ database: Database, _ extra: [String] = [], descriptors: (soft: Int, hard: Int)? = nil) throws {
    let arguments = ["serve", "--port", "0"] + database.arguments + extra
    if let descriptors {
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      process.arguments =
        ["-c", "ulimit -Sn \(descriptors.soft) && ulimit -Hn \(descriptors.hard) && exec \"$0\" \"$@\"", serverBinary]
        + arguments
    } else {
      process.executableURL = URL(fileURLWithPath: serverBinary)
      process.arguments = arguments
    }
    let output = Pipe()
    errors = Pipe()
    process.standardOutput = output
    process.standardError = errors
    let logged = self.logged
    errors.fileHandleForReading.readabilityHandler = { handle in logged.append(handle.availableData) }
    try launch(process)
    // The first line of standard output says where it listens.
    var line = Data()
    let handle = output.fileHandleForReading
    while !line.contains(UInt8(ascii: "\n")) {
      let chunk = handle.availableData
      if chunk.isEmpty { break }
      line += chunk
    }
    let text = String(decoding: line, as: UTF8.self)
    guard let range = text.range(of: #"listening on 127\.0\.0\.1:(\d+)"#, options: .regularExpression),
      let port = Int(text[range].split(separator: ":").last ?? "")
    else {
      process.terminate()
      throw ServerTestError("stasis-server did not start: \(text)")
    }
    self.port = port
    banner = text
  }

  var base: String { "http://127.0.0.1:\(port)" }

  /// Sends a signal and waits for the process to end; returns its exit status.
  @discardableResult
  func stop(_ signal: Int32 = SIGTERM) -> Int32 {
    if process.isRunning { kill(process.processIdentifier, signal) }
    process.waitUntilExit()
    return process.terminationStatus
  }

  /// What it logged, once it has ended.
  var log: String {
    errors.fileHandleForReading.readabilityHandler = nil
    logged.append(errors.fileHandleForReading.readDataToEndOfFile())
    return String(decoding: logged.data, as: UTF8.self)
  }

  deinit { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
}

/// Bytes appended from a pipe's handler thread and read from the test's.
final class LockedData: @unchecked Sendable {
  private let lock = NSLock()
  private var bytes = Data()

  func append(_ more: Data) { lock.withLock { bytes += more } }
  var data: Data { lock.withLock { bytes } }
}

/// Runs a command to its end, reading its standard error as it comes (so neither pipe fills).
/// Launches take turns (a SIGSEGV was seen in `Process.run()` with launches from several
/// threads at once); serialising them costs microseconds per launch.
private let launches = NSLock()

/// `process.run()`, one launch at a time in this test process.
func launch(_ process: Process) throws {
  launches.lock()
  defer { launches.unlock() }
  try process.run()
}

/// Runs a program to its end: its status and what it printed. `input` is its standard input;
/// `environment` is added to this process's.
func run(_ executable: String, _ arguments: [String], input: String? = nil, environment: [String: String] = [:])
  throws -> (status: Int32, out: String, err: String)
{
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  if !environment.isEmpty {
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
  }
  let out = Pipe()
  let err = Pipe()
  process.standardOutput = out
  process.standardError = err
  let stdin = Pipe()
  if input != nil { process.standardInput = stdin }
  let errors = LockedData()
  err.fileHandleForReading.readabilityHandler = { handle in errors.append(handle.availableData) }
  try launch(process)
  if let input {
    stdin.fileHandleForWriting.write(Data(input.utf8))
    try stdin.fileHandleForWriting.close()
  }
  let outData = out.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  err.fileHandleForReading.readabilityHandler = nil
  errors.append(err.fileHandleForReading.readDataToEndOfFile())
  return (
    process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errors.data, as: UTF8.self)
  )
}

/// One HTTP exchange's result.
struct Reply: Sendable {
  var status: Int
  var headers: [(String, String)]
  var body: [UInt8]

  func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
  var json: [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
  }
  var text: String { String(decoding: body, as: UTF8.self) }
}

/// A client that speaks to the server as any HTTP client would: over a socket to a running
/// `stasis-server` (``init(base:token:)``), or straight to its router in this process
/// (``RouterServer/client(token:)``), with the same replies.
struct Client: Sendable {
  private enum Transport: Sendable {
    case http(base: String)
    case router(any TestClientProtocol, ServerThreads)
  }
  private let transport: Transport
  var token: String?

  /// A client of the server at `base` (`http://127.0.0.1:PORT`).
  init(base: String, token: String? = nil) {
    transport = .http(base: base)
    self.token = token
  }

  /// A client of a router under HummingbirdTesting's `.router` mode, whose requests the
  /// router answers on `threads`.
  init(router: any TestClientProtocol, threads: ServerThreads, token: String? = nil) {
    transport = .router(router, threads)
    self.token = token
  }

  /// Sends a request; `body` goes as a save (`Content-Type: application/vnd.stasis`), `raw`
  /// as it is, with the headers given.
  func send(
    _ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil, raw: [UInt8]? = nil
  ) async throws -> Reply {
    var fields: [(String, String)] = []
    if let token { fields.append(("Authorization", "Bearer \(token)")) }
    fields += headers
    if body != nil { fields.append(("Content-Type", "application/vnd.stasis")) }
    let bytes = raw ?? body
    switch transport {
    case .http(let base): return try await Self.send(method, base + path, fields, bytes)
    case .router(let router, let threads):
      var request = HTTPFields()
      for (name, value) in fields {
        guard let field = HTTPField.Name(name) else { throw ServerTestError("not a header name: \(name)") }
        request.append(HTTPField(name: field, value: value))
      }
      let response = try await withTaskExecutorPreference(threads) {
        try await router.execute(
          uri: path, method: HTTPRequest.Method(method.rawValue)!, headers: request,
          body: bytes.map { ByteBuffer(bytes: $0) })
      }
      return Reply(
        status: Int(response.status.code), headers: response.headers.map { ($0.name.rawName, $0.value) },
        body: [UInt8](buffer: response.body))
    }
  }

  private static func send(_ method: HTTPMethod, _ url: String, _ headers: [(String, String)], _ body: [UInt8]?)
    async throws -> Reply
  {
    var request = HTTPClientRequest(url: url)
    request.method = method
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
    var attempts = 0
    while true {
      do {
        let response = try await http.execute(request, timeout: .seconds(60))
        let collected = try await response.body.collect(upTo: 64 << 20)
        return Reply(
          status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
          body: [UInt8](buffer: collected))
      } catch  where method == .GET && attempts < 2 && isStaleConnection(error) {
        // A pooled keep-alive connection the server closed just as it was reused (or an
        // earlier test's server, stopped, whose port a new server got: CI, 2026-11-25): a GET
        // is safe to send again.
        attempts += 1
      }
    }
  }

  /// The tests' HTTP client: a connection idle for 5 s is closed, well before a server's
  /// 30 s request deadline closes it from its side (a race a reused connection can lose).
  private static let http: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.idleTimeout = .seconds(5)
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
  }()

  /// A connection that ended before its answer: closed by the server, or seen by the parser
  /// as an early end of stream.
  private static func isStaleConnection(_ error: any Error) -> Bool {
    if let error = error as? HTTPClientError { return error == .remoteConnectionClosed }
    if let error = error as? HTTPParserError { return error == .invalidEOFState }
    return false
  }

  func put(_ slot: String, _ file: [UInt8], ifMatch: Int64? = nil, create: Bool = false) async throws -> Reply {
    var headers: [(String, String)] = []
    if let ifMatch { headers.append(("If-Match", "\"\(ifMatch)\"")) }
    if create { headers.append(("If-None-Match", "*")) }
    return try await send(.PUT, "/v1/slots/\(slot)", headers: headers, body: file)
  }
}

/// Real demo saves: the first level a few seconds in (about 12 KB) and the stress level with
/// its 5,200 marbles (about 380 KB), each `variant` a different state.
enum DemoSaves {
  static let library = LevelLibrary(folder: repositoryRoot.appendingPathComponent("Assets/levels").path)

  static func save(level: Int, steps: Int, seed: UInt64 = 1) throws -> [UInt8] {
    var engine = try Engine(library: library, level: level, seed: seed)
    for _ in 0..<steps { _ = engine.step(Input(right: true)) }
    let state = engine.snapshot()
    return SaveFileFormat.encode(
      try DemoSaveFormat.codec.document(for: state, summary: try state.summary(), createdAt: 1_795_000_000_000))
  }

  static let small: [[UInt8]] = (0..<4).map { try! save(level: 1, steps: 60 + $0 * 30) }
  static let large: [UInt8] = try! save(level: 3, steps: 2)
}

func sha256(_ bytes: [UInt8]) -> String { SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() }

/// A raw HTTP/1.1 exchange over a socket: for what no well-behaved client sends (a body that
/// never finishes). Sends `bytes`, then reads until the server closes or answers.
func rawExchange(port: Int, _ bytes: [UInt8]) throws -> String {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { throw ServerTestError("socket failed") }
  defer { close(fd) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = in_port_t(UInt16(port).bigEndian)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  let connected = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
  }
  guard connected == 0 else { throw ServerTestError("connect failed") }
  _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  var response: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 65536)
  while true {
    let count = recv(fd, &buffer, buffer.count, 0)
    if count <= 0 { break }
    response += buffer[0..<count]
    if let text = String(bytes: response, encoding: .utf8), let end = text.range(of: "\r\n\r\n"),
      let lengthLine = text[..<end.lowerBound].split(separator: "\r\n").first(where: {
        $0.lowercased().hasPrefix("content-length:")
      }), let length = Int(lengthLine.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)),
      response.count >= text[..<end.upperBound].utf8.count + length
    {
      break
    }
  }
  return String(decoding: response, as: UTF8.self)
}

/// A built product of the root package: the CLI and the demo are the root package's products, built once by `swift build` at the
/// repository's root (as a player builds them), never again inside `Server/`.
func product(_ name: String) -> String {
  repositoryRoot.appendingPathComponent(".build/debug/\(name)").path
}

/// `stasis-demo --headless … --json`: its summary.
func demo(_ arguments: [String]) throws -> (status: Int32, json: [String: Any], err: String) {
  let result = try run(product("stasis-demo"), ["--headless", "--json"] + arguments)
  let json = (try? JSONSerialization.jsonObject(with: Data(result.out.utf8))) as? [String: Any] ?? [:]
  return (result.status, json, result.err)
}

/// Two `stasis-server` processes on one PostgreSQL, and a client of one player on each: the
/// shape of every test that two servers share one database safely. Both are stopped after `body`.
func withTwoServers<Result>(_ body: (_ clients: [Client]) async throws -> Result)
  async throws -> Result
{
  let database = try Database(.postgres)
  let player = try database.addPlayer()
  let first = try ServerProcess(database)
  let second = try ServerProcess(database)
  defer {
    first.stop()
    second.stop()
  }
  return try await body(
    [Client(base: first.base, token: player.token), Client(base: second.base, token: player.token)])
}
