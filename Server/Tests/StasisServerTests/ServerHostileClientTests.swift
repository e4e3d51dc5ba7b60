import Foundation
import NIOHTTP1
import Stasis
import Synchronization
import Testing

@testable import ServerTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The server against clients that mean it harm: descriptor floods, requests that trickle in
/// a byte at a time (against a running `stasis-server`), saves with impossible headers, and
/// requests the contract does not allow (through its router in this process, where no socket
/// is needed).
@Suite("stasis-server: hostile clients", .serialized)
struct ServerHostileClientTests {
  // Live: a flood of sockets against a process's descriptor limit.
  @Test(
    "2,000 connections against ulimit -n 1024: accepted ones are served, the rest shed with 503, no crash",
    arguments: Backend.allCases)
  func descriptorFlood(backend: Backend) async throws {
    let database = try Database(backend)
    let player = try database.addPlayer()
    // The flood's served connections must stay open (idle) for the whole test, however slow
    // the machine: a deadline that closed them would free places for the rest of the flood.
    let server = try ServerProcess(database, ["--request-timeout", "600"], descriptors: (1024, 1024))
    defer { server.stop() }
    let maximum = try #require(Int(server.banner.firstMatch(of: /max connections (\d+)/)?.1 ?? ""), "\(server.banner)")
    #expect(server.banner.contains("descriptors: soft 1024, hard 1024"), "\(server.banner)")
    #expect(maximum < 1024 - 64, "the cap leaves room for the database and the shedding band")
    #expect(raiseOwnDescriptorLimit() > 2600, "the test itself needs descriptors for the flood")

    let keepers = try (0..<4).map { _ in try RawConnection(port: server.port) }
    for keeper in keepers {
      #expect(keeper.exchange(requestHead("GET", "/health"))?.status == 200)
    }

    let flood = Flood(port: server.port, count: 2000)
    defer { flood.closeAll() }
    // Synchronised on what the server does, not on time: every connection has been answered
    // by the kernel, and the server has shed one with 503, which it does only once the cap is
    // full. (How many of the first band it sheds before the keepers ask depends on the
    // descriptors the backend holds: 64 on SQLite, 29 in one PostgreSQL run.)
    flood.run(until: { $0.pending == 0 && $0.shed >= 1 }, seconds: 60)
    let early = flood.counts
    #expect(early.shed >= 1 && early.pending == 0, "\(early)")
    for keeper in keepers {
      let health = keeper.exchange(requestHead("GET", "/health"))
      #expect(health?.status == 200, "an accepted connection is still served during the flood")
      let slots = keeper.exchange(requestHead("GET", "/v1/slots", token: player.token))
      #expect(slots?.status == 200)
    }
    // Every idle flood connection the server accepted is still served: each answers a request.
    flood.probe(requestHead("GET", "/health"))
    flood.run(until: { $0.open == 0 }, seconds: 120)
    let counts = flood.counts
    #expect(server.process.isRunning, "never exits")
    let servedFlood = maximum - keepers.count
    #expect(counts.served == servedFlood, "every connection accepted within the cap answered 200: \(counts)")
    #expect(
      counts.shed + counts.served + counts.dropped + counts.refused == 2000, "\(counts) \(flood.otherAnswers)")
    #expect(counts.other == 0, "no other answer: \(counts) \(flood.otherAnswers)")
    #expect(counts.shed >= 2000 - servedFlood - 512, "most of the rest were answered 503: \(counts)")
    #expect(flood.sheddingAnswersWellFormed, "each 503 has Retry-After and a JSON error")
    flood.closeAll()

