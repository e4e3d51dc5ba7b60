import Foundation
import Stasis
import StasisCloud
import Testing

@testable import ServerTestSupport

@Suite("A conflict's loser stays on the server until it is discarded", .serialized)
struct KeptLoserTests {
  /// The revision list of slot `autosave`, as the API's JSON objects, newest first.
  private func revisions(_ client: Client) async throws -> [[String: Any]] {
    try await client.send(.GET, "/v1/slots/autosave/revisions").json["revisions"] as? [[String: Any]] ?? []
  }

  @Test(
    "a conflict, then more uploads than --keep-revisions: the loser is readable, marked kept, counted in the player's bytes, and goes only when discarded",
    arguments: Backend.allCases)
  func loserOutlivesPruning(backend: Backend) async throws {
    let database = try Database(backend)
    let player = try database.addPlayer()
    var server = try ServerProcess(database, ["--keep-revisions", "3"])
    defer { server.stop() }
    let a = Device(server: server.base, token: player.token, name: "A")
    let b = Device(server: server.base, token: player.token, name: "B", policy: .mostRecent)
    try a.save(PlayerState(), at: 100)
    #expect(await a.sync.synchronize().error == nil)  // r1
    #expect(await b.sync.synchronize().restore == 1)
    try a.save(PlayerState(score: .init(points: 1)), at: 200)
    #expect(await a.sync.synchronize().error == nil)  // r2: theirs, for B
    let loserSHA = try fileSHA(a, a.generations[0])
    try b.save(PlayerState(score: .init(points: 2)), at: 300)  // newer: ours wins, and goes up on r2
    #expect(await b.sync.synchronize().error == nil)
    let conflict = try #require(b.sync.status.conflicts.first)
    #expect((conflict.theirs, conflict.outcome, conflict.revision) == (2, .side(.ours), 3))

    for points in 3...7 {  // five more uploads: r4 … r8, past --keep-revisions 3
      try b.save(PlayerState(score: .init(points: Int64(points))), at: Int64(points) * 100 + 100)
      #expect(await b.sync.push().error == nil)
    }
    var raw = Client(base: server.base, token: player.token)
    var list = try await revisions(raw)
    #expect(list.map { $0["revision"] as? Int } == [8, 7, 6, 2], "the newest 3, and the loser")
    let loser = try #require(list.first { $0["revision"] as? Int == 2 })
    #expect(loser["kept"] as? Bool == true)
    #expect(loser["lostTo"] as? Int == 3)
    #expect((loser["keptReason"] as? String)?.hasPrefix("lost a conflict to r3") == true, "\(loser)")
    #expect(list.filter { $0["kept"] as? Bool == true }.count == 1, "only the loser is marked")
    #expect(list.first?["kept"] as? Bool == false)
    let download = try await raw.send(.GET, "/v1/slots/autosave/revisions/2")
    #expect(download.status == 200)
    #expect(sha256(download.body) == loserSHA, "A's save, whole")

    // The loser counts against the player's bytes: a limit that fits the newest 3 and one more
    // upload, but not the loser too, refuses the next upload until the loser is discarded.
    let used = list.reduce(0) { $0 + ($1["bytes"] as? Int ?? 0) }
    let next = try b.save(PlayerState(score: .init(points: 8)), at: 1_000)
    let nextBytes = try b.store.readBytes(at: b.store.path(of: "autosave", generation: next))
    let loserBytes = try #require(loser["bytes"] as? Int)
    #expect(loserBytes > 0)
    server.stop()
    server = try ServerProcess(
      database, ["--keep-revisions", "3", "--max-player-bytes", "\(used + nextBytes.count - 1)"])
    raw = Client(base: server.base, token: player.token)
    let refused = try await raw.put("autosave", nextBytes, ifMatch: 8)
    #expect(refused.status == 413, "\(refused.text)")

    // A loser that is no revision of the slot is refused, and nothing is stored.
    let unknown = try await raw.send(
      .PUT, "/v1/slots/autosave", headers: [("If-Match", "\"8\""), ("X-Stasis-Conflict-Loser", "\"1\"")],
      body: nextBytes)
    #expect(unknown.status == 400, "\(unknown.text)")
    #expect((unknown.json["error"] as? String)?.contains("X-Stasis-Conflict-Loser") == true)
    // Another player's slot does not exist for them: nothing of it is discarded.
    let other = Client(base: server.base, token: try database.addPlayer().token)
    #expect(try await other.send(.DELETE, "/v1/slots/autosave/revisions/2").status == 404)
    // The head is never discarded (the slot is, with DELETE /v1/slots/{slot}).
    #expect(try await raw.send(.DELETE, "/v1/slots/autosave/revisions/8").status == 409)
    #expect(try await revisions(raw).map { $0["revision"] as? Int } == [8, 7, 6, 2], "still there")

    // `stasis cloud discard --revision`, through the API's DELETE route.
    let root = temporaryURL("stasis-kept")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let tokenFile = root.appendingPathComponent("player.token").path
    try Data(player.token.utf8).write(to: URL(fileURLWithPath: tokenFile))
    let login = root.appendingPathComponent("cloud.json").path
    let loggedIn = try run(
      product("stasis"),
      ["cloud", "login", "--server", server.base, "--token-file", tokenFile, "--device", "B", "--login", login])
    #expect(loggedIn.status == 0, "\(loggedIn.err)")
    let log = try run(product("stasis"), ["cloud", "log", "autosave", "--login", login, "--saves", root.path])
    #expect(
      log.out.split(separator: "\n").first { $0.hasPrefix("r2 ") }?.contains("kept: lost a conflict to r3") == true,
      "\(log.out)")
    let discarded = try run(
      product("stasis"), ["cloud", "discard", "autosave", "--revision", "2", "--login", login, "--saves", root.path])
    #expect(discarded.status == 0, "\(discarded.err)")
    #expect(try await raw.send(.GET, "/v1/slots/autosave/revisions/2").status == 404)
    #expect(try await raw.send(.DELETE, "/v1/slots/autosave/revisions/2").status == 404, "gone already")
    let again = try run(
      product("stasis"), ["cloud", "discard", "autosave", "--revision", "2", "--login", login, "--saves", root.path])
    #expect(again.status == 1)

