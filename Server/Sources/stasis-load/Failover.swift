import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import Logging
import NIOCore
import NIOHTTP1
@_spi(Plumbing) import Stasis
import StasisDemoGame
import StasisServer
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The failover test: a Jepsen-style checker of the cluster `scripts/cluster.sh` starts.
///
/// Simulated devices upload continuously through the servers' front (HAProxy over three
/// `stasis-server` nodes over Patroni's PostgreSQL). Each records every `201` (revision and
/// SHA-256) and every upload whose outcome it did not learn (a `503`, a timeout, a reset), and
/// retries that upload, the same bytes on the same base, until it is answered. Meanwhile faults
/// from a seeded schedule hit the cluster. After each fault settles, everything is read back
/// through the API and checked:
/// - every acknowledged revision is there, with the same bytes (their SHA-256, downloaded);
/// - no revision number is ever served with two contents;
/// - every upload of unknown outcome is there once or not at all, never twice;
/// - at the end, every device's slot has the device's last acknowledged revision as its head.
///
/// Exit 1 with each violation on its own line, else 0. The negative control is the same run on
/// a cluster with asynchronous replication (`scripts/cluster.sh up --async`): the checker must
/// then report the acknowledged saves the failover lost.
struct Failover: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "failover",
    abstract: "Check that no acknowledged save is lost while the cluster's database and servers fail.",
    discussion: """
      Run it from the repository, with the cluster up:
        scripts/cluster.sh up
        .build/debug/stasis-load failover --seed 1
        scripts/cluster.sh down
      Faults: kill-leader-postgres (SIGKILL the leader's PostgreSQL; its Patroni restarts it),
      lagging-failover (the standby's WAL receiver paused, then the leader's host killed and the
      WAL in flight to the standby lost: Patroni promotes the standby), kill-server (SIGKILL a stasis-server node), cut-server (a node cut off
      the database), pause-standby (SIGSTOP the standby's WAL receiver a while).
      """)

  static let allFaults = ["kill-leader-postgres", "lagging-failover", "kill-server", "cut-server", "pause-standby"]

  @Option(help: "The schedule's seed: which faults, in which order, on which node.")
  var seed: UInt64 = 1

  @Option(help: "Faults, one after another (default: each fault once, in the seed's order).")
  var rounds: Int?

  @Option(parsing: .upToNextOption, help: "The faults to draw from.")
  var faults: [String] = Failover.allFaults

  @Option(help: "Devices uploading at once, each to a slot of its own player.")
  var devices = 8

  @Option(help: "Seconds a device plays between two saves (its save's answer, then this).")
  var saveEvery = 0.2

  @Option(help: "Seconds of steady load before each fault.")
  var steady = 3.0

  @Option(help: "Seconds a paused standby, a killed node or a cut stays so.")
  var hold = 4.0

  @Option(help: "Seconds a fault may take to settle (a new leader, the member back as a replica).")
  var settleLimit = 150.0

  @Option(help: "scripts/cluster.sh, which starts the cluster and applies the faults.")
  var cluster = "scripts/cluster.sh"

  @Option(help: "Write what was measured and found as JSON here.")
  var report: String?

  func validate() throws {
    guard devices >= 1, steady >= 0, hold >= 0, settleLimit >= 10, (rounds ?? 1) >= 1, !faults.isEmpty else {
      throw ValidationError("--devices ≥ 1, --rounds ≥ 1, --settle-limit ≥ 10, and at least one fault")
    }
    for fault in faults where !Self.allFaults.contains(fault) {
      throw ValidationError("no fault '\(fault)'; the faults: \(Self.allFaults.joined(separator: ", "))")
    }
  }

  func run() async throws {
    LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
    let cluster = Cluster(script: self.cluster)
    let front = try cluster.run("url").trimmingCharacters(in: .whitespacesAndNewlines)
    let database = try cluster.run("database-url").trimmingCharacters(in: .whitespacesAndNewlines)
    let synchronous = try cluster.run("status").contains("replication: synchronous")
    var random = PlayerRandom(seed: seed)
    var schedule: [String] = []
    if let rounds {
      for _ in 0..<rounds { schedule.append(faults[Int(random.next() % UInt64(faults.count))]) }
    } else {
      var left = faults
      while !left.isEmpty { schedule.append(left.remove(at: Int(random.next() % UInt64(left.count)))) }
    }
    say(
      "failover: seed \(seed), \(synchronous ? "synchronous" : "asynchronous") replication, \(devices) devices, "
        + "faults: \(schedule.joined(separator: ", "))")

    // Each device is a player of its own, with one slot.
    let backend = try PostgresBackend(url: database, connections: 2, logger: Logger(label: "failover"))
    let run = UUID().uuidString.prefix(8)
    let tokens = try await withThrowingTaskGroup(of: [String]?.self) { group in
      group.addTask {
        await backend.run()
        return nil
      }
      defer { group.cancelAll() }
      try await backend.migrate()
      var tokens: [String] = []
      for index in 0..<devices {
        let token = BearerToken.generate()
        _ = try await backend.addPlayer(
          name: "failover-\(run)-\(index)", tokenHash: BearerToken.hash(token), at: nowMilliseconds())
        tokens.append(token)
      }
      return tokens
    }
    let library = LevelLibrary(folder: try assetsFolder())
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: devices)
    let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    let history = History()
    let checker = Checker(http: http, front: front, tokens: tokens, history: history)
    var violations: [String] = []
    var measured: [(fault: String, seconds: Double)] = []

    do {
      try await load(
        schedule: schedule, random: &random, cluster: cluster, history: history, checker: checker, http: http,
        tokens: tokens, front: front, library: library, violations: &violations, measured: &measured)
      violations += try await checker.check(final: true, downloadSince: nil)
    } catch {
      history.stopped.store(true, ordering: .relaxed)
      try? await http.shutdown()
      throw error
    }
    try? await http.shutdown()
    violations += history.refusals.withLock { $0 }
    let conflicts = history.conflicts.withLock { $0 }
    if !conflicts.isEmpty {
      violations.append(
        "\(conflicts.count) uploads answered 412 on their device's own slot: the slot's head went back "
          + "(devices \(Set(conflicts).sorted().map(String.init).joined(separator: ", ")))")
    }
    report(
      schedule: schedule, synchronous: synchronous, history: history, violations: violations, measured: measured)
    if !violations.isEmpty {
      say("FAILED: \(violations.count) violations (seed \(seed))")
      throw ExitCode(1)
    }
    say("passed: 0 acknowledged saves lost (seed \(seed))")
  }

  /// The devices' load, and the schedule's faults with a check after each.
  private func load(
    schedule: [String], random: inout PlayerRandom, cluster: Cluster, history: History, checker: Checker,
    http: HTTPClient, tokens: [String], front: String, library: LevelLibrary, violations: inout [String],
    measured: inout [(fault: String, seconds: Double)]
  ) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
      defer { history.stopped.store(true, ordering: .relaxed) }
      for index in 0..<devices {
        let device = try Device(
          index: index, token: tokens[index], front: front, http: http, library: library, history: history,
          pace: .milliseconds(Int64(saveEvery * 1000)))
        group.addTask { await device.run() }
      }
      for (round, fault) in schedule.enumerated() {
        try await Task.sleep(for: .milliseconds(Int64(steady * 1000)))
        let before = history.acknowledgedCount()
        let began = ContinuousClock.now
        let wall = Date()
        let target = Int(random.next() % 3)
        let (detail, death) = try await apply(fault, node: target, cluster: cluster, history: history)
        let settled = ContinuousClock.now
        let duringFault = history.acknowledgedCount() - before
        // Read back now: every acknowledged save listed with its SHA-256, and the bytes of those
        // acknowledged around the fault (the rest are downloaded at the end).
        let found = try await checker.check(final: false, downloadSince: wall.addingTimeInterval(-2))
        violations += found.map { "after \(fault): \($0)" }
        // Writes stop at the fault (at the leader's death, for a failover) and resume at the
        // first 201 to a request sent after it.
        // From the kill's start to the first 201 to a request sent once the kill was done.
        let from = death?.began ?? wall
        let downtime = history.firstAcknowledgement(after: death?.ended ?? wall).map { $0.timeIntervalSince(from) }
        if let downtime, death != nil { measured.append((fault, downtime)) }
        say(
          "round \(round + 1): \(fault)\(detail.isEmpty ? "" : " (\(detail))"): settled in "
            + "\(String(format: "%.1f", (settled - began) / .seconds(1))) s; first 201 after it "
            + (downtime.map { String(format: "%.1f s", $0) } ?? "none") + "; "
            + "\(duringFault) saves acknowledged meanwhile; \(found.count) violations")
      }
      try await Task.sleep(for: .milliseconds(Int64(steady * 1000)))
      history.stopped.store(true, ordering: .relaxed)
      try await group.waitForAll()
    }
  }

  /// Prints what was found and measured, and writes `--report`.
  private func report(
    schedule: [String], synchronous: Bool, history: History, violations: [String],
    measured: [(fault: String, seconds: Double)]
  ) {
    let summary = history.summary()
    let lost = history.lost.withLock { $0 }
    say(
      "failover: \(summary.acknowledged) saves acknowledged, \(summary.unknown) uploads of unknown outcome "
        + "(\(summary.unknownStored) of them stored, once each), \(summary.retriesAnswered) answered on retry; "
        + "\(lost) acknowledged saves lost; \(violations.count) violations")
    for fault in Set(measured.map(\.fault)).sorted() {
      let times = measured.filter { $0.fault == fault }.map(\.seconds).sorted()
      say(
        "failover time after \(fault) (the leader's death to the first 201 to a request sent after it), "
          + "\(times.count) of them: p50 \(String(format: "%.1f", percentile(times, 0.5))) s, "
          + "p99 \(String(format: "%.1f", percentile(times, 0.99))) s, max \(String(format: "%.1f", times.last ?? 0)) s"
      )
    }
    if let report {
      let object: [String: Any] = [
        "conflicts": history.conflicts.withLock { $0.count },
        "seed": seed, "synchronous": synchronous, "faults": schedule, "acknowledged": summary.acknowledged,
        "unknown": summary.unknown, "lost": lost, "violations": violations,
        "failoverSeconds": measured.map { ["fault": $0.fault, "seconds": $0.seconds] },
      ]
      do {
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
          .write(to: URL(fileURLWithPath: report))
      } catch {
        say("could not write \(report): \(error)")
      }
    }
    for violation in violations { say("VIOLATION \(violation)") }
  }

  /// Applies `fault` and waits for it to settle; what it hit, in words, and when the leader died
  /// (for a fault that kills it).
  private func apply(
    _ fault: String, node: Int, cluster: Cluster, history: History
  ) async throws -> (String, (began: Date, ended: Date)?) {
    let hold = Duration.milliseconds(Int64(self.hold * 1000))
    switch fault {
    case "kill-leader-postgres":
      let death = Date()
      let leader = try cluster.run("fault", "kill-leader-postgres").trimmed
      let dead = Date()
      try await cluster.waitUntilHealthy(limit: settleLimit, history: history)
      return ("the leader \(leader)'s PostgreSQL", (death, dead))
    case "lagging-failover":
      let standby = try cluster.run("fault", "pause-standby").trimmed
      try await Task.sleep(for: hold)
      let death = Date()
      let leader = try cluster.run("fault", "kill-leader").trimmed
      let dead = Date()  // (a request sent before this may still have been answered by it)
      // The link to the standby is cut with the leader: the WAL in flight is lost, not resumed.
      _ = try cluster.run("fault", "drop-standby-stream")
      // A new leader, and a save acknowledged by it, before the old one comes back.
      try await cluster.waitForNewLeader(not: leader, limit: settleLimit, history: history)
      _ = try cluster.run("fault", "restart-member", leader)
      try await cluster.waitUntilHealthy(limit: settleLimit, history: history)
      return ("\(standby)'s WAL receiver paused \(self.hold) s, then \(leader)'s host killed", (death, dead))
    case "kill-server":
      _ = try cluster.run("fault", "kill-server", "\(node)")
      try await Task.sleep(for: hold)
      _ = try cluster.run("fault", "start-server", "\(node)")
      return ("node \(node)", nil)
    case "cut-server":
      _ = try cluster.run("fault", "cut-server", "\(node)")
      try await Task.sleep(for: hold)
      _ = try cluster.run("fault", "heal-server", "\(node)")
      return ("node \(node)", nil)
    case "pause-standby":
      let standby = try cluster.run("fault", "pause-standby").trimmed
      try await Task.sleep(for: hold)
      _ = try cluster.run("fault", "resume-standby")
      try await cluster.waitUntilHealthy(limit: settleLimit, history: history)
      return (standby, nil)
    default:
      throw ValidationError("no fault '\(fault)'")
    }
  }

  private func assetsFolder() throws -> String {
    let levels = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("Assets/levels")
    guard FileManager.default.fileExists(atPath: levels.path) else {
      throw ValidationError("run from the repository: Assets/levels holds the demo's levels")
    }
    return levels.path
  }
}

