import ArgumentParser
import Foundation
import Hummingbird
import Logging
import Metrics
import Prometheus
import ServiceLifecycle
import StasisServer

@main
struct StasisServerCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stasis-server",
    abstract: "Cloud saves for many players: Stasis save files by slot and revision, on SQLite or PostgreSQL.",
    discussion: """
      Example:
        stasis-server players add alice          # prints alice's bearer token
        stasis-server staff add sam --role support   # asks for sam's console password
        stasis-server serve --port 8080            # the studio console: http://127.0.0.1:8080/console
        curl -X PUT -H "Authorization: Bearer $TOKEN" -H "If-None-Match: *" \\
          -H "Content-Type: application/vnd.stasis" --data-binary @save.stasis http://127.0.0.1:8080/v1/slots/autosave
      """,
    subcommands: [Serve.self, Players.self, Staff.self, Admin.self]
  )
}

/// Where the data lives: `--database PATH` (SQLite, the default) or `--postgres URL`.
struct DatabaseOptions: ParsableArguments {
  @Option(help: "The SQLite database file (made with its folder when missing).")
  var database: String = "Saves/server.sqlite"

  @Option(help: "A PostgreSQL URL, postgres://USER:PASSWORD@HOST:PORT/DATABASE, instead of SQLite.")
  var postgres: String?

  @Option(help: "Pooled PostgreSQL connections per server.")
  var connections: Int = 20

  /// Descriptors the database keeps open at most: PostgreSQL's pooled sockets, or SQLite's
  /// files (the database, its WAL and shared memory, for the writer and each of GRDB's readers).
  var descriptorsNeeded: Int { postgres == nil ? 32 : connections + 4 }

  /// Opens the backend and runs `body` with it; a PostgreSQL pool runs for as long as `body` does.
  func withBackend<T: Sendable>(
    logger: Logger, statementTimeout: Duration? = nil,
    _ body: @Sendable (any SaveBackend, PostgresBackend?) async throws -> T
  ) async throws -> T {
    guard let postgres else {
      return try await body(try SQLiteBackend(path: database), nil)
    }
    let backend = try PostgresBackend(
      url: postgres, connections: connections, statementTimeout: statementTimeout, logger: logger)
    return try await withThrowingTaskGroup(of: T?.self) { group in
      group.addTask {
        await backend.run()
        return nil
      }
      defer { group.cancelAll() }
      try await backend.migrate()
      return try await body(backend, backend)
    }
  }
}