    // Answers normally afterwards, once the server has seen the flood's connections close.
    var after: RawResponse?
    for _ in 0..<200 {
      after = try RawConnection(port: server.port).exchange(requestHead("GET", "/health"))
      if after?.status == 200 { break }
    }
    #expect(after?.status == 200)
    let client = Client(base: server.base, token: player.token)
    #expect(try await client.put("after-flood", DemoSaves.small[0], create: true).status == 201)
    let metrics = try await Client(base: server.base).send(.GET, "/metrics").text
    let shedMetric = metrics.firstMatch(of: /stasis_connections_shed_total (\d+)/).flatMap { Int($0.1) } ?? -1
    #expect(shedMetric >= counts.shed, "/metrics counts what was shed: \(shedMetric)")
    #expect(server.stop(SIGTERM) == 0, "a clean exit, not a signal")
    let log = server.log
    #expect(!log.contains("Too many open files") && !log.contains("EMFILE"), "never out of descriptors")
    // The figures docs/RELIABILITY.md quotes.
    print(
      "flood (\(backend)): max connections \(maximum); of 2000 idle connections, \(counts.served) accepted, held "
        + "and then answered 200, \(counts.shed) answered 503 (\(early.shed) before the keepers' requests), "
        + "\(counts.dropped) dropped by the kernel's full listen queue, \(counts.refused) refused; "
        + "the 4 keepers answered 200; /metrics shed \(shedMetric)")
  }

  // Live: deadlines on one kept-alive connection.
  @Test("a kept-alive connection: each request gets its own deadline, counted from the end of the last exchange")
  func keptAlive() throws {
    let database = try Database(.sqlite)
    let player = try database.addPlayer()
    let deadline = 2.0
    let server = try ServerProcess(database, ["--request-timeout", "\(deadline)"])
    defer { server.stop() }
    let connection = try RawConnection(port: server.port, readTimeout: 10)
    let get = requestHead("GET", "/v1/slots", token: player.token)
    for round in 1...3 {
      let response = connection.exchange(get)
      #expect(response?.status == 200, "request \(round), at \(Double(round - 1) * 1.5) s on one connection")
      // The scenario: the next request comes 1.5 s after this answer, past the first exchange's deadline.
      if round < 3 { Thread.sleep(forTimeInterval: 1.5) }
    }
  }

  // Live: the request deadline, in the HTTP/1 channel's pipeline, under the router.
  @Test("a slow database: the request's deadline runs until its answer, and the statement is cancelled behind it")
  func slowDatabase() async throws {
    let database = try Database(.postgres)
    let player = try database.addPlayer()
    let deadline = 2.0
    let server = try ServerProcess(database, ["--request-timeout", "\(deadline)"])
    defer { server.stop() }
    // Another session holds the player's row (as a long transaction would), for 8 s.
    let locker = Process()
    // Line-buffered, so its "locked" arrives as soon as it is printed (psql's output to a pipe
    // is otherwise held until it exits).
    locker.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
    locker.arguments = ["-oL", "psql", try #require(Backend.postgresURL), "-q", "-v", "ON_ERROR_STOP=1", "-f", "-"]
    let input = Pipe()
    let output = Pipe()
    locker.standardInput = input
    locker.standardOutput = output
    try launch(locker)
    defer { locker.terminate() }
    input.fileHandleForWriting.write(
      Data(
        """
        BEGIN;
        SELECT 1 FROM players WHERE name = '\(player.name)' FOR UPDATE;
        \\echo locked
        SELECT pg_sleep(8);
        COMMIT;

        """.utf8))
    try input.fileHandleForWriting.close()  // psql ends after the COMMIT
    var seen = ""
    while !seen.contains("locked") {  // the lock is held once psql says so
      let chunk = output.fileHandleForReading.availableData
      guard !chunk.isEmpty else { break }
      seen += String(decoding: chunk, as: UTF8.self)
    }
    #expect(seen.contains("locked"), "psql: \(seen)")

    struct Tiny: Codable, Sendable { var value = 1 }
    let codec = SaveCodec<Tiny>(game: GameIdentity(name: "tiny"))
    let file = SaveFileFormat.encode(try codec.document(for: Tiny(), summary: SaveSummary(), createdAt: 0))
    let connection = try RawConnection(port: server.port, readTimeout: 20)
    let start = ContinuousClock.now
    let head = requestHead(
      "PUT", "/v1/slots/waits", token: player.token, headers: [("If-None-Match", "*")], contentLength: file.count)
    #expect(connection.send(Array(head.utf8) + file), "the whole request, at once")
    let (bytes, closed) = connection.readToEnd()
    let seconds = (ContinuousClock.now - start) / .seconds(1)
    let response = RawResponse(parsing: bytes)
    #expect(closed, "closed by the server")
    #expect(response?.status == 503, "\(String(decoding: bytes.prefix(300), as: UTF8.self))")
    #expect(response?.json["error"] is String)
    #expect(
      seconds >= deadline - 0.05 && seconds < deadline + 1.5, "answered at its deadline, not the lock's 8 s: \(seconds)"
    )
    // PostgreSQL cancelled the upload's statement a second after the deadline: it committed nothing.
    locker.waitUntilExit()
    let slots = try await Client(base: server.base, token: player.token).send(.GET, "/v1/slots")
    #expect(slots.status == 200)
    #expect(!slots.text.contains("waits"), "\(slots.text)")
  }

  // Live: bytes that trickle in over sockets, and the deadlines that close them.
  @Test(
    "a request that trickles in is closed at its deadline, on every route and after a 413",
    arguments: Backend.allCases)
  func trickle(backend: Backend) async throws {
    let database = try Database(backend)
    let player = try database.addPlayer()
    let deadline = 2.0
    let server = try ServerProcess(database, ["--request-timeout", "\(deadline)", "--max-body-bytes", "1000"])
    defer { server.stop() }
    let token = player.token
    // (name, what is sent at once, the status answered before the close, nil for none)
    let cases: [(String, String, Int?)] = [
      ("GET with a body", requestHead("GET", "/v1/slots", token: token, contentLength: 100_000), 200),
      (
        "DELETE with a body",
        requestHead("DELETE", "/v1/slots/x", token: token, headers: [("If-Match", "\"1\"")], contentLength: 100_000),
        404
      ),
      ("an unknown route", requestHead("POST", "/nowhere", contentLength: 100_000), 404),
      (
        "the rest of a body after a 413",
        requestHead("PUT", "/v1/slots/big", token: token, headers: [("If-None-Match", "*")], contentLength: 5000), 413
      ),
      (
        "an upload's body",
        requestHead("PUT", "/v1/slots/slow", token: token, headers: [("If-None-Match", "*")], contentLength: 900), 408
      ),
      ("headers", "GET /v1/slots HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ", 408),
      ("an idle connection", "", nil),
    ]
    // All at once, each on a thread of its own (they block on their sockets).
    let port = server.port
    let results = await withTaskGroup(of: (String, TrickleResult).self) { group in
      for (name, head, _) in cases {
        group.addTask {
          await withCheckedContinuation { done in
            Thread { done.resume(returning: (name, trickleRequest(port: port, head: head))) }.start()
          }
        }
      }
      return await group.reduce(into: [String: TrickleResult]()) { $0[$1.0] = $1.1 }
    }
    for (name, _, status) in cases {
      let result = try #require(results[name], "\(name)")
      let seconds = String(format: "%.2f", result.seconds)
      let answer = String(decoding: result.bytes.prefix(300), as: UTF8.self)
      #expect(result.closed, "\(name): closed by the server")
      #expect(result.seconds >= deadline - 0.05, "\(name): not before the deadline (\(seconds) s)")
      #expect(result.seconds < deadline + 1.5, "\(name): within the deadline, each byte moving nothing (\(seconds) s)")
      #expect(result.response?.status == status, "\(name): \(answer)")
      if let response = result.response, response.status >= 400 {
        #expect(response.json["error"] is String, "\(name): a JSON error")
      }
      print(
        "trickle (\(backend)): \(name): \(status.map(String.init) ?? "nothing"), closed after \(String(format: "%.2f", result.seconds)) s"
      )
    }
    let slots = try await Client(base: server.base, token: token).send(.GET, "/v1/slots")
    #expect((slots.json["slots"] as? [Any])?.isEmpty == true, "nothing stored")
    #expect(server.process.isRunning)
  }

  @Test(
    "a save whose header is impossible (NaN play time, …) is refused with 400, nothing stored",
    arguments: Backend.allCases)
  func impossibleHeader(backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      let good = try SaveFileFormat.decode(DemoSaves.small[0])
      let edits: [(String, String, (inout SaveDocument) -> Void)] = [
        ("NaN play time", "play time", { $0.summary.playTime = .nan }),
        ("infinite play time", "play time", { $0.summary.playTime = .infinity }),
        ("negative play time", "play time", { $0.summary.playTime = -1 }),
        ("negative frame", "frame", { $0.summary.frame = -1 }),
        ("created before 1970", "creation time", { $0.createdAt = -1 }),
        ("created after 9999", "creation time", { $0.createdAt = .max }),
      ]
      let folder = temporaryURL("stasis-hostile")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      for (index, (name, field, edit)) in edits.enumerated() {
        var document = good
        edit(&document)
        let bytes = SaveFileFormat.encode(document)
        let reply = try await client.put("bad-\(index)", bytes, create: true)
        #expect(reply.status == 400, "\(name)")
        #expect((reply.json["error"] as? String)?.contains(field) == true, "\(name): \(reply.text)")
        // The same reader refuses it everywhere: the CLI too.
        let file = folder.appendingPathComponent("bad-\(index).stasis")
        try Data(bytes).write(to: file)
        let verify = try run(product("stasis"), ["verify", file.path])
        #expect(verify.status == 1, "stasis verify refuses \(name): \(verify.out)\(verify.err)")
      }
      let slots = try await client.send(.GET, "/v1/slots")
      #expect((slots.json["slots"] as? [Any])?.isEmpty == true, "nothing stored")
      #expect(try await client.send(.GET, "/v1/slots/bad-0").status == 404)
      #expect(
        try await client.put("good", DemoSaves.small[0], create: true).status == 201, "a sane header still passes")
    }
  }

  @Test(
    "every error is the contract's: JSON bodies, 400 for bad slot paths, strict If-Match, any-case Bearer",
    arguments: Backend.allCases)
  func contractStatuses(backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let player = try await server.addPlayer()
      let client = server.client(token: player.token)
      let save = DemoSaves.small[0]
      #expect(try await client.put("one", save, create: true).status == 201)

      for path in ["/v1/slots/a/b", "/v1/slots/", "/v1/slots/a/revisions/1/x"] {
        let reply = try await client.send(.PUT, path, headers: [("If-None-Match", "*")], body: save)
        #expect(reply.status == 400, "PUT \(path)")
        #expect((reply.json["error"] as? String)?.contains("slot name") == true, "PUT \(path): \(reply.text)")
      }
      #expect(try await client.send(.GET, "/v1/slots/a/b").status == 400)
      let unknown = try await client.send(.GET, "/nowhere")
      #expect(unknown.status == 404)
      #expect(unknown.header("Content-Type") == "application/json")
      #expect(unknown.json["error"] is String, "\(unknown.text)")

      for tag in [
        "\"+1\"", "\"01\"", "\"0\"", "\"1 \"", "\" 1\"", "\"1\", \"2\"", "W/\"1\"", "\"1234567890123456789\"",
      ] {
        let put = try await client.send(.PUT, "/v1/slots/one", headers: [("If-Match", tag)], body: save)
        #expect(put.status == 400, "PUT If-Match: \(tag)")
        #expect(put.json["error"] is String)
        let delete = try await client.send(.DELETE, "/v1/slots/one", headers: [("If-Match", tag)])
        #expect(delete.status == 400, "DELETE If-Match: \(tag)")
      }
      #expect(try await client.put("one", save, ifMatch: 1).status == 201, "\"1\" itself is fine")

      for scheme in ["bearer", "BEARER", "bEaReR"] {
        let reply = try await server.client().send(
          .GET, "/v1/slots", headers: [("Authorization", "\(scheme) \(player.token)")])
        #expect(reply.status == 200, "Authorization: \(scheme) …")
      }
      let basic = try await server.client().send(
        .GET, "/v1/slots", headers: [("Authorization", "Basic \(player.token)")])
      #expect(basic.status == 401)
      #expect(basic.json["error"] is String)
    }
  }

  // Live: the HTTP parser, under the router, reads bytes from a socket.
  @Test(
    "what the HTTP parser refuses is the API's JSON 400 too, and the connection closes", arguments: Backend.allCases)
  func parserErrors(backend: Backend) async throws {
    let server = try ServerProcess(try Database(backend))
    defer { server.stop() }
    for garbage in [
      "GET /health HTTP/1.1\r\nHost: x\r\nNot a header line\r\n\r\n",
      "\u{1}\u{2}\u{3} nonsense\r\n\r\n",
      "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
    ] {
      let connection = try RawConnection(port: server.port, readTimeout: 10)
      let reply = connection.exchange(garbage)
      #expect(reply?.status == 400, "\(garbage.debugDescription)")
      #expect(reply?.header("Content-Type") == "application/json")
      #expect(reply?.json["error"] is String, "\(reply?.text ?? "no answer")")
      #expect(connection.readToEnd().closed, "then the connection closes")
    }
    #expect(server.process.isRunning)
  }

  // Live: a process's descriptor limits and the connection cap.
  @Test(
    "descriptor limits: the soft one is raised to the hard one; a cap that does not fit is refused; past the cap, 503")
  func descriptorLimits() async throws {
    let database = try Database(.sqlite)
    let raised = try ServerProcess(database, [], descriptors: (256, 1024))
    #expect(raised.banner.contains("descriptors: soft 1024 (raised from 256), hard 1024"), "\(raised.banner)")
    #expect(raised.stop() == 0)

    let tooMany = try run(
      "/bin/sh",
      ["-c", "ulimit -n 1024 && exec \"$0\" \"$@\"", serverBinary, "serve", "--port", "0", "--max-connections", "5000"]
        + database.arguments)
    #expect(tooMany.status != 0)
    #expect(tooMany.err.contains("--max-connections 5000 does not fit the descriptor limit"), "\(tooMany.err)")

    let alias = try ServerProcess(database, ["--body-timeout", "0.5"])
    #expect(alias.banner.contains("request timeout 0.5 s"), "--body-timeout, the older name: \(alias.banner)")
    #expect(alias.stop() == 0)

    let capped = try ServerProcess(database, ["--max-connections", "2"])
    defer { capped.stop() }
    #expect(capped.banner.contains("max connections 2 (+64 answered 503)"), "\(capped.banner)")
    let first = try RawConnection(port: capped.port)
    let second = try RawConnection(port: capped.port)
    #expect(first.exchange(requestHead("GET", "/health"))?.status == 200)
    #expect(second.exchange(requestHead("GET", "/health"))?.status == 200)
    let third = try RawConnection(port: capped.port)
    let shed = third.exchange(requestHead("GET", "/health"))
    #expect(shed?.status == 503)
    #expect(shed?.header("Retry-After") == "1")
    #expect(shed?.json["error"] is String)
    #expect(third.readToEnd().closed, "a shed connection is closed")
    #expect(first.exchange(requestHead("GET", "/health"))?.status == 200, "the served ones are still served")
    let metrics = first.exchange(requestHead("GET", "/metrics"))?.text ?? ""
    #expect(metrics.contains("stasis_connections_shed_total 1"), "\(metrics.prefix(2000))")
  }
}