extension String {
  fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}

/// `scripts/cluster.sh`, run to its end.
struct Cluster: Sendable {
  var script: String

  func run(_ arguments: String...) throws -> String { try ChildProcess.run(script, arguments) }

  /// Waits until the cluster has a leader, every member runs, and (with synchronous
  /// replication) a synchronous standby is named; then until a save is acknowledged.
  func waitUntilHealthy(limit: Double, history: History) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int64(limit * 1000))
    while true {
      let status = (try? run("status")) ?? ""
      let lines = status.split(separator: "\n")
      let members = lines.filter { $0.hasPrefix("member ") }
      let synchronous = status.contains("replication: synchronous")
      if lines.contains(where: { $0.hasPrefix("leader: pg") }), members.allSatisfy({ $0.hasSuffix(" running") }),
        !synchronous || lines.contains(where: { $0.hasPrefix("synchronous standby: pg") })
      {
        break
      }
      guard ContinuousClock.now < deadline else { throw ValidationError("the cluster did not settle: \(status)") }
      try await Task.sleep(for: .milliseconds(500))
    }
    try await waitForAcknowledgement(deadline: deadline, history: history)
  }

  /// Waits until a member other than `old` leads, and a save is acknowledged after that.
  func waitForNewLeader(not old: String, limit: Double, history: History) async throws {
    let deadline = ContinuousClock.now + .milliseconds(Int64(limit * 1000))
    while true {
      let status = (try? run("status")) ?? ""
      if let line = status.split(separator: "\n").first(where: { $0.hasPrefix("leader: pg") }),
        !line.hasPrefix("leader: \(old) ")
      {
        break
      }
      guard ContinuousClock.now < deadline else { throw ValidationError("no new leader: \(status)") }
      try await Task.sleep(for: .milliseconds(500))
    }
    try await waitForAcknowledgement(deadline: deadline, history: history)
  }

  private func waitForAcknowledgement(deadline: ContinuousClock.Instant, history: History) async throws {
    let now = Date()
    while history.firstAcknowledgement(after: now) == nil {
      guard ContinuousClock.now < deadline else { throw ValidationError("no save acknowledged after the fault") }
      try await Task.sleep(for: .milliseconds(100))
    }
  }
}