struct Serve: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Serve the v1 API until SIGTERM or SIGINT.",
    discussion: """
      Example:
        stasis-server serve --port 8080 --database Saves/server.sqlite
        stasis-server serve --postgres postgres://stasis:secret@127.0.0.1:5432/stasis
      """)

  @OptionGroup var storage: DatabaseOptions

  @Option(help: "The address to listen on.")
  var host = "127.0.0.1"

  @Option(help: "The port (0: any free port; the 'listening on' line says which).")
  var port = 8080

  @Option(help: "Revisions kept per slot.")
  var keepRevisions = 10

  @Option(help: "The largest upload, in bytes.")
  var maxBodyBytes = PlayerLimits().bodyBytes

  @Option(help: "Bytes of all of a player's stored revisions together.")
  var maxPlayerBytes = PlayerLimits().totalBytes

  @Option(help: "Slots per player.")
  var maxSlots = PlayerLimits().slots

  @Option(help: "The largest settings file a device may send, and the most a player's settings may take, in bytes.")
  var maxSettingsBytes = PlayerLimits().settingsBytes

  @Option(help: "The largest desync bundle a device may send, in bytes.")
  var maxBundleBytes = PlayerLimits().bundleBytes

  @Option(help: "Desync bundles kept per player (the oldest go first).")
  var keepBundles = PlayerLimits().bundlesKept

  @Option(help: "The largest replay a device may send, in bytes.")
  var maxReplayBytes = PlayerLimits().replayBytes

  @Option(help: "Replays kept per player (the least recently sent go first).")
  var keepReplays = PlayerLimits().replaysKept

  @Option(
    help: """
      Connections served at once (default: what the descriptor limit leaves after the database \
      and a reserve, at most 10000). Past it, 64 more are answered 503 with Retry-After and \
      closed, and the rest wait in the kernel's listen queue.
      """)
  var maxConnections: Int?

  @Option(
    help: """
      Seconds a client may take to send a whole request, headers and body, on any route; \
      an idle connection is closed after as long.
      """)
  var requestTimeout = 30.0

  @Option(help: .hidden)
  var bodyTimeout: Double?

  @Flag(help: "Mark the console's cookies Secure: the server is reached over TLS (through a proxy).")
  var secureCookies = false

  func validate() throws {
    guard keepRevisions >= 1 else { throw ValidationError("--keep-revisions is at least 1") }
    guard maxBodyBytes >= 1, maxPlayerBytes >= 1, maxSlots >= 1, maxSettingsBytes >= 1, maxBundleBytes >= 1,
      keepBundles >= 1, maxReplayBytes >= 1, keepReplays >= 1
    else {
      throw ValidationError("limits are at least 1")
    }
    guard requestTimeout > 0, requestTimeout <= 86_400, (bodyTimeout ?? 1) > 0 else {
      throw ValidationError("--request-timeout is between 0 and 86400 seconds")
    }
    guard (maxConnections ?? 1) >= 1 else { throw ValidationError("--max-connections is at least 1") }
  }

  /// `--body-timeout`, the older name, still counts: the shorter of the two applies.
  var effectiveRequestTimeout: Double { min(requestTimeout, bodyTimeout ?? requestTimeout) }

  func run() async throws {
    LoggingSystem.bootstrap(StreamLogHandler.standardError)
    let registry = PrometheusCollectorRegistry()
    MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    let logger = Logger(label: "stasis-server")
    // Before anything opens a file: every connection and database file takes a descriptor.
    let descriptors = DescriptorLimit.raiseToHard()
    let databaseDescriptors = storage.descriptorsNeeded
    let largest = ConnectionLimits.largest(descriptors: descriptors.soft, databaseDescriptors: databaseDescriptors)
    let limits: ConnectionLimits
    if let maxConnections {
      guard maxConnections <= largest else {
        throw ValidationError(
          "--max-connections \(maxConnections) does not fit the descriptor limit (\(descriptors.description)): "
            + "the database keeps \(databaseDescriptors), the server \(ConnectionLimits.reserved) and shedding "
            + "\(ConnectionLimits.defaultShedBand), which leaves \(max(0, largest)); raise ulimit -n or lower --max-connections"
        )
      }
      limits = ConnectionLimits(maximum: maxConnections)
    } else {
      guard largest >= 1 else {
        throw ValidationError(
          "the descriptor limit (\(descriptors.description)) leaves no connection once the database keeps "
            + "\(databaseDescriptors) and the server \(ConnectionLimits.reserved + ConnectionLimits.defaultShedBand): raise ulimit -n"
        )
      }
      limits = .automatic(descriptors: descriptors.soft, databaseDescriptors: databaseDescriptors)
    }
    let gate = ConnectionGate(limits)
    let timeout = effectiveRequestTimeout
    let options = ServerOptions(
      host: host, port: port, keepRevisions: keepRevisions,
      limits: PlayerLimits(
        totalBytes: maxPlayerBytes, slots: maxSlots, bodyBytes: maxBodyBytes, settingsBytes: maxSettingsBytes,
        bundleBytes: maxBundleBytes, bundlesKept: keepBundles, replayBytes: maxReplayBytes,
        replaysKept: keepReplays),
      requestTimeout: .milliseconds(Int64(timeout * 1000)), secureCookies: secureCookies)
    let storageName = storage.postgres == nil ? "sqlite \(storage.database)" : "postgresql"
    // A statement outlives no request: PostgreSQL cancels it a second after the request's deadline.
    try await storage.withBackend(logger: logger, statementTimeout: .milliseconds(Int64(timeout * 1000) + 1000)) {
      backend, _ in
      let server = SaveServer(backend: backend, options: options, metrics: { registry.emitToBuffer() })
      let app = Application(
        router: server.router(),
        server: server.httpServer(gate: gate),
        configuration: .init(
          address: .hostname(options.host, port: options.port), serverName: "stasis-server",
          availableConnectionsDelegate: gate.acceptance),
        onServerRunning: { channel in
          let port = channel.localAddress?.port ?? options.port
          // Unbuffered, so a supervisor or a test reading the pipe sees it at once.
          let line =
            "stasis-server listening on \(options.host):\(port) (\(storageName)); "
            + "descriptors: \(descriptors.description); max connections \(limits.maximum) "
            + "(+\(limits.shedBand) answered 503); request timeout \(Self.seconds(timeout))\n"
          FileHandle.standardOutput.write(Data(line.utf8))
        },
        logger: logger)
      let group = ServiceGroup(
        configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
      try await group.run()
    }
  }

  private static func seconds(_ value: Double) -> String {
    value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
  }
}

struct Players: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Add, list and revoke players.", subcommands: [Add.self, List.self, Revoke.self])

  struct Add: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Add a player and print their bearer token on one line (only its hash is stored).",
      discussion: "Example:\n  TOKEN=$(stasis-server players add alice)")

    @Argument(help: "The player's name.")
    var name: String

    @OptionGroup var storage: DatabaseOptions

    func validate() throws {
      guard !name.isEmpty, name.utf8.count <= 64, !name.contains(where: { $0.isNewline || $0 == "\0" }) else {
        throw ValidationError("a player's name is 1-64 bytes on one line")
      }
    }

    func run() async throws {
      let token = BearerToken.generate()
      let name = self.name
      do {
        _ = try await storage.withBackend(logger: Logger(label: "stasis-server")) { backend, _ in
          try await backend.addPlayer(
            name: name, tokenHash: BearerToken.hash(token), at: nowMilliseconds())
        }
      } catch let error as StorageError where error.kind == .nameTaken {
        FileHandle.standardError.write(Data("error: \(error.description)\n".utf8))
        throw ExitCode(1)
      }
      print(token)
    }
  }

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the players.")

    @OptionGroup var storage: DatabaseOptions

    func run() async throws {
      let players = try await storage.withBackend(logger: Logger(label: "stasis-server")) { backend, _ in
        try await backend.players()
      }
      for player in players {
        print("\(player.name)\t\(player.revoked ? "revoked" : "active")")
      }
    }
  }

  struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Revoke a player's token: it opens nothing from now on.")

    @Argument(help: "The player's name.")
    var name: String

    @OptionGroup var storage: DatabaseOptions

    func run() async throws {
      let name = self.name
      let found = try await storage.withBackend(logger: Logger(label: "stasis-server")) { backend, _ in
        try await backend.revokePlayer(name: name)
      }
      guard found else {
        FileHandle.standardError.write(Data("error: no player named '\(name)'\n".utf8))
        throw ExitCode(1)
      }
      print("revoked \(name)")
    }
  }
}
