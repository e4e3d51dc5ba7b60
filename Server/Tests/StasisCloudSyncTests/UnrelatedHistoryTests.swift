import Foundation
import GRDB
@_spi(Simulation) import Stasis
@_spi(Simulation) import StasisCloud
import Testing

@testable import ServerTestSupport

/// Issue 27, case 4: a merge across unrelated histories. The server records each revision's
/// true parent, and a client merges three ways only against a revision both sides continue.
@Suite("A three-way merge only against a base both sides continue", .serialized)
struct UnrelatedHistoryTests {
  /// The slot's revisions, newest first: number → parent (nil: none).
  private func parents(_ client: Client, _ slot: String = "autosave") async throws -> [Int: Int?] {
    let list = try await client.send(.GET, "/v1/slots/\(slot)/revisions").json["revisions"] as? [[String: Any]] ?? []
    var parents: [Int: Int?] = [:]
    for revision in list {
      guard let number = revision["revision"] as? Int else { continue }
      parents[number] = revision["parent"] as? Int
    }
    return parents
  }

  @Test(
    "X-Stasis-Parent is stored as the revision's parent (the base without it), refused when it cannot be, and handed down when a revision is discarded or pruned",
    arguments: Backend.allCases)
  func parentsOnTheServer(backend: Backend) async throws {
    let database = try Database(backend)
    let player = try database.addPlayer()
    let server = try ServerProcess(database, ["--keep-revisions", "3"])
    defer { server.stop() }
    let client = Client(base: server.base, token: player.token)
    let file = SaveFileFormat.encode(try playerCodec.document(for: PlayerState(), summary: SaveSummary(), createdAt: 1))
    func put(_ base: Int64?, parent: String?, loser: Int? = nil, slot: String = "autosave") async throws -> Reply {
      var headers = [base.map { ("If-Match", "\"\($0)\"") } ?? ("If-None-Match", "*")]
      if let parent { headers.append(("X-Stasis-Parent", parent)) }
      if let loser { headers.append(("X-Stasis-Conflict-Loser", "\"\(loser)\"")) }
      return try await client.send(.PUT, "/v1/slots/\(slot)", headers: headers, body: file)
    }
    let created = try await put(nil, parent: nil)
    #expect(created.status == 201)
    #expect(created.json.keys.contains("parent") && created.json["parent"] is NSNull, "\(created.text)")
    #expect(try await put(1, parent: nil).json["parent"] as? Int == 1, "without the header, the base")
    #expect(try await put(2, parent: "none").json["parent"] is NSNull, "a history of its own")
    #expect(try await parents(client) == [3: nil, 2: 1, 1: nil])

    for (base, parent, says) in [
      (Int64(3), "\"4\"", "newer than the head"), (3, "\"0\"", "one revision in quotes"),
      (3, "3", "one revision in quotes"), (3, "\"x\"", "one revision in quotes"),
    ] {
      let refused = try await put(base, parent: parent)
      #expect(refused.status == 400, "\(parent): \(refused.text)")
      #expect((refused.json["error"] as? String)?.contains(says) == true, "\(refused.text)")
    }
    let onCreation = try await put(nil, parent: "\"1\"", slot: "other")
    #expect(onCreation.status == 400, "\(onCreation.text)")
    #expect(try await client.send(.GET, "/v1/slots/other").status == 404, "nothing stored")
    #expect(try await parents(client) == [3: nil, 2: 1, 1: nil], "nothing refused was stored")

    // A merge over r3 continues it, and r3 is kept (it lost the conflict).
    #expect(try await put(3, parent: nil, loser: 3).json["parent"] as? Int == 3)
    // Pruning (--keep-revisions 3) hands each pruned revision's parent down: r4 goes, and r5,
    // which continued it, now continues r3, which the slot keeps.
    #expect(try await put(4, parent: nil).status == 201)
    #expect(try await put(5, parent: nil).status == 201)
    #expect(try await put(6, parent: nil).status == 201)
    let pruned = try await parents(client)
    #expect(pruned == [7: 6, 6: 5, 5: 3, 3: nil], "\(pruned)")
    #expect(try await put(7, parent: nil).status == 201)
    #expect(try await parents(client) == [8: 7, 7: 6, 6: 3, 3: nil])

    // A discard hands it down too: r3 of slot "city" continues r1 once r2 is discarded.
    #expect(try await put(nil, parent: nil, slot: "city").status == 201)
    #expect(try await put(1, parent: nil, slot: "city").status == 201)
    #expect(try await put(2, parent: nil, slot: "city").status == 201)
    #expect(try await client.send(.DELETE, "/v1/slots/city/revisions/2").status == 204)
    #expect(try await parents(client, "city") == [3: 1, 1: nil])
    // The head's metadata carries it too.
    let listing = try await client.send(.GET, "/v1/slots").json["slots"] as? [[String: Any]] ?? []
    #expect(listing.first { $0["slot"] as? String == "autosave" }?["parent"] as? Int == 7)
  }