/// What the devices saw: every acknowledgement and every upload of unknown outcome.
final class History: Sendable {
  struct Acknowledged: Sendable {
    var device: Int
    var revision: Int64
    var sha256: String
    /// When the `201` arrived, and when its request was sent.
    var at: Date
    var sent: Date
  }

  struct Unknown: Sendable {
    var device: Int
    var base: Int64?
    var sha256: String
  }

  private let state = Mutex<(acknowledged: [Acknowledged], unknown: [Unknown], retriesAnswered: Int)>(([], [], 0))

  func acknowledged(_ entry: Acknowledged, afterUnknown: Bool) {
    state.withLock {
      $0.acknowledged.append(entry)
      if afterUnknown { $0.retriesAnswered += 1 }
    }
  }

  func unknown(_ entry: Unknown) { state.withLock { $0.unknown.append(entry) } }

  /// A `412` (or `404`) on a device's own slot: its head is not where its last `201` left it.
  func conflict(device: Int) { conflicts.withLock { $0.append(device) } }

  /// The devices that met a `412` on their own slot, once per `412`.
  let conflicts = Mutex<[Int]>([])

  /// Saves the server refused outright.
  let refusals = Mutex<[String]>([])

  func refusal(_ line: String) { refusals.withLock { $0.append(line) } }