    let accepted = try await raw.put("autosave", nextBytes, ifMatch: 8)
    #expect(accepted.status == 201, "the loser's bytes are free again: \(accepted.text)")
    list = try await revisions(raw)
    #expect(list.map { $0["revision"] as? Int } == [9, 8, 7])
    #expect(list.allSatisfy { $0["kept"] as? Bool == false })
  }

  /// B wins a conflict over A's r2 by `recent`, through a proxy that breaks the resolution's
  /// upload by `rule`; then the proxy passes again. `--keep-revisions 1`: only a kept r2 survives.
  private func brokenResolution(_ rule: FaultProxy.Rule) async throws -> (
    server: ServerProcess, raw: Client, b: Device, first: SyncReport
  ) {
    let database = try Database(.sqlite)
    let player = try database.addPlayer()
    let server = try ServerProcess(database, ["--keep-revisions", "1"])
    let proxy = try FaultProxy(upstream: server.port)
    let a = Device(server: server.base, token: player.token, name: "A")
    let b = Device(server: proxy.url, token: player.token, name: "B", policy: .mostRecent)
    try a.save(PlayerState(), at: 100)
    #expect(await a.sync.synchronize().error == nil)
    #expect(await b.sync.synchronize().restore == 1)
    try a.save(PlayerState(score: .init(points: 1)), at: 200)
    #expect(await a.sync.synchronize().error == nil)  // r2
    try b.save(PlayerState(score: .init(points: 2)), at: 300)  // newer: ours wins
    proxy.setRule(rule)
    let first = await b.sync.synchronize()
    proxy.setRule(.pass)
    #expect(b.sync.status.conflicts.map(\.outcome) == [.side(.ours)])
    return (server, Client(base: server.base, token: player.token), b, first)
  }

  @Test("a resolution whose upload failed still names the revision it beat when it goes up later")
  func waitingResolutionNamesItsLoser() async throws {
    let (server, raw, b, first) = try await brokenResolution(.cutUploadMidway(fraction: 0.5) {})
    defer { server.stop() }
    #expect(first.error?.kind == .offline, "\(String(describing: first.error))")
    #expect(try await revisions(raw).map { $0["revision"] as? Int } == [2], "nothing went up (r1 pruned)")
    b.sync.retryNow()
    await b.sync.settle()
    let list = try await revisions(raw)
    #expect(list.map { $0["revision"] as? Int } == [3, 2], "r1 pruned; r2 kept")
    #expect(list.last?["lostTo"] as? Int == 3)
    #expect(list.first?["baseRevision"] as? Int == 2)
  }

  @Test("a resolution whose 201 is lost, then another save: recognised as its own; the loser stays kept")
  func lostResolutionAnswer() async throws {
    let (server, raw, b, first) = try await brokenResolution(.cutUploadAnswer {})
    defer { server.stop() }
    #expect(first.error?.kind == .offline, "\(String(describing: first.error))")
    let committed = try await revisions(raw)
    #expect(committed.map { $0["revision"] as? Int } == [3, 2], "committed, the answer lost")
    #expect(committed.last?["lostTo"] as? Int == 3)
    let newest = try b.save(PlayerState(score: .init(points: 4)), at: 400)
    let report = await b.sync.synchronize()
    #expect(report.error == nil, "\(String(describing: report.error))")
    #expect(report.restore == nil)
    #expect(b.sync.status.conflicts.count == 1, "the one with A, none with itself")
    let list = try await revisions(raw)
    #expect(list.map { $0["revision"] as? Int } == [4, 2], "r3 pruned past --keep-revisions 1; r2 kept")
    #expect(list.first?["baseRevision"] as? Int == 3, "on its own resolution")
    #expect(list.first?["sha256"] as? String == (try fileSHA(b, newest)))
    #expect(list.last?["kept"] as? Bool == true)
  }
}
