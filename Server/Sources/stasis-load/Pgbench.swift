import Foundation

/// pgbench on the same database: one `INSERT` of a `bytea` per transaction, the same byte mix
/// as the players' uploads (`largeEvery - 1` small for one large), as many clients, the same
/// duration. The query text carries the bytes as hex (see ``mode``). Latencies come from pgbench's
/// per-transaction log, so the row has a p50 and a p99 like the others.
struct Pgbench {
  var url: String
  var clients: Int
  var seconds: Double
  var largeEvery: Int
  /// The bytea's storage: `EXTERNAL` (uncompressed, as the server's `revisions.file`) or
  /// `EXTENDED` (PostgreSQL's default: pglz is tried on every value).
  var storage: String
  /// pgbench's `-M`: `simple` sends each INSERT's text, the bytes as hex, which PostgreSQL parses
  /// and decodes every time; `prepared` parses it once per connection, and then each transaction
  /// inserts the same constant without sending the bytes again (a bound no server can reach).
  var mode: String

  func run(small: [UInt8], large: [UInt8]) async throws -> Row {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stasis-pgbench-\(getpid())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    func script(_ name: String, _ bytes: [UInt8]) throws -> String {
      let digits = Array("0123456789abcdef".utf8)
      var hex = [UInt8]()
      hex.reserveCapacity(bytes.count * 2)
      for byte in bytes {
        hex.append(digits[Int(byte >> 4)])
        hex.append(digits[Int(byte & 15)])
      }
      let path = folder.appendingPathComponent(name).path
      let text = "INSERT INTO stasis_pgbench (data) VALUES ('\\x\(String(decoding: hex, as: UTF8.self))'::bytea);\n"
      try text.write(toFile: path, atomically: true, encoding: .utf8)
      return path
    }
    let smallScript = try script("small.sql", small)
    let largeScript = try script("large.sql", large)
    _ = try ChildProcess.run(
      "psql",
      [
        url, "-q", "-c",
        "DROP TABLE IF EXISTS stasis_pgbench; CREATE TABLE stasis_pgbench (id BIGSERIAL PRIMARY KEY, data BYTEA NOT NULL); "
          + "ALTER TABLE stasis_pgbench ALTER COLUMN data SET STORAGE \(storage)",
      ])
    defer { _ = try? ChildProcess.run("psql", [url, "-q", "-c", "DROP TABLE IF EXISTS stasis_pgbench"]) }
    let duration = max(3, Int(seconds.rounded()))
    let child = try ChildProcess(
      "pgbench",
      [
        "-n", "-M", mode, "-c", "\(clients)", "-j", "2", "-T", "\(duration)", "-f", "\(smallScript)@\(largeEvery - 1)",
        "-f", "\(largeScript)@1", "-l", "--log-prefix", folder.appendingPathComponent("log").path, url,
      ])
    // CPU is sampled inside the run, while pgbench's connections are alive.
    try await Task.sleep(for: .seconds(1))
    let before = CPUSample.now(["pgbench": child.pid])
    try await Task.sleep(for: .seconds(Double(duration) - 2))
    let after = CPUSample.now(["pgbench": child.pid])
    let output = String(decoding: child.output.readDataToEndOfFile(), as: UTF8.self)
    guard child.wait() == 0 else { throw ChildProcessError("pgbench failed: \(output)") }

    let tps =
      output.split(separator: "\n").first { $0.hasPrefix("tps = ") }.flatMap {
        Double($0.dropFirst(6).split(separator: " ").first ?? "")
      } ?? .nan
    let failed =
      output.split(separator: "\n").first { $0.hasPrefix("number of failed transactions: ") }.flatMap {
        Int($0.dropFirst(31).split(separator: " ").first ?? "")
      } ?? 0
    // Each log line: client, transaction, latency in µs, script, epoch s, µs.
    var latencies: [Double] = []
    for file in try FileManager.default.contentsOfDirectory(atPath: folder.path) where file.hasPrefix("log.") {
      let text = try String(contentsOfFile: folder.appendingPathComponent(file).path, encoding: .utf8)
      for line in text.split(separator: "\n") {
        let fields = line.split(separator: " ")
        if fields.count >= 3, let micros = Double(fields[2]) { latencies.append(micros / 1000) }
      }
    }
    latencies.sort()
    let meanBytes = Double(small.count * (largeEvery - 1) + large.count) / Double(largeEvery)
    return Row(
      label: "pgbench, one bytea INSERT per transaction (-M \(mode), \(storage.lowercased()) storage)", perSecond: tps,
      megabytesPerSecond: tps * meanBytes / 1e6,
      p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), stale: "-", errors: failed,
      cores: after.cores(since: before, parts: ["pgbench", "postgres"]),
      postgresPerWrite: after.cores(of: "postgres", since: before).map { $0 / tps * 1000 })
  }
}

/// The `p` quantile of sorted values (NaN when there are none).
func percentile(_ sorted: [Double], _ p: Double) -> Double {
  sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}