  func acknowledgedCount() -> Int { state.withLock { $0.acknowledged.count } }

  /// When the first `201` arrived to a request sent after `date`.
  func firstAcknowledgement(after date: Date) -> Date? {
    state.withLock { $0.acknowledged.lazy.filter { $0.sent > date }.map(\.at).min() }
  }

  func snapshot() -> (acknowledged: [Acknowledged], unknown: [Unknown]) {
    state.withLock { ($0.acknowledged, $0.unknown) }
  }

  let unknownStored = Mutex<Int>(0)
  /// Acknowledged saves not on the server with their bytes, at the last check.
  let lost = Mutex<Int>(0)
  /// Set when the devices are to stop after their upload in flight.
  let stopped = Atomic<Bool>(false)

  func summary() -> (acknowledged: Int, unknown: Int, unknownStored: Int, retriesAnswered: Int) {
    let stored = unknownStored.withLock { $0 }
    return state.withLock { ($0.acknowledged.count, $0.unknown.count, stored, $0.retriesAnswered) }
  }
}

/// One device: its player's token, and a demo game whose every step is a new save.
struct Device: Sendable {
  let index: Int
  let token: String
  let url: String
  let http: HTTPClient
  let history: History
  let first: Engine
  /// The time between a save's answer and the next save.
  let pace: Duration