/// What a trickled request met: the answer, whether and when the server closed.
struct TrickleResult: Sendable {
  var bytes: [UInt8]
  var closed: Bool
  var seconds: Double
  var response: RawResponse? { RawResponse(parsing: bytes) }
}

/// Connects, sends `head`, then one more byte every 100 ms (at most for 10 s) while reading
/// until the server closes the connection.
func trickleRequest(port: Int, head: String) -> TrickleResult {
  let start = ContinuousClock.now
  guard let connection = try? RawConnection(port: port, readTimeout: 10) else {
    return TrickleResult(bytes: [], closed: false, seconds: 0)
  }
  let stop = Atomic<Bool>(false)
  if !head.isEmpty {
    connection.send(head)
    let trickler = Thread {
      for _ in 0..<100 where !stop.load(ordering: .relaxed) {
        guard connection.send([UInt8(ascii: "a")]) else { return }
        Thread.sleep(forTimeInterval: 0.1)  // the attack itself: one byte every 100 ms
      }
    }
    trickler.start()
  }
  let (bytes, closed) = connection.readToEnd()
  stop.store(true, ordering: .relaxed)
  return TrickleResult(bytes: bytes, closed: closed, seconds: (ContinuousClock.now - start) / .seconds(1))
}

/// Thousands of non-blocking connections that send nothing, watched with `poll`. Each is
/// pending (connecting), open (connected, nothing received), shed (a `503` read; we close it
/// then, as a client would), or something else (counted, so a test can insist there is none).
/// ``probe(_:)`` then sends a request on every open one and sorts them by what comes back:
/// served (a `200`; kept open, so it keeps its place), shed late (a `503`), or dropped (reset or closed without an answer: the
/// kernel's listen queue overflowed and forgot the connection, which the client cannot see
/// until it sends).
final class Flood: @unchecked Sendable {
  struct Counts: CustomStringConvertible {
    var pending = 0
    var open = 0
    var shed = 0
    var served = 0
    var dropped = 0
    var refused = 0
    var other = 0
    var description: String {
      "pending \(pending), open \(open), shed \(shed), served \(served), dropped \(dropped), "
        + "refused \(refused), other \(other)"
    }
  }

