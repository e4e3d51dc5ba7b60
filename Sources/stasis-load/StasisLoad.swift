import ArgumentParser
import AsyncHTTPClient
import DemoGame
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Stasis
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
      Example:
        swift build -c release --product stasis-server --product stasis-load
        .build/release/stasis-load --postgres postgres://stasis:stasis@127.0.0.1:5432/stasis_test
      """)

  @Option(help: "Concurrent players.")
  var clients = 64

  @Option(help: "Seconds of load per backend.")
  var seconds = 10.0

  @Option(help: "One upload in N is a large save (the stress level, about 380 KB); the rest are about 12 KB.")
  var largeEvery = 10

  @Option(help: "One upload in N carries a stale base and must be refused with 412.")
  var staleEvery = 10

  @Option(help: "PostgreSQL for the PostgreSQL rows and pgbench (none: SQLite only).")
  var postgres: String?

  @Option(help: "The stasis-server to start (default: next to this executable).")
  var server: String?

  func run() async throws {
    LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
    let library = LevelLibrary(folder: try assetsFolder())
    let small = try demoSave(library, level: 1, steps: 120)
    let large = try demoSave(library, level: 3, steps: 2)
    print("saves: \(small.count) bytes and \(large.count) bytes; \(clients) players; \(seconds) s per backend")
    var rows: [Row] = []
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stasis-load-\(getpid())")
    let sqlite = try await measure(
      label: "stasis-server, SQLite", arguments: ["--database", folder.appendingPathComponent("load.sqlite").path],
      backend: try SQLiteBackend(path: folder.appendingPathComponent("load.sqlite").path), small: small, large: large)
    rows.append(sqlite)
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
          label: "stasis-server, PostgreSQL",
          arguments: ["--postgres", postgres, "--connections", "\(min(clients, 60))"], backend: backend, small: small,
          large: large)
      }
      rows.append(row)
      rows.append(try pgbench(url: postgres, small: small, large: large))
    }
    print("")
    print(
      "| what | uploads/s | MB/s | p50 ms | p99 ms | 412 as expected | errors |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
    )
    for row in rows { print(row.markdown) }
    if rows.count == 3 {
      let ratio = rows[1].perSecond / rows[2].perSecond
      print("\nPostgreSQL: \(String(format: "%.2f", ratio))× pgbench's transactions/s (target ≥ 0.5×); p99 \(String(format: "%.1f", rows[1].p99)) ms (target < 100 ms)")
    }
  }

  struct Row {
    var label: String
    var perSecond: Double
    var megabytesPerSecond: Double
    var p50: Double
    var p99: Double
    var stale: String
    var errors: Int

    var markdown: String {
      "| \(label) | \(String(format: "%.0f", perSecond)) | \(String(format: "%.1f", megabytesPerSecond)) | "
        + "\(p50.isNaN ? "-" : String(format: "%.1f", p50)) | \(p99.isNaN ? "-" : String(format: "%.1f", p99)) | \(stale) | \(errors) |"
    }
  }

  private func assetsFolder() throws -> String {
    let candidates = [
      URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "../../../Assets/levels"),
      URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Assets/levels"),
    ]
    guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
      throw ValidationError("run from the repository: Assets/levels holds the demo's levels")
    }
    return found.standardized.path
  }

  private func demoSave(_ library: LevelLibrary, level: Int, steps: Int) throws -> [UInt8] {
    var engine = try Engine(library: library, level: level, seed: 1)
    for _ in 0..<steps { _ = engine.step(Input(right: true)) }
    let state = engine.snapshot()
    return SaveFileFormat.encode(
      try DemoSaveFormat.codec.document(for: state, summary: try state.summary(), createdAt: 1_795_000_000_000))
  }

  /// Starts a server over `arguments`, gives each player a slot, and runs the load.
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
    let serverPath =
      server
      ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "stasis-server"
      ).path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: serverPath)
    process.arguments = ["serve", "--port", "0"] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    defer {
      kill(process.processIdentifier, SIGTERM)
      process.waitUntilExit()
    }
    var line = Data()
    while !line.contains(UInt8(ascii: "\n")) {
      let chunk = output.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      line += chunk
    }
    guard let port = String(decoding: line, as: UTF8.self).split(separator: ":").last?.split(separator: " ").first
    else { throw ValidationError("stasis-server did not start") }
    let base = "http://127.0.0.1:\(port)"
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: clients)
    let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)

    let results = Tally()
    let start = ContinuousClock.now
    let deadline = start + .milliseconds(Int64(seconds * 1000))
    let (largeEvery, staleEvery) = (self.largeEvery, self.staleEvery)
    await withTaskGroup(of: Void.self) { group in
      for (index, token) in tokens.enumerated() {
        group.addTask {
          let slot = "slot"
          var head: Int64?
          var count = index
          while ContinuousClock.now < deadline {
            count += 1
            let file = count % largeEvery == 0 ? large : small
            do {
              // Download first, as a game does when it comes back.
              if let head {
                _ = try await Self.send(http, .GET, base + "/v1/slots/\(slot)", token, [("If-None-Match", "\"\(head)\"")])
              }
              let stale = head != nil && head! > 1 && count % staleEvery == 0
              var headers: [(String, String)] = []
              if let head { headers.append(("If-Match", "\"\(stale ? head - 1 : head)\"")) } else {
                headers.append(("If-None-Match", "*"))
              }
              let began = ContinuousClock.now
              let (status, body) = try await Self.send(http, .PUT, base + "/v1/slots/\(slot)", token, headers, file)
              let ms = (ContinuousClock.now - began) / .milliseconds(1)
              if status == 201 {
                let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
                head = Int64(object?["revision"] as? Int ?? 0)
                results.state.withLock {
                  $0.latencies.append(ms)
                  $0.bytes += file.count
                }
              } else if status == 412 && stale {
                results.state.withLock {
                  $0.stale += 1
                  $0.staleExpected += 1
                }
              } else {
                if stale { results.state.withLock { $0.staleExpected += 1 } }
                results.state.withLock { $0.errors += 1 }
              }
            } catch {
              results.state.withLock { $0.errors += 1 }
            }
          }
        }
      }
    }
    let elapsed = (ContinuousClock.now - start) / .seconds(1)
    try await http.shutdown()
    let result = results.state.withLock { $0 }
    let sorted = result.latencies.sorted()
    func percentile(_ p: Double) -> Double {
      sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
    let row = Row(
      label: label, perSecond: Double(sorted.count) / elapsed,
      megabytesPerSecond: Double(result.bytes) / elapsed / 1e6, p50: percentile(0.5), p99: percentile(0.99),
      stale: "\(result.stale)/\(result.staleExpected)", errors: result.errors)
    print(row.markdown)
    return row
  }

  private static func send(
    _ http: HTTPClient, _ method: HTTPMethod, _ url: String, _ token: String, _ headers: [(String, String)],
    _ body: [UInt8]? = nil
  ) async throws -> (Int, [UInt8]) {
    var request = HTTPClientRequest(url: url)
    request.method = method
    request.headers.add(name: "Authorization", value: "Bearer \(token)")
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let body {
      request.headers.add(name: "Content-Type", value: "application/vnd.stasis")
      request.body = .bytes(ByteBuffer(bytes: body))
    }
    let response = try await http.execute(request, timeout: .seconds(30))
    let collected = try await response.body.collect(upTo: 64 << 20)
    return (Int(response.status.code), [UInt8](buffer: collected))
  }

  /// pgbench on the same database: the same mix of byte counts, one `INSERT` of a `bytea` per
  /// transaction, as many clients.
  private func pgbench(url: String, small: [UInt8], large: [UInt8]) throws -> Row {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stasis-pgbench-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    func script(_ name: String, _ bytes: [UInt8]) throws -> String {
      let hex = bytes.map { String(format: "%02x", $0) }.joined()
      let path = folder.appendingPathComponent(name).path
      try "INSERT INTO stasis_pgbench (data) VALUES ('\\x\(hex)'::bytea);\n".write(
        toFile: path, atomically: true, encoding: .utf8)
      return path
    }
    let smallScript = try script("small.sql", small)
    let largeScript = try script("large.sql", large)
    _ = try shell(
      "psql", [url, "-q", "-c", "DROP TABLE IF EXISTS stasis_pgbench; CREATE TABLE stasis_pgbench (id BIGSERIAL PRIMARY KEY, data BYTEA NOT NULL)"])
    let output = try shell(
      "pgbench",
      [
        "-n", "-c", "\(clients)", "-j", "2", "-T", "\(Int(seconds.rounded()))", "-f",
        "\(smallScript)@\(largeEvery - 1)", "-f", "\(largeScript)@1", "-r", url,
      ])
    _ = try shell("psql", [url, "-q", "-c", "DROP TABLE IF EXISTS stasis_pgbench"])
    let tps =
      output.split(separator: "\n").first { $0.hasPrefix("tps = ") }.flatMap {
        Double($0.dropFirst(6).split(separator: " ").first ?? "")
      } ?? .nan
    let latency =
      output.split(separator: "\n").first { $0.hasPrefix("latency average = ") }.flatMap {
        Double($0.dropFirst(18).split(separator: " ").first ?? "")
      } ?? .nan
    let meanBytes = Double(small.count * (largeEvery - 1) + large.count) / Double(largeEvery)
    let row = Row(
      label: "pgbench, one bytea INSERT per transaction", perSecond: tps, megabytesPerSecond: tps * meanBytes / 1e6,
      p50: latency, p99: .nan, stale: "-", errors: 0)
    print(row.markdown + "   (p50 column: pgbench's mean latency)")
    return row
  }

  private func shell(_ tool: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [tool] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.standardError
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw ValidationError("\(tool) failed") }
    return String(decoding: data, as: UTF8.self)
  }
}

/// What the players saw, gathered from their tasks.
final class Tally: Sendable {
  let state = Mutex<(latencies: [Double], bytes: Int, stale: Int, staleExpected: Int, errors: Int)>(([], 0, 0, 0, 0))
}