  init(
    index: Int, token: String, front: String, http: HTTPClient, library: LevelLibrary, history: History,
    pace: Duration
  ) throws {
    self.index = index
    self.pace = pace
    self.token = token
    self.url = "\(front)/v1/slots/save"
    self.http = http
    self.history = history
    first = try Engine(library: library, level: 2, seed: UInt64(index) + 1)
  }

  /// Uploads a new save after each answer until the history says stop; an upload whose outcome is unknown is
  /// sent again, the same bytes on the same base, until the server answers it.
  func run() async {
    var engine = first
    var head: Int64?
    while !history.stopped.load(ordering: .relaxed) && !Task.isCancelled {
      _ = engine.step(Input(right: true))
      let state = engine.snapshot()
      guard let summary = try? state.summary(),
        let document = try? DemoSaveFormat.codec.document(
          for: state, summary: summary, createdAt: 1_795_000_000_000)
      else { return }
      let bytes = SaveFileFormat.encode(document)
      let sha256 = hexEncoded(SHA256.hash(data: bytes))
      var unknown = false
      var retries = 0
      while true {
        let sent = Date()
        let outcome = await upload(bytes, base: head)
        switch outcome {
        case .acknowledged(let revision):
          history.acknowledged(
            .init(device: index, revision: revision, sha256: sha256, at: Date(), sent: sent), afterUnknown: unknown)
          head = revision
          try? await Task.sleep(for: pace)  // the game plays on until its next save
        case .conflict(let serverHead):
          // One device per slot: its head moved back (the failover lost saves the device was
          // told were stored; the checker names them), or a retry of a stored upload was not
          // recognised. The device goes on from the server's head, as a game would after merging.
          history.conflict(device: index)
          head = serverHead
        case .refused(let status, let message):
          // The server refused a good save: a violation of its own, and this device stops.
          history.refusal("device \(index): a save refused with HTTP \(status): \(message.prefix(200))")
          return
        case .unknown(let wait):
          if !unknown { history.unknown(.init(device: index, base: head, sha256: sha256)) }
          unknown = true
          if Task.isCancelled { return }  // the run failed: no storm of retries on its way out
          retries += 1
          // The run is over and the cluster has not answered for minutes: the checker's last
          // read reports what became of this upload (stored once, or not at all).
          if history.stopped.load(ordering: .relaxed) && retries > 300 { return }
          try? await Task.sleep(for: wait)
          continue
        }
        break
      }
    }
  }

  enum Outcome {
    case acknowledged(Int64)
    /// A definite refusal (`400`, `401`, `403`, `413`): the status and the server's message.
    case refused(Int, String)
    /// `412`: the server's head (nil: no slot).
    case conflict(Int64?)
    case unknown(retryAfter: Duration)
  }