  @Test("a database from before parents were recorded: each revision continues its base once migrated")
  func migration() async throws {
    let database = try Database(.sqlite)
    let player = try database.addPlayer()
    var server = try ServerProcess(database)
    let client = Client(base: server.base, token: player.token)
    let file = SaveFileFormat.encode(try playerCodec.document(for: PlayerState(), summary: SaveSummary(), createdAt: 1))
    #expect(try await client.put("autosave", file, create: true).status == 201)
    #expect(try await client.put("autosave", file, ifMatch: 1).status == 201)
    server.stop()
    // The database as the last server before it left it: no parent column, migration v3 not run.
    let queue = try DatabaseQueue(path: database.arguments[1])
    try await queue.write { db in
      try db.execute(sql: "ALTER TABLE revisions DROP COLUMN parent")
      try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v3%'")
    }
    try await queue.close()
    server = try ServerProcess(database)
    defer { server.stop() }
    #expect(try await parents(Client(base: server.base, token: player.token)) == [2: 1, 1: nil])
  }

  private func state(of bytes: [UInt8]) throws -> PlayerState {
    try playerCodec.state(from: try SaveFileFormat.decode(bytes))
  }

  /// The roguelike's city builder: B starts the slot online (r1) with 27 ledger entries while A
  /// plays its own city offline. A's next sync wins by policy and uploads over r1; then B, which
  /// played on from r1, syncs with a declared merge (the ledger as a union).
  private func independentStarts(configure: (inout CloudSyncConfiguration) -> Void = { _ in }) async throws -> (
    b: Device, report: SyncReport, raw: Client, server: ServerProcess
  ) {
    let database = try Database(.sqlite)
    let player = try database.addPlayer()
    let server = try ServerProcess(database)
    let a = Device(server: server.base, token: player.token, name: "A")
    let b = Device(
      server: server.base, token: player.token, name: "B",
      policy: .merge(rules: ["inventory": .union], fallback: .mostRecent), configure: configure)
    var city = PlayerState()
    city.inventory = Dictionary(uniqueKeysWithValues: (1...27).map { ("transaction-\($0)", $0) })
    try b.save(city, at: 100)
    #expect(await b.sync.synchronize().error == nil)  // r1, B's city
    try a.save(PlayerState(score: .init(points: 500), inventory: ["a-city": 1]), at: 200)
    let first = await a.sync.synchronize()
    #expect(first.error == nil && first.state == .synced)
    let aConflict = try #require(a.sync.status.conflicts.first)
    #expect(aConflict.outcome == .side(.ours), "A's city is newer: it goes up whole, r1 kept")
    #expect(aConflict.base == nil, "the two never agreed on a base")
    #expect(aConflict.history == .neverAgreed)
    city.inventory["transaction-28"] = 28
    try b.save(city, at: 300)
    let raw = Client(base: server.base, token: player.token)
    let report = await b.sync.synchronize()
    return (b, report, raw, server)
  }

