import ArgumentParser
import Dispatch
import Foundation
import Stasis
import StasisCloud
import StasisDelta
import StasisServer
import StasisTesting

/// Cost follows change (issue 28): the bytes a city's saves put on the wire, in the server's
/// storage, and the time a delta takes, each as a ratio to what it is measured against.
struct DeltaReport: Codable {
  struct Row: Codable {
    var workload: String
    var measured: String
    var target: String
    var met: Bool
  }
  var rows: [Row] = []
}

extension StasisSyncBench {
  /// Runs every delta workload against a server (the real router, SQLite) on a loopback port.
  func measureDeltas(folder: String, agents: Int) throws -> DeltaReport {
    let (url, token, backend) = try startServer(database: folder + "/delta/server.sqlite")
    let transport = self.transport
    let done = DispatchSemaphore(value: 0)
    let result = LockedReport()
    Task.detached {
      do {
        result.set(
          .success(
            try await DeltaWorkloads(url: url, token: token, backend: backend, agents: agents, transport: transport)
              .run()))
      } catch {
        result.set(.failure(error))
      }
      done.signal()
    }
    done.wait()
    return try result.get()
  }

  func printDeltas(_ report: DeltaReport) {
    print("")
    print("| cost follows change (a city, its agents a bulk array) | measured | target | met |")
    print("| --- | ---: | ---: | :---: |")
    for row in report.rows {
      print("| \(row.workload) | \(row.measured) | \(row.target) | \(row.met ? "yes" : "NO") |")
    }
  }
}

/// The workloads, each on its own slot of one player.
struct DeltaWorkloads {
  let url: String
  let token: String
  let backend: SQLiteBackend
  let agents: Int
  let transport: BenchTransport

  func client(_ device: String, cut: CutTransport? = nil) -> CloudClient {
    let server = CloudCredentials(url: url, token: token, device: device)
    return CloudClient(credentials: server, transport: cut ?? transport.make())
  }