  private func upload(_ bytes: [UInt8], base: Int64?) async -> Outcome {
    var request = HTTPClientRequest(url: url)
    request.method = .PUT
    request.headers.add(name: "Authorization", value: "Bearer \(token)")
    if let base {
      request.headers.add(name: "If-Match", value: "\"\(base)\"")
    } else {
      request.headers.add(name: "If-None-Match", value: "*")
    }
    request.headers.add(name: "Content-Type", value: "application/vnd.stasis")
    request.body = .bytes(ByteBuffer(bytes: bytes))
    do {
      let response = try await http.execute(request, timeout: .seconds(10))
      let body = try await response.body.collect(upTo: 1 << 20)
      if response.status == .created, let tag = response.headers.first(name: "ETag"),
        let revision = Int64(tag.trimmingCharacters(in: ["\""]))
      {
        return .acknowledged(revision)
      }
      if response.status == .preconditionFailed {
        let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
        let head = (object?["head"] as? [String: Any])?["revision"] as? NSNumber
        return .conflict(head?.int64Value)
      }
      if response.status == .notFound { return .conflict(nil) }  // the slot itself was lost
      if [400, 401, 403, 413].contains(response.status.code) {
        return .refused(Int(response.status.code), String(buffer: body))
      }
      let wait = response.headers.first(name: "Retry-After").flatMap(Int.init).map { Duration.seconds($0) }
      return .unknown(retryAfter: min(wait ?? .milliseconds(200), .seconds(2)))
    } catch {
      return .unknown(retryAfter: .milliseconds(200))
    }
  }
}

/// Reads everything back through the API and checks it against the history.
final class Checker: Sendable {
  let http: HTTPClient
  let front: String
  let tokens: [String]
  let history: History
  /// Every (device, revision) → SHA-256 ever served or acknowledged.
  private let seen = Mutex<[Int: [Int64: String]]>([:])
  /// Revisions whose bytes were downloaded and hashed.
  private let verified = Mutex<Set<String>>([])

  init(http: HTTPClient, front: String, tokens: [String], history: History) {
    (self.http, self.front, self.tokens, self.history) = (http, front, tokens, history)
  }