  @Test("devices that start a slot independently: the head is A's history, not r1's; B keeps all 28 transactions")
  func independentStartsNeverMerge() async throws {
    let (b, report, raw, server) = try await independentStarts()
    defer { server.stop() }
    #expect(try await parents(raw) == [3: 1, 2: nil, 1: nil], "A's city continues nothing; B's continues its r1")
    #expect(report.error == nil)
    let conflict = try #require(b.sync.status.conflicts.first)
    #expect(conflict.base == nil, "no shared base")
    #expect(conflict.note?.contains("r2 does not continue r1") == true, "\(conflict.note ?? "")")
    #expect(conflict.note?.contains("unrelated histories") == true)
    #expect(conflict.history == .unrelated)
    #expect(conflict.outcome == .side(.ours), "the fallback's side, whole: B's save is newer")
    let head = try state(of: try await raw.send(.GET, "/v1/slots/autosave").body)
    #expect(
      head.inventory.count == 28 && head.inventory["a-city"] == nil, "B's city whole: \(head.inventory.keys.count)")
    let kept = try await raw.send(.GET, "/v1/slots/autosave/revisions").json["revisions"] as? [[String: Any]] ?? []
    #expect(kept.first { $0["revision"] as? Int == 2 }?["lostTo"] as? Int == 3, "A's city is kept until discarded")
  }

  @Test("the rule varied (merge against the base B continues): 27 of B's transactions vanish, as the adopter saw")
  func mergeAcrossUnrelatedHistoriesVaried() async throws {
    #if SimulationSeams
      let (b, report, raw, server) = try await independentStarts { $0.seams.mergesAcrossUnrelatedHistories = true }
      defer { server.stop() }
      #expect(report.error == nil)
      #expect(b.sync.status.conflicts.first?.outcome == .merged)
      let head = try state(of: try await raw.send(.GET, "/v1/slots/autosave").body)
      #expect(head.inventory.keys.sorted() == ["a-city", "transaction-28"], "what the three-way merge against r1 made")
    #else
      Issue.record(
        "built without the SimulationSeams trait: the server's tests run with --traits SimulationSeams (scripts/test.sh)"
      )
    #endif
  }

  @Test("a new game over a synced slot begins a history of its own: the other device does not merge it into its save")
  func newGameIsANewHistory() async throws {
    let database = try Database(.sqlite)
    let player = try database.addPlayer()
    let server = try ServerProcess(database)
    defer { server.stop() }
    let union: ConflictPolicy = .merge(rules: ["inventory": .union], fallback: .mostRecent)
    let a = Device(server: server.base, token: player.token, name: "A", policy: union)
    let b = Device(server: server.base, token: player.token, name: "B", policy: union)
    try a.save(PlayerState(inventory: ["sword": 1, "shield": 1]), at: 100)
    #expect(await a.sync.synchronize().error == nil)  // r1
    #expect(await b.sync.synchronize().restore != nil)  // B has r1
    // A starts a new game: its saves are no continuation of r1.
    await MainActor.run { a.sync.beganNewHistory(application: Application()) }
    try a.save(PlayerState(inventory: ["stick": 1]), at: 200)
    #expect(await a.sync.synchronize().error == nil)  // r2, a history of its own
    let raw = Client(base: server.base, token: player.token)
    #expect(try await parents(raw) == [2: nil, 1: nil])
    try b.save(PlayerState(inventory: ["sword": 1, "shield": 1, "bow": 1]), at: 300)
    #expect(await b.sync.synchronize().error == nil)
    let conflict = try #require(b.sync.status.conflicts.first)
    #expect(conflict.note?.contains("unrelated histories") == true, "\(conflict.note ?? "")")
    #expect(conflict.history == .unrelated, "r2 does not continue r1, which B's save continues")
    #expect(try b.newest().inventory == ["sword": 1, "shield": 1, "bow": 1], "B's save whole, not a mix")
    // A's next save, on top of B's result, continues it again.
    #expect(await a.sync.synchronize().error == nil)
    try a.save(PlayerState(inventory: ["sword": 1, "shield": 1, "bow": 1, "arrow": 1]), at: 400)
    #expect(await a.sync.synchronize().error == nil)
    #expect(try await parents(raw)[4] == 3, "back on one history")
  }
}
