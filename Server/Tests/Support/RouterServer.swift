import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import StasisServer
import Synchronization

/// The server's real router (`SaveServer(…).router()`, its middleware included) over a test
/// database on either backend, in this process, driven by HummingbirdTesting's router mode:
/// each request goes straight to the router, with no socket and no `stasis-server` process.
/// For what the API answers; what needs a socket (a deadline, a flood, a kill, the HTTP
/// parser's own errors, a second server) runs a ``ServerProcess``.
///
/// The server runs on threads of its own (``ServerThreads``), as a process would: a test
/// blocks the cooperative pool while it waits on a `stasis-server players add`, which may
/// wait on a PostgreSQL lock the in-process server holds (its migration's advisory lock).
struct RouterServer: Sendable {
  let database: Database
  /// The backend the router stores into, as `stasis-server serve` opens it.
  let backend: any SaveBackend
  /// What the server logged (at `debug` and above: more than `serve` writes).
  let log: CapturedLog
  private let tester: any TestClientProtocol
  private let threads: ServerThreads

  /// A client for `token` (none: no `Authorization`), with the replies a live ``Client`` gets.
  func client(token: String? = nil) -> Client { Client(router: tester, threads: threads, token: token) }

  /// Adds a player as `stasis-server players add` does, in this process: its name and token.
  func addPlayer(_ name: String = "p-\(UUID().uuidString.prefix(8))") async throws -> (name: String, token: String) {
    let token = BearerToken.generate()
    try await withTaskExecutorPreference(threads) {
      _ = try await backend.addPlayer(name: name, tokenHash: BearerToken.hash(token), at: nowMilliseconds())
    }
    return (name, token)
  }

  /// Opens `database` as `serve` does (a PostgreSQL pool runs for as long as `body`), builds
  /// the router with `options`, and runs `body` with HummingbirdTesting's `.router` client.
  static func test<Value: Sendable>(
    _ database: Database, options: ServerOptions = ServerOptions(),
    _ body: @Sendable (RouterServer) async throws -> Value
  ) async throws -> Value {
    let log = CapturedLog()
    let logger = Logger(label: "stasis-server") { _ in CapturingLogHandler(log: log) }
    let threads = ServerThreads(count: max(2, ProcessInfo.processInfo.activeProcessorCount))
    defer { threads.stop() }
    if let path = database.sqlitePath {
      return try await run(SQLiteBackend(path: path), database, options, log, logger, threads, body)
    }
    guard let url = database.postgresURL else {
      throw ServerTestError("a database that is neither SQLite nor PostgreSQL")
    }
    // As `serve` does: a statement outlives no request.
    let backend = try PostgresBackend(
      url: url, statementTimeout: options.requestTimeout + .seconds(1), logger: logger)
    return try await withThrowingTaskGroup(of: Value?.self) { group in
      group.addTask(executorPreference: threads) {
        await backend.run()
        return nil
      }
      defer { group.cancelAll() }
      try await withTaskExecutorPreference(threads) { try await backend.migrate() }
      return try await run(backend, database, options, log, logger, threads, body)
    }
  }

  private static func run<Value: Sendable>(
    _ backend: any SaveBackend, _ database: Database, _ options: ServerOptions, _ log: CapturedLog, _ logger: Logger,
    _ threads: ServerThreads, _ body: @Sendable (RouterServer) async throws -> Value
  ) async throws -> Value {
    let router = SaveServer(backend: backend, options: options).router()
    let app = Application(router: router, logger: logger)
    return try await app.test(.router) { tester in
      try await body(RouterServer(database: database, backend: backend, log: log, tester: tester, threads: threads))
    }
  }
}

/// Threads that run the in-process server's tasks (a task executor): its own, like a process's,
/// apart from the cooperative pool the tests block.
final class ServerThreads: TaskExecutor, @unchecked Sendable {
  private let condition = NSCondition()
  private var jobs: [UnownedJob] = []
  private var stopped = false

  init(count: Int) {
    for index in 0..<count {
      let thread = Thread { [self] in work() }
      thread.name = "router-server-\(index)"
      thread.start()
    }
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    condition.lock()
    defer { condition.unlock() }
    guard !stopped else {
      // Late (the server is done): on a thread of its own, so it still runs.
      Thread { job.runSynchronously(on: self.asUnownedTaskExecutor()) }.start()
      return
    }
    jobs.append(job)
    condition.signal()
  }

  /// The threads end once the jobs queued so far have run.
  func stop() {
    condition.lock()
    stopped = true
    condition.broadcast()
    condition.unlock()
  }

  private func work() {
    while true {
      condition.lock()
      while jobs.isEmpty && !stopped { condition.wait() }
      guard !jobs.isEmpty else {
        condition.unlock()
        return
      }
      let job = jobs.removeFirst()
      condition.unlock()
      job.runSynchronously(on: asUnownedTaskExecutor())
    }
  }
}

/// Log lines kept in memory, for a test to search.
final class CapturedLog: Sendable {
  private let lines = Mutex<[String]>([])

  func append(_ line: String) { lines.withLock { $0.append(line) } }
  /// Every line so far, one a line.
  var text: String { lines.withLock { $0.joined(separator: "\n") } }
}

/// Writes each message, with its metadata, to a ``CapturedLog``.
struct CapturingLogHandler: LogHandler {
  let log: CapturedLog
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .debug

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    let all = metadata.merging(event.metadata ?? [:]) { $1 }
    log.append("\(event.level) \(event.message) \(all.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))")
  }
}
