import ArgumentParser
import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Stasis
import StasisDemoGame
import StasisServer
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The save server under load: K players at once, each downloading its slot and uploading
/// real demo saves on the right base (plus a share on a stale one, which must get 412), against
/// SQLite and PostgreSQL; and, in the same run, pgbench inserting the same bytes into the same
/// PostgreSQL, one bytea per transaction: the store's physical limit.
@main
struct StasisLoad: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stasis-load",
    abstract: "Load-test stasis-server on both backends and compare with pgbench on the same database.",
    discussion: """
      Run it from the repository (it reads the demo's levels in Assets/levels). Example:
        swift build -c release --product stasis-server
        swift build -c release --product stasis-load
        .build/release/stasis-load --postgres postgres://stasis:stasis@127.0.0.1:5432/stasis_test
      `stasis-load failover` checks a cluster (scripts/cluster.sh) through failures.
      """,
    subcommands: [Failover.self])

  @Option(help: "Concurrent players.")
  var clients = 64

  @Option(help: "Seconds measured per row (after the warm-up).")
  var seconds = 20.0

  @Option(help: "Seconds of load before the measurement starts (connections, caches).")
  var warmup = 2.0

  @Option(help: "One upload in N is a large save (the stress level, about 380 KB); the rest are about 12 KB.")
  var largeEvery = 10

  @Option(help: "One upload in N carries a stale base and must be refused with 412.")
  var staleEvery = 10

  @Option(help: "PostgreSQL for the PostgreSQL rows and pgbench (none: SQLite only).")
  var postgres: String?

  @Option(help: "The server's pooled PostgreSQL connections (its --connections).")
  var serverConnections = 20

  @Option(
    help: ArgumentHelp(
      "pgbench's bytea storage: EXTERNAL, as the server stores saves, or EXTENDED (compressed), PostgreSQL's default.",
      valueName: "storage"))
  var pgbenchStorage = "EXTERNAL"

  @Option(
    parsing: .upToNextOption,
    help: ArgumentHelp(
      "pgbench's -M, one row each: simple (the bytes sent as hex text and parsed each time) or prepared "
        + "(parsed once per connection: the bytes are not sent again).", valueName: "mode"))
  var pgbenchMode = ["simple", "prepared"]

  @Flag(help: "Leave out the SQLite row.")
  var skipSqlite = false

  @Option(help: "The stasis-server to start (default: next to this executable).")
  var server: String?

  @Option(
    help: ArgumentHelp(
      "Servers already running behind this URL (scripts/cluster.sh's front, with --postgres its database-url): "
        + "none is started, and the server's CPU is every stasis-server process's.", valueName: "url"))
  var front: String?

  func validate() throws {
    guard pgbenchMode.allSatisfy({ ["simple", "extended", "prepared"].contains($0) }) else {
      throw ValidationError("--pgbench-mode takes simple, extended or prepared")
    }
    guard ["EXTERNAL", "EXTENDED"].contains(pgbenchStorage) else {
      throw ValidationError("--pgbench-storage is EXTERNAL or EXTENDED")
    }
    if front != nil, postgres == nil || !skipSqlite {
      throw ValidationError(
        "--front needs --postgres (the cluster's database: scripts/cluster.sh database-url) and --skip-sqlite")
    }
    guard clients >= 1, seconds >= 3, warmup >= 0, largeEvery >= 1, staleEvery >= 2, serverConnections >= 1 else {
      throw ValidationError("--clients ≥ 1, --seconds ≥ 3, --warmup ≥ 0, --large-every ≥ 1, --stale-every ≥ 2")
    }
  }

  func run() async throws {
    LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
    let library = LevelLibrary(folder: try assetsFolder())
    // The issue's byte mix: level 2 two seconds in (about 12 KB), and the stress level's 5,200
    // marbles one second in, with their contact cache (about 380 KB).
    let small = try demoSave(library, level: 2, steps: 120)
    let large = try demoSave(library, level: 3, steps: 60)
    print(
      "saves: \(small.count) and \(large.count) bytes (1 in \(largeEvery) large); \(clients) players; "
        + "1 upload in \(staleEvery) stale; \(warmup) s warm-up, then \(seconds) s measured per row")
    var rows: [Row] = []
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stasis-load-\(getpid())")
    defer { try? FileManager.default.removeItem(at: folder) }
    if !skipSqlite {
      let path = folder.appendingPathComponent("load.sqlite").path
      rows.append(
        try await measure(
          label: "stasis-server, SQLite", arguments: ["--database", path], backend: try SQLiteBackend(path: path),
          small: small, large: large))
    }
    if let postgres {
      let backend = try PostgresBackend(url: postgres, connections: 4, logger: Logger(label: "load"))
      let row = try await withThrowingTaskGroup(of: Row?.self) { group in
        group.addTask {
          await backend.run()
          return nil
        }
        defer { group.cancelAll() }
        try await backend.migrate()
        return try await measure(
          label: front == nil ? "stasis-server, PostgreSQL" : "stasis-server ×3 behind HAProxy, PostgreSQL + standby",
          arguments: ["--postgres", postgres, "--connections", "\(serverConnections)"], backend: backend,
          small: small, large: large)
      }
      rows.append(row)
      for mode in pgbenchMode {
        let pgbench = Pgbench(
          url: postgres, clients: clients, seconds: seconds, largeEvery: largeEvery, storage: pgbenchStorage,
          mode: mode)
        rows.append(try await pgbench.run(small: small, large: large))
        print(rows[rows.count - 1].markdown)
      }
    }
    print("")
    print(Row.header)
    for row in rows { print(row.markdown) }
    if postgres != nil, let server = rows.first(where: { $0.label.contains("PostgreSQL") }) {
      print(
        "\nPostgreSQL: p50 \(String(format: "%.1f", server.p50)) ms, p99 \(String(format: "%.1f", server.p99)) ms (target < 100 ms)"
      )
      if let serverCPU = server.serverPerWrite, let databaseCPU = server.postgresPerWrite {
        print(
          "  CPU per acknowledged write: the server \(String(format: "%.2f", serverCPU)) ms, PostgreSQL "
            + "\(String(format: "%.2f", databaseCPU)) ms: \(String(format: "%.2f", serverCPU / databaseCPU))× (target ≤ 0.5×)"
        )
      }
      for (mode, pgbench) in zip(pgbenchMode, rows.suffix(pgbenchMode.count)) {
        var line =
          "  \(String(format: "%.2f", server.perSecond / pgbench.perSecond))× pgbench -M \(mode)'s transactions/s "
          + (mode == "simple" ? "(target ≥ 0.6×)" : "(reported beside it)")
        if let upload = server.postgresPerWrite, let insert = pgbench.postgresPerWrite {
          line +=
            "; PostgreSQL's CPU per upload \(String(format: "%.2f", upload / insert))× per pgbench insert (target ≤ 1.5×)"
        }
        print(line)
      }
    }
  }

  private func assetsFolder() throws -> String {
    let starts = [
      URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent(),
      URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
    ]
    for start in starts {
      var folder = start.standardized
      while folder.path != "/" {
        let levels = folder.appendingPathComponent("Assets/levels")
        if FileManager.default.fileExists(atPath: levels.path) { return levels.path }
        folder.deleteLastPathComponent()
      }
    }
    throw ValidationError("run from the repository: Assets/levels holds the demo's levels")
  }

  private func demoSave(_ library: LevelLibrary, level: Int, steps: Int) throws -> [UInt8] {
    var engine = try Engine(library: library, level: level, seed: 1)
    for _ in 0..<steps { _ = engine.step(Input(right: true)) }
    let state = engine.snapshot()
    return SaveFileFormat.encode(
      try DemoSaveFormat.codec.document(for: state, summary: try state.summary(), createdAt: 1_795_000_000_000))
  }

  /// Starts a server over `arguments`, gives each player a slot, runs the load, and measures
  /// what happened after the warm-up.
  private func measure(label: String, arguments: [String], backend: any SaveBackend, small: [UInt8], large: [UInt8])
    async throws -> Row
  {
    var tokens: [String] = []
    let run = UUID().uuidString.prefix(8)
    for index in 0..<clients {
      let token = BearerToken.generate()
      _ = try await backend.addPlayer(name: "load-\(run)-\(index)", tokenHash: BearerToken.hash(token), at: 0)
      tokens.append(token)
    }
    // The server: one started here, or the servers already behind `--front` (a cluster), whose
    // CPU is every `stasis-server` process's on this machine.
    var process: ChildProcess?
    defer {
      process?.signal(SIGTERM)
      process?.wait()
    }
    let base: String
    if let front {
      base = "\(front)/v1/slots/slot"
    } else {
      let serverPath =
        server
        ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
          "stasis-server"
        ).path
      let started = try ChildProcess(serverPath, ["serve", "--port", "0"] + arguments, showErrors: false)
      process = started
      var line = Data()
      while !line.contains(UInt8(ascii: "\n")) {
        let chunk = started.output.availableData
        if chunk.isEmpty { break }
        line += chunk
      }
      let text = String(decoding: line, as: UTF8.self)
      guard let range = text.range(of: #"listening on [^ ]+:[0-9]+"#, options: .regularExpression),
        let port = Int(text[range].split(separator: ":").last ?? "")
      else { throw ValidationError("stasis-server did not start: \(text)") }
      base = "http://127.0.0.1:\(port)/v1/slots/slot"
    }
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: clients)
    let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)

    let results = Tally()
    let start = ContinuousClock.now
    let measured = start + .milliseconds(Int64(warmup * 1000))
    let deadline = measured + .milliseconds(Int64(seconds * 1000))
    let (largeEvery, staleEvery) = (self.largeEvery, self.staleEvery)
    // Two of each, a step apart, taken in turn: a save never repeats the head's bytes, which
    // the server would answer as a retry of the upload that stored them, not as a new write.
    let library = LevelLibrary(folder: try assetsFolder())
    let bodies = (
      small: [ByteBuffer(bytes: small), ByteBuffer(bytes: try demoSave(library, level: 2, steps: 121))],
      large: [ByteBuffer(bytes: large), ByteBuffer(bytes: try demoSave(library, level: 3, steps: 61))]
    )
    let serverPID = process?.pid ?? 0  // 0: every stasis-server process (CPUSample)
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        try? await Task.sleep(until: measured)
        results.cpu.withLock { $0.append(CPUSample.now(["server": serverPID, "client": getpid()])) }
        try? await Task.sleep(until: deadline)
        results.cpu.withLock { $0.append(CPUSample.now(["server": serverPID, "client": getpid()])) }
      }
      for (index, token) in tokens.enumerated() {
        group.addTask {
          var random = PlayerRandom(seed: UInt64(index) + 1)
          var head: Int64?
          var headFile: (large: Bool, variant: Int)?  // which bytes the head holds
          while ContinuousClock.now < deadline {
            let isLarge = random.next() % UInt64(largeEvery) == 0
            let variant = headFile.map { $0.large == isLarge ? 1 - $0.variant : 0 } ?? 0
            let file = isLarge ? bodies.large[variant] : bodies.small[variant]
            var stale = random.next() % UInt64(staleEvery) == 0
            do {
              var headers: [(String, String)] = []
              if let head {
                // Download first, as a game does when it comes back: unchanged, so 304.
                let (status, _) = try await Self.send(http, .GET, base, token, [("If-None-Match", "\"\(head)\"")])
                if status != 304 { results.state.withLock { $0.errors += 1 } }
                stale = stale && head > 1
                headers.append(("If-Match", "\"\(stale ? head - 1 : head)\""))
              } else {
                stale = false
                headers.append(("If-None-Match", "*"))
              }
              let began = ContinuousClock.now
              let (status, etag) = try await Self.send(http, .PUT, base, token, headers, file)
              let ended = ContinuousClock.now
              let counted = began >= measured && ended <= deadline
              if status == 201, let etag, let revision = Int64(etag.trimmingCharacters(in: ["\""])) {
                head = revision
                headFile = (isLarge, variant)
                if counted {
                  results.state.withLock {
                    $0.latencies.append((ended - began) / .milliseconds(1))
                    $0.bytes += file.readableBytes
                  }
                }
              } else if status == 412 && stale {
                if counted { results.state.withLock { $0.stale += 1 } }
              } else {
                results.state.withLock { $0.errors += 1 }
              }
              if stale && counted { results.state.withLock { $0.staleExpected += 1 } }
            } catch {
              results.state.withLock { $0.errors += 1 }
            }
          }
        }
      }
    }
    try? await http.shutdown()
    if let url = postgres, backend is PostgresBackend {
      // The run's players leave the database as they came, so runs do not slow as it grows.
      let owned = "SELECT id FROM players WHERE name LIKE 'load-\(run)-%'"
      _ = try ChildProcess.run(
        "psql",
        [
          url, "-q", "-c",
          "DELETE FROM revisions WHERE player_id IN (\(owned)); DELETE FROM slots WHERE player_id IN (\(owned)); "
            + "DELETE FROM tokens WHERE player_id IN (\(owned)); DELETE FROM players WHERE id IN (\(owned))",
        ])
    }
    let elapsed = (deadline - measured) / .seconds(1)
    let result = results.state.withLock { $0 }
    let samples = results.cpu.withLock { $0 }
    let sorted = result.latencies.sorted()
    let row = Row(
      label: label, perSecond: Double(sorted.count) / elapsed,
      megabytesPerSecond: Double(result.bytes) / elapsed / 1e6, p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99), stale: "\(result.stale)/\(result.staleExpected)", errors: result.errors,
      cores: samples.count == 2 ? samples[1].cores(since: samples[0], parts: ["server", "client", "postgres"]) : "-",
      serverPerWrite: perWrite("server", samples, perSecond: Double(sorted.count) / elapsed),
      postgresPerWrite: backend is PostgresBackend
        ? perWrite("postgres", samples, perSecond: Double(sorted.count) / elapsed) : nil)
    print(row.markdown)
    return row
  }

  /// A part's CPU per acknowledged write, in milliseconds.
  private func perWrite(_ part: String, _ samples: [CPUSample], perSecond: Double) -> Double? {
    guard samples.count == 2, perSecond > 0, let cores = samples[1].cores(of: part, since: samples[0]) else {
      return nil
    }
    return cores / perSecond * 1000
  }

  /// One exchange; the status and the `ETag`.
  private static func send(
    _ http: HTTPClient, _ method: HTTPMethod, _ url: String, _ token: String, _ headers: [(String, String)],
    _ body: ByteBuffer? = nil
  ) async throws -> (Int, String?) {
    var request = HTTPClientRequest(url: url)
    request.method = method
    request.headers.add(name: "Authorization", value: "Bearer \(token)")
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let body {
      request.headers.add(name: "Content-Type", value: "application/vnd.stasis")
      request.body = .bytes(body)
    }
    let response = try await http.execute(request, timeout: .seconds(30))
    _ = try await response.body.collect(upTo: 64 << 20)
    return (Int(response.status.code), response.headers.first(name: "ETag"))
  }
}

