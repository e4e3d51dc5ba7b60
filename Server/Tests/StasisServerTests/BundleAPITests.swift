import Foundation
import Stasis
import StasisReplay
import StasisServer
import Testing

@testable import ServerTestSupport

/// `POST /v1/bundles` and `GET /v1/bundles` (issue 45) on both backends, through the server's
/// real router in this process: a player's desync bundles, kept for the studio's console.
@Suite("stasis-server: desync bundles", .serialized)
struct BundleAPITests {
  @Test(
    "a bundle is stored once (a retry answers the same), listed for its player only, and refused when it is not one",
    arguments: Backend.allCases)
  func sendAndList(backend: Backend) async throws {
    let (bytes, bundle) = try DemoBundles.make(desyncAt: 100)
    #expect(bundle.report.tick == 100 && bundle.report.isExact, "the demo's planted drift, found at its tick")
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      let sent = try await client.send(.POST, "/v1/bundles", body: bytes)
      #expect(sent.status == 201, "\(sent.text)")
      let id = try #require(sent.json["id"] as? Int)
      #expect(sent.json["tick"] as? Int == 100)
      #expect(sent.json["summary"] as? String == "first divergence at tick 100")
      #expect(sent.json["game"] as? String == bundle.game.name)
      #expect(sent.json["bytes"] as? Int == bytes.count)
      #expect(sent.json["sha256"] as? String == sha256(bytes))

      let again = try await client.send(.POST, "/v1/bundles", body: bytes)
      #expect(again.status == 200, "the same bytes again are the bundle stored before")
      #expect(again.json["id"] as? Int == id)

      let listed = try await client.send(.GET, "/v1/bundles")
      #expect(listed.status == 200)
      let bundles = listed.json["bundles"] as? [[String: Any]] ?? []
      #expect(bundles.map { $0["id"] as? Int } == [id], "one copy")

      let other = server.client(token: try await server.addPlayer().token)
      #expect((try await other.send(.GET, "/v1/bundles").json["bundles"] as? [Any])?.isEmpty == true)
      #expect(try await server.client().send(.POST, "/v1/bundles", body: bytes).status == 401, "a token is needed")

      // Not a bundle: garbage, a save, a bundle cut short. Nothing is stored.
      let save = DemoSaves.small[0]
      for (what, body) in [
        ("garbage", Array("not a bundle".utf8)), ("a save", save), ("cut", Array(bytes.prefix(200))),
      ] {
        let refused = try await client.send(.POST, "/v1/bundles", body: body)
        #expect(refused.status == 400, "\(what): \(refused.status) \(refused.text)")
        #expect((refused.json["error"] as? String ?? "").hasPrefix("not a desync bundle"), "\(what): \(refused.text)")
      }
      #expect((try await client.send(.GET, "/v1/bundles").json["bundles"] as? [Any])?.count == 1)
    }
  }

  @Test("past --max-bundle-bytes a bundle is 413; past --keep-bundles the oldest goes", arguments: Backend.allCases)
  func limits(backend: Backend) async throws {
    let made = try [100, 120, 140].map { try DemoBundles.make(desyncAt: Int64($0)).bytes }
    let options = ServerOptions(limits: PlayerLimits(bundleBytes: made.map(\.count).max()!, bundlesKept: 2))
    try await RouterServer.test(try Database(backend), options: options) { server in
      let client = server.client(token: try await server.addPlayer().token)
      var ids: [Int] = []
      for bytes in made {
        let sent = try await client.send(.POST, "/v1/bundles", body: bytes)
        #expect(sent.status == 201, "\(sent.text)")
        ids.append(sent.json["id"] as? Int ?? 0)
      }
      let kept = (try await client.send(.GET, "/v1/bundles").json["bundles"] as? [[String: Any]] ?? [])
      #expect(kept.map { $0["id"] as? Int } == [ids[2], ids[1]], "the newest two, newest first")
      #expect(kept.map { $0["tick"] as? Int } == [140, 120])
      let large = made[0] + [UInt8](repeating: 0, count: options.limits.bundleBytes)
      let refused = try await client.send(.POST, "/v1/bundles", body: large)
      #expect(refused.status == 413, "\(refused.text)")
    }
  }

  @Test("the studio reads a player's bundle, and its download is in the audit log", arguments: Backend.allCases)
  func studioDownload(backend: Backend) async throws {
    let (bytes, _) = try DemoBundles.make(desyncAt: 100)
    try await RouterServer.test(try Database(backend)) { server in
      let name = "ada-\(UUID().uuidString.prefix(8))"  // the PostgreSQL database outlives a run
      let client = server.client(token: try await server.addPlayer(name).token)
      let id = try #require(try await client.send(.POST, "/v1/bundles", body: bytes).json["id"] as? Int)
      let studio = Studio(backend: server.backend, options: ServerOptions())
      let player = try #require(try await server.backend.findPlayers(query: name, limit: 1).first)
      let staffName = "sam-\(UUID().uuidString.prefix(8))"
      let staff = try await server.backend.addStaff(name: staffName, role: .viewer, passwordHash: "-", at: 1)
      #expect(try await studio.bundles(of: player).map(\.id) == [Int64(id)])
      let (stored, file) = try await studio.downloadBundle(staff, player: player, id: Int64(id))
      #expect(file == bytes && stored.tick == 100)
      let entries = try await studio.audit(AuditFilter(player: name, limit: 10))
      #expect(
        entries.first?.action == .downloadBundle && entries.first?.revision == Int64(id)
          && entries.first?.staff == staffName)
      await #expect(throws: StudioError.self) { _ = try await studio.bundle(of: player, id: Int64(id) + 1) }
    }
  }

  @Test(
    "a replay is kept under its name, the last one sent; listed for its player only; refused when it is not one",
    arguments: Backend.allCases)
  func replays(backend: Backend) async throws {
    let short = try DemoBundles.replay(ticks: 120)
    let long = try DemoBundles.replay(ticks: 240)
    let bundle = try DemoBundles.make(desyncAt: 100).bytes
    let limit = max(long.count, bundle.count, DemoSaves.small[0].count) + 100
    let options = ServerOptions(limits: PlayerLimits(replayBytes: limit, replaysKept: 2))
    try await RouterServer.test(try Database(backend), options: options) { server in
      let client = server.client(token: try await server.addPlayer().token)
      let first = try await client.send(.PUT, "/v1/replays/autosave", body: short)
      #expect(first.status == 201, "\(first.text)")
      #expect(first.json["name"] as? String == "autosave" && first.json["ticks"] as? Int == 120)
      #expect(first.json["sha256"] as? String == sha256(short))
      let grown = try await client.send(.PUT, "/v1/replays/autosave", body: long)
      #expect(grown.status == 200, "the same name again: replaced")
      #expect(grown.json["ticks"] as? Int == 240 && grown.json["id"] as? Int == first.json["id"] as? Int)
      #expect(try await client.send(.PUT, "/v1/replays/race-1", body: short).status == 201)
      #expect(try await client.send(.PUT, "/v1/replays/race-2", body: short).status == 201)
      let listed = try await client.send(.GET, "/v1/replays").json["replays"] as? [[String: Any]] ?? []
      #expect(listed.map { $0["name"] as? String } == ["race-2", "race-1"], "the two sent last, newest first")

      let other = server.client(token: try await server.addPlayer().token)
      #expect((try await other.send(.GET, "/v1/replays").json["replays"] as? [Any])?.isEmpty == true)
      for (what, body) in [("a bundle", bundle), ("a save", DemoSaves.small[0]), ("cut", Array(long.prefix(300)))] {
        let refused = try await client.send(.PUT, "/v1/replays/autosave", body: body)
        #expect(refused.status == 400, "\(what): \(refused.status) \(refused.text)")
        #expect((refused.json["error"] as? String ?? "").hasPrefix("not a replay"), "\(what): \(refused.text)")
      }
      #expect(try await client.send(.PUT, "/v1/replays/a%2Fb", body: short).status == 400, "a name is a slot's")
      let large = long + [UInt8](repeating: 0, count: limit)
      #expect(try await client.send(.PUT, "/v1/replays/big", body: large).status == 413)
      #expect(try await server.client().send(.GET, "/v1/replays").status == 401, "a token is needed")

      // The studio's download, audited.
      let studio = Studio(backend: server.backend, options: options)
      let playerName = "p-\(UUID().uuidString.prefix(8))"
      let owner = server.client(token: try await server.addPlayer(playerName).token)
      let id = try #require(try await owner.send(.PUT, "/v1/replays/autosave", body: long).json["id"] as? Int)
      let player = try #require(try await server.backend.findPlayers(query: playerName, limit: 1).first)
      let staffName = "sam-\(UUID().uuidString.prefix(8))"
      let staff = try await server.backend.addStaff(name: staffName, role: .viewer, passwordHash: "-", at: 1)
      let (stored, file) = try await studio.downloadReplay(staff, player: player, id: Int64(id))
      #expect(file == long && stored.ticks == 240)
      let entries = try await studio.audit(AuditFilter(player: playerName, limit: 10))
      #expect(entries.first?.action == .downloadReplay && entries.first?.revision == Int64(id))
    }
  }
}