  /// The violations now: every acknowledged save against the slot's list, the bytes of those
  /// acknowledged since `downloadSince` (nil: all not downloaded yet), every upload of unknown
  /// outcome; with `final`, also whether each device's slot ends at its last save.
  func check(final: Bool, downloadSince: Date?) async throws -> [String] {
    let (acknowledged, unknown) = history.snapshot()
    var violations: [String] = []
    var listed: [Int: [Int64: String]] = [:]
    for (device, token) in tokens.enumerated() {
      guard let revisions = try await list(token) else {
        violations.append("device \(device): its slot's revisions could not be read")
        continue
      }
      listed[device] = revisions
    }
    func note(_ device: Int, _ revision: Int64, _ sha256: String) {
      let previous = seen.withLock { seen -> String? in
        if let known = seen[device]?[revision] { return known }
        seen[device, default: [:]][revision] = sha256
        return nil
      }
      if let previous, previous != sha256 {
        let pair = [previous.prefix(12), sha256.prefix(12)].sorted()
        violations.append("device \(device): revision \(revision) served with two contents (\(pair[0]) and \(pair[1]))")
      }
    }
    for entry in acknowledged { note(entry.device, entry.revision, entry.sha256) }
    for (device, revisions) in listed.sorted(by: { $0.key < $1.key }) {
      for (revision, sha256) in revisions.sorted(by: { $0.key < $1.key }) { note(device, revision, sha256) }
    }
    var toDownload: [History.Acknowledged] = []
    for entry in acknowledged {
      guard let revisions = listed[entry.device] else { continue }
      guard let sha256 = revisions[entry.revision] else {
        violations.append(
          "LOST device \(entry.device): revision \(entry.revision) (\(entry.sha256.prefix(12))) was acknowledged "
            + "with 201 and is not on the server")
        continue
      }
      guard sha256 == entry.sha256 else { continue }  // reported as two contents above
      if let downloadSince, entry.at < downloadSince { continue }
      if verified.withLock({ $0.contains("\(entry.device)/\(entry.revision)") }) { continue }
      toDownload.append(entry)
    }
    // The downloads, a device's at a time, the devices at once.
    let byDevice = Dictionary(grouping: toDownload, by: \.device).sorted { $0.key < $1.key }
    violations += try await withThrowingTaskGroup(of: [String].self) { group in
      for (device, entries) in byDevice {
        group.addTask {
          var found: [String] = []
          for entry in entries {
            guard let bytes = try await self.download(self.tokens[device], revision: entry.revision) else {
              found.append("LOST device \(device): revision \(entry.revision) is listed but cannot be read")
              continue
            }
            let read = hexEncoded(SHA256.hash(data: bytes))
            if read == entry.sha256 {
              self.verified.withLock { _ = $0.insert("\(device)/\(entry.revision)") }
            } else {
              found.append(
                "device \(device): revision \(entry.revision)'s bytes hash to \(read.prefix(12)), "
                  + "acknowledged as \(entry.sha256.prefix(12))")
            }
          }
          return found
        }
      }
      var all: [String] = []
      for try await found in group { all += found }
      return all.sorted()
    }
    var stored = 0
    for entry in unknown {
      guard let revisions = listed[entry.device] else { continue }
      let copies = revisions.values.filter { $0 == entry.sha256 }.count
      if copies > 1 {
        violations.append(
          "device \(entry.device): an upload of unknown outcome (\(entry.sha256.prefix(12))) is stored \(copies) times")
      }
      stored += copies == 1 ? 1 : 0
    }
    history.unknownStored.withLock { $0 = stored }
    // Acknowledged saves whose revision is gone or now holds other bytes: lost.
    let lost = acknowledged.filter { entry in listed[entry.device].map { $0[entry.revision] != entry.sha256 } ?? false }
    history.lost.withLock { $0 = lost.count }
    if final {
      for (device, token) in tokens.enumerated() {
        let last = acknowledged.filter { $0.device == device }.max { $0.revision < $1.revision }
        let head = try await head(token)
        if head?.revision != last?.revision || head?.sha256 != last?.sha256 {
          violations.append(
            "device \(device): the slot's head is \(head.map { "r\($0.revision)" } ?? "none"), "
              + "its last acknowledged save \(last.map { "r\($0.revision)" } ?? "none")")
        }
      }
    }
    // Each violation once, in the check that first found it.
    return reported.withLock { reported in violations.filter { reported.insert($0).inserted } }
  }

  /// The violations reported so far.
  private let reported = Mutex<Set<String>>([])

  private func get(_ token: String, _ path: String) async throws -> (Int, [UInt8], HTTPHeaders) {
    // Reads retry through the same faults the uploads see: a read that fails is not a loss.
    var attempt = 0
    while true {
      do {
        var request = HTTPClientRequest(url: front + path)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await http.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 64 << 20)
        if response.status.code < 500 { return (Int(response.status.code), [UInt8](buffer: body), response.headers) }
      } catch {}
      attempt += 1
      guard attempt < 60 else { throw ValidationError("GET \(path) did not answer in 60 tries") }
      try await Task.sleep(for: .milliseconds(500))
    }
  }

  private func list(_ token: String) async throws -> [Int64: String]? {
    let (status, body, _) = try await get(token, "/v1/slots/save/revisions")
    if status == 404 { return [:] }
    guard status == 200, let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
      let revisions = object["revisions"] as? [[String: Any]]
    else { return nil }
    var result: [Int64: String] = [:]
    for revision in revisions {
      if let number = (revision["revision"] as? NSNumber)?.int64Value, let sha = revision["sha256"] as? String {
        result[number] = sha
      }
    }
    return result
  }

  private func download(_ token: String, revision: Int64) async throws -> [UInt8]? {
    let (status, body, _) = try await get(token, "/v1/slots/save/revisions/\(revision)")
    return status == 200 ? body : nil
  }

  private func head(_ token: String) async throws -> (revision: Int64, sha256: String)? {
    let (status, body, headers) = try await get(token, "/v1/slots/save")
    guard status == 200, let tag = headers.first(name: "ETag"), let revision = Int64(tag.trimmingCharacters(in: ["\""]))
    else { return nil }
    return (revision, hexEncoded(SHA256.hash(data: body)))
  }
}

/// A line on standard output, written at once (print's buffer would hold a long run's progress
/// until its end when the output is a pipe, as in CI).
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