/// One line of the table.
struct Row {
  var label: String
  var perSecond: Double
  var megabytesPerSecond: Double
  var p50: Double
  var p99: Double
  var stale: String
  var errors: Int
  /// Who used the CPU during the measurement, in cores.
  var cores: String
  /// The server's CPU per acknowledged write, in milliseconds.
  var serverPerWrite: Double? = nil
  /// PostgreSQL's CPU (every `postgres` process) per acknowledged write, in milliseconds.
  var postgresPerWrite: Double? = nil

  static let header =
    "| what | writes/s | MB/s | p50 ms | p99 ms | 412 as expected | errors | server CPU ms/write | "
    + "PostgreSQL CPU ms/write | CPU, in cores |\n"
    + "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"

  var markdown: String {
    "| \(label) | \(String(format: "%.0f", perSecond)) | \(String(format: "%.1f", megabytesPerSecond)) | "
      + "\(p50.isNaN ? "-" : String(format: "%.1f", p50)) | \(p99.isNaN ? "-" : String(format: "%.1f", p99)) | "
      + "\(stale) | \(errors) | \(serverPerWrite.map { String(format: "%.2f", $0) } ?? "-") | "
      + "\(postgresPerWrite.map { String(format: "%.2f", $0) } ?? "-") | \(cores) |"
  }
}

/// Each player's own sequence (xorshift64*), so which uploads are large or stale does not depend
/// on the other players, and the two choices are independent of each other.
struct PlayerRandom {
  private var state: UInt64

  init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

  mutating func next() -> UInt64 {
    state ^= state >> 12
    state ^= state << 25
    state ^= state >> 27
    return state &* 0x2545_F491_4F6C_DD1D
  }
}

/// What the players saw, gathered from their tasks.
final class Tally: Sendable {
  let state = Mutex<(latencies: [Double], bytes: Int, stale: Int, staleExpected: Int, errors: Int)>(([], 0, 0, 0, 0))
  /// CPU samples at the start and the end of the measurement.
  let cpu = Mutex<[CPUSample]>([])
}
