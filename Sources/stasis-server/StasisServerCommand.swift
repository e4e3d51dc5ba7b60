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
        stasis-server serve --port 8080
        curl -X PUT -H "Authorization: Bearer $TOKEN" -H "If-None-Match: *" \\
          -H "Content-Type: application/vnd.stasis" --data-binary @save.stasis http://127.0.0.1:8080/v1/slots/autosave
      """,
    subcommands: [Serve.self, Players.self]
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

  /// Opens the backend and runs `body` with it; a PostgreSQL pool runs for as long as `body` does.
  func withBackend<T: Sendable>(
    logger: Logger, _ body: @Sendable (any SaveBackend, PostgresBackend?) async throws -> T
  ) async throws -> T {
    guard let postgres else {
      return try await body(try SQLiteBackend(path: database), nil)
    }
    let backend = try PostgresBackend(url: postgres, connections: connections, logger: logger)
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

  @Option(help: "Seconds a client may take to send an upload's body.")
  var bodyTimeout = 30.0

  func validate() throws {
    guard keepRevisions >= 1 else { throw ValidationError("--keep-revisions is at least 1") }
    guard maxBodyBytes >= 1, maxPlayerBytes >= 1, maxSlots >= 1 else {
      throw ValidationError("limits are at least 1")
    }
    guard bodyTimeout > 0 else { throw ValidationError("--body-timeout is positive") }
  }

  func run() async throws {
    LoggingSystem.bootstrap(StreamLogHandler.standardError)
    let registry = PrometheusCollectorRegistry()
    MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
    let logger = Logger(label: "stasis-server")
    let options = ServerOptions(
      host: host, port: port, keepRevisions: keepRevisions,
      limits: PlayerLimits(totalBytes: maxPlayerBytes, slots: maxSlots, bodyBytes: maxBodyBytes),
      bodyTimeout: .milliseconds(Int64(bodyTimeout * 1000)))
    let storageName = storage.postgres == nil ? "sqlite \(storage.database)" : "postgresql"
    try await storage.withBackend(logger: logger) { backend, _ in
      let server = SaveServer(backend: backend, options: options, metrics: { registry.emitToBuffer() })
      let app = Application(
        router: server.router(),
        // Headers up to 1 MB reach the router, which refuses more than 16 KB with a JSON 431.
        server: .http1(
          configuration: .init(
            idleTimeout: .seconds(75),
            httpDecoderConfiguration: .init(maxHeaderFieldSize: 1 << 20, maxHeaderListSize: 1 << 20))),
        configuration: .init(address: .hostname(options.host, port: options.port), serverName: "stasis-server"),
        onServerRunning: { channel in
          let port = channel.localAddress?.port ?? options.port
          // Unbuffered, so a supervisor or a test reading the pipe sees it at once.
          let line = "stasis-server listening on \(options.host):\(port) (\(storageName))\n"
          FileHandle.standardOutput.write(Data(line.utf8))
        },
        logger: logger)
      let group = ServiceGroup(
        configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
      try await group.run()
    }
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
            name: name, tokenHash: BearerToken.hash(token), at: Int64(Date().timeIntervalSince1970 * 1000))
        }
      } catch let error as PlayerError {
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