  func run() async throws -> DeltaReport {
    var report = DeltaReport()
    func row(_ workload: String, _ measured: String, _ target: String, _ met: Bool) {
      report.rows.append(.init(workload: workload, measured: measured, target: target, met: met))
    }
    func kib(_ bytes: Int) -> String { String(format: "%.1f KiB", Double(bytes) / 1024) }
    func percent(_ value: Double) -> String { String(format: "%.2f %%", value * 100) }

    // 1. One tick: 1% of the agents moved in place.
    var city = SyntheticCity(agents: agents, side: 512, ledger: 1000, seed: 1)
    let base = try city.file()
    let device = client("a")
    let slot = try SaveSlot("city")
    /// Uploads `bytes` as the delta from revision `revision` (whose file is `held`): the new
    /// revision, and the bytes it put on the wire.
    func sendDelta(slot: SaveSlot, bytes: [UInt8], from revision: Int, _ held: [UInt8]) async throws -> (Int, sent: Int)
    {
      let before = device.transferred.bytesSent
      let made = try await device.upload(
        slot: slot, bytes: bytes, base: revision, deltaFrom: HeldRevision(revision: revision, bytes: held))
      return (made.revision, device.transferred.bytesSent - before)
    }
    _ = try await device.head(slot: slot, ifNoneMatch: nil)  // learns what the server takes
    let first = try await device.upload(slot: slot, bytes: base, base: nil)
    let before = city.agents
    city.tick(moving: 0.01, seed: 2)
    let changed = zip(before, city.agents).filter { $0 != $1 }.count * MemoryLayout<SyntheticCity.Agent>.stride
    let tick = try city.file(frame: 1)
    let (second, sentTick) = try await sendDelta(slot: slot, bytes: tick, from: first.revision, base)
    var sent = sentTick
    row(
      "\(base.count / 1_000_000) MB save, 1% of \(agents) agents moved: bytes on the wire (changed records: \(kib(changed)))",
      "\(kib(sent)) (\(String(format: "%.2f", Double(sent) / Double(changed)))× the records)",
      "≤ 2× the records + 4 KiB", sent <= 2 * changed + 4096)

    // 2. A session of three ticks, against the revision acknowledged before it.
    for seed in 3...5 { city.tick(moving: 0.01, seed: UInt64(seed)) }
    let session = try city.file(frame: 4)
    let third: Int
    (third, sent) = try await sendDelta(slot: slot, bytes: session, from: second, tick)
    row(
      "the same, 3 ticks of 1%: bytes on the wire / the file", percent(Double(sent) / Double(session.count)), "≤ 8 %",
      Double(sent) <= 0.08 * Double(session.count))

    // 3. A download on return after another device's 1% change.
    let other = client("b")
    _ = try await other.head(slot: slot, ifNoneMatch: nil)
    city.tick(moving: 0.01, seed: 6)
    let theirs = try city.file(frame: 5)
    let before3 = city.agents
    _ = before3
    let fourth = try await other.upload(
      slot: slot, bytes: theirs, base: third,
      deltaFrom: HeldRevision(revision: third, bytes: session))
    var received = device.transferred.bytesReceived
    let fetched = try await device.head(
      slot: slot, ifNoneMatch: third, holding: HeldRevision(revision: third, bytes: session))
    received = device.transferred.bytesReceived - received
    let downloadChanged = changed  // the same 1% of agents, moved by the other device
    guard case .changed(let revision, let bytes) = fetched, revision == fourth.revision, bytes == theirs else {
      throw BenchError("the download on return did not rebuild the other device's save")
    }
    row(
      "a download on return after the other device's 1%: bytes on the wire", kib(received),
      "≤ 2× the records + 4 KiB", received <= 2 * downloadChanged + 4096)

    // 4. Ten consecutive revisions on the server.
    var previous = (revision: fourth.revision, bytes: theirs)
    for tick in 0..<6 {
      city.tick(moving: 0.01, seed: UInt64(10 + tick))
      let next = try city.file(frame: Int64(10 + tick))
      let created = try await other.upload(
        slot: slot, bytes: next, base: previous.revision,
        deltaFrom: HeldRevision(revision: previous.revision, bytes: previous.bytes))
      previous = (created.revision, next)
    }
    let player = try await backend.player(tokenHash: BearerToken.hash(token))!
    let stored = try await backend.storedBytes(player: player, slot: "city")
    let revisions = try await backend.revisions(player: player, slot: "city")?.count ?? 0
    row(
      "\(revisions) consecutive revisions of the save on the server: storage / one revision",
      String(format: "%.2f×", Double(stored) / Double(base.count)), "≤ 1.5×", Double(stored) <= 1.5 * Double(base.count)
    )

    // 5. A 16-byte edit inside a 10 MiB save.
    var ten = SyntheticCity(agents: (10 << 20) / 16, side: 64, ledger: 10, seed: 7)
    let tenBase = try ten.file()
    ten.agents[ten.agents.count / 2] = SyntheticCity.Agent(x: 1, y: 2, home: 3, mood: 4)
    let tenEdited = try ten.file()
    let small = try SaveSlot("ten")
    let made = try await device.upload(slot: small, bytes: tenBase, base: nil)
    sent = try await sendDelta(slot: small, bytes: tenEdited, from: made.revision, tenBase).sent
    row(
      "a 16-byte edit inside a \(String(format: "%.1f", Double(tenBase.count) / 1_048_576)) MiB save: bytes on the wire",
      kib(sent), "≤ 64 KiB", sent <= 64 * 1024)

    // 6. 100 entries appended to a 10,000-entry log in the tree.
    var books = SyntheticCity(agents: 1000, side: 16, ledger: 10_000, seed: 8)
    let booksBase = try books.file()
    for entry in 0..<100 {
      books.ledger.append(SyntheticCity.LedgerEntry(tick: 10_000 + Int64(entry), amount: 5, memo: "fee \(entry)"))
    }
    let booksAfter = try books.file()
    let appended = booksAfter.count - booksBase.count
    let ledger = try SaveSlot("books")
    let opened = try await device.upload(slot: ledger, bytes: booksBase, base: nil)
    sent = try await sendDelta(slot: ledger, bytes: booksAfter, from: opened.revision, booksBase).sent
    row(
      "100 entries appended to a 10,000-entry log (\(kib(appended)) appended): bytes on the wire", kib(sent),
      "≤ 2× appended + 4 KiB", sent <= 2 * appended + 4096)

    // 7. An upload cut at a random byte, then resumed: a whole first upload, in parts.
    let cut = CutTransport(cutAtByte: Int.random(in: 0..<base.count), over: transport.make())
    let cutting = client("c", cut: cut)
    _ = try await cutting.head(slot: slot, ifNoneMatch: nil)
    let partSize = cutting.transfer.partSize
    sent = cutting.transferred.bytesSent
    _ = try await cutting.upload(slot: try SaveSlot("cut"), bytes: base, base: nil)
    let resent = cutting.transferred.bytesSent - sent - base.count
    row(
      "an upload of \(base.count / 1_000_000) MB cut at byte \(cut.cutAtByte), resumed: bytes sent again",
      "\(kib(resent)) (\(String(format: "%.2f", Double(resent) / Double(partSize))) parts of \(partSize / 1024) KiB)",
      "≤ 1 part", resent <= partSize && cut.cuts == 1)

    // 8. The delta's cost on the worker, against a memcpy of the file (medians of 7).
    let clock = SystemClock()
    func median(_ body: () -> Void) -> Double {
      var times: [Double] = []
      for _ in 0..<7 {
        let start = clock.now()
        body()
        times.append((clock.now() - start).inMilliseconds)
      }
      return times.sorted()[3]
    }
    var copy = [UInt8](repeating: 0, count: tick.count)
    let copied = median {
      copy.withUnsafeMutableBytes { target in tick.withUnsafeBytes { target.copyMemory(from: $0) } }
    }
    var deltaBytes = 0
    let diffed = median { deltaBytes = SaveDelta.make(from: base, to: tick).count }
    row(
      "diffing the \(base.count / 1_000_000) MB save on the worker: the delta (\(kib(deltaBytes))) / memcpy of the file",
      String(format: "%.2f× (%.2f ms / %.2f ms)", diffed / copied, diffed, copied), "≤ 2×", diffed <= 2 * copied)
    let applied = median { _ = try? SaveDelta.apply(SaveDelta.make(from: base, to: tick), to: base) }
    row(
      "the server's part: the delta made and applied again / memcpy of the file",
      String(format: "%.2f× (%.2f ms)", applied / copied, applied), "(reported)", true)
    return report
  }
}