  private enum State { case connecting, open, probing, shed, served, dropped, refused, other }
  private var descriptors: [Int32] = []
  private var states: [State] = []
  private var received: [[UInt8]] = []
  private(set) var sheddingAnswersWellFormed = true
  /// Statuses other than 200 and 503, for the failure message.
  private(set) var otherAnswers: [String] = []

  init(port: Int, count: Int) {
    var address = loopback(port)
    for _ in 0..<count {
      let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
      guard descriptor >= 0 else { continue }
      _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      descriptors.append(descriptor)
      states.append(.connecting)
      received.append([])
    }
  }

  var counts: Counts {
    var counts = Counts()
    for state in states {
      switch state {
      case .connecting: counts.pending += 1
      case .open, .probing: counts.open += 1
      case .shed: counts.shed += 1
      case .served: counts.served += 1
      case .dropped: counts.dropped += 1
      case .refused: counts.refused += 1
      case .other: counts.other += 1
      }
    }
    return counts
  }

  /// Polls until `done` holds or `seconds` pass.
  func run(until done: (Counts) -> Bool, seconds: Double) {
    let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    var buffer = [UInt8](repeating: 0, count: 4096)
    while ContinuousClock.now < end, !done(counts) {
      var watched: [pollfd] = []
      var indices: [Int] = []
      for (index, state) in states.enumerated() where [.connecting, .open, .probing].contains(state) {
        let events = state == .connecting ? Int16(POLLOUT) | Int16(POLLIN) : Int16(POLLIN)
        watched.append(pollfd(fd: descriptors[index], events: events, revents: 0))
        indices.append(index)
      }
      if watched.isEmpty { return }
      let ready = poll(&watched, nfds_t(watched.count), 50)
      if ready <= 0 { continue }
      for (slot, entry) in watched.enumerated() where entry.revents != 0 {
        let index = indices[slot]
        let descriptor = descriptors[index]
        if states[index] == .connecting {
          var error: Int32 = 0
          var length = socklen_t(MemoryLayout<Int32>.size)
          getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
          if error != 0 {
            finish(index, .refused)
            continue
          }
          states[index] = .open
          if entry.revents & Int16(POLLIN) == 0 { continue }
        }
        let count = recv(descriptor, &buffer, buffer.count, 0)
        if count > 0 {
          received[index] += buffer[0..<count]
          if let response = RawResponse(parsing: received[index]) { finish(index, response) }
        } else if count == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) {
          if let response = RawResponse(parsing: received[index]) {
            finish(index, response)
          } else {
            finish(index, states[index] == .probing ? .dropped : .other)
          }
        }
      }
    }
  }

  /// Sends `request` on every open connection; ``run(until:seconds:)`` then reads the answers.
  func probe(_ request: String) {
    let bytes = Array(request.utf8)
    for index in states.indices where states[index] == .open {
      let sent = bytes.withUnsafeBytes { send(descriptors[index], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      if sent == bytes.count {
        states[index] = .probing
      } else {
        finish(index, .dropped)
      }
    }
  }

  private func finish(_ index: Int, _ response: RawResponse) {
    switch response.status {
    case 503:
      if response.header("Retry-After") == nil || !(response.json["error"] is String) {
        sheddingAnswersWellFormed = false
      }
      finish(index, .shed)
    case 200 where states[index] == .probing:
      // Kept open: a served connection keeps its place, so the cap stays full while the rest
      // of the flood is answered.
      states[index] = .served
    default:
      otherAnswers.append("\(response.status) \(response.text.prefix(100))")
      finish(index, .other)
    }
  }

  private func finish(_ index: Int, _ state: State) {
    states[index] = state
    close(descriptors[index])
    descriptors[index] = -1
  }

  /// Closes every connection still open.
  func closeAll() {
    for index in descriptors.indices where descriptors[index] >= 0 {
      close(descriptors[index])
      descriptors[index] = -1
    }
  }

  deinit { closeAll() }
}