/// A transport that loses one `PATCH` on its way (thrown as offline, never sent): the one whose
/// part holds `cutAtByte` of the upload's body. The upload's parts count from the creation.
final class CutTransport: CloudTransport, @unchecked Sendable {
  let cutAtByte: Int
  private let lock = NSLock()
  private var offsetSeen = 0
  private(set) var cuts = 0
  private let http: any CloudTransport

  init(cutAtByte: Int, over http: any CloudTransport) {
    self.cutAtByte = cutAtByte
    self.http = http
  }

  func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
    if request.method == "PATCH", let offset = request.header("Upload-Offset").flatMap(Int.init),
      let count = request.body?.count
    {
      let cut = lock.withLock { () -> Bool in
        guard cuts == 0, (offset..<(offset + count)).contains(cutAtByte) else { return false }
        cuts += 1
        return true
      }
      if cut { throw CloudError(.offline, "the line was cut at byte \(cutAtByte)") }
      lock.withLock { offsetSeen = max(offsetSeen, offset + count) }
    }
    return try await http.send(request, to: server)
  }
}

struct BenchError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// A result handed from a detached task to the main thread.
final class LockedReport: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Result<DeltaReport, any Error>?
  func set(_ result: Result<DeltaReport, any Error>) { lock.withLock { value = result } }
  func get() throws -> DeltaReport { try lock.withLock { value! }.get() }
}

/// The HTTP transports StasisCloud ships, measured on the same figures.
enum BenchTransport: String, ExpressibleByArgument, Sendable {
  case urlsession, asynchttpclient

  func make() -> any CloudTransport {
    switch self {
    case .urlsession: URLSessionCloudTransport()
    case .asynchttpclient: HTTPCloudTransport()
    }
  }
}
