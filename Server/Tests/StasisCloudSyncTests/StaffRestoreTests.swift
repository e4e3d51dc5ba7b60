import Foundation
import Stasis
import StasisCloud
import Testing

@testable import ServerTestSupport

@Suite("A support restore reaches the player's devices", .serialized)
struct StaffRestoreTests {
  @Test(
    "support restores r1 over r2: a device that was on r2 fast-forwards to it on its next return, and r2 stays kept",
    arguments: Backend.allCases)
  func deviceFastForwardsToRestore(backend: Backend) async throws {
    let database = try Database(backend)
    let player = try database.addPlayer()
    let staff = "support-\(UUID().uuidString.prefix(6))"
    let added = try run(
      serverBinary, ["staff", "add", staff, "--role", "support"] + database.arguments, input: "a long password\n")
    #expect(added.status == 0, "\(added.err)")
    let key = try run(serverBinary, ["staff", "key", staff] + database.arguments).out
      .trimmingCharacters(in: .whitespacesAndNewlines)
    let server = try ServerProcess(database)
    defer { server.stop() }
    let phone = Device(server: server.base, token: player.token, name: "phone")
    try phone.save(PlayerState(score: .init(points: 10, highScore: 10)), at: 100)
    #expect(await phone.sync.synchronize().error == nil)  // r1
    try phone.save(PlayerState(score: .init(points: 0, highScore: 10), inventory: [:]), at: 200)
    #expect(await phone.sync.synchronize().error == nil)  // r2: the progress the player says they lost

    // Support finds the player and restores r1, through `stasis-server admin` as a studio's tools would.
    let environment = ["STASIS_ADMIN_KEY": key]
    let found = try run(
      serverBinary, ["admin", "players", player.name, "--server", server.base], environment: environment)
    #expect(found.status == 0, "\(found.err)")
    let players = (try JSONSerialization.jsonObject(with: Data(found.out.utf8)) as? [String: Any])?["players"]
    let id = try #require((players as? [[String: Any]])?.first?["id"] as? Int)
    let restored = try run(
      serverBinary,
      ["admin", "restore", "\(id)", "autosave", "1", "--head", "2", "--reason", "ticket 7", "--server", server.base],
      environment: environment)
    #expect(restored.status == 0, "\(restored.err)")
    #expect(restored.out.contains("\"revision\":3"), "\(restored.out)")

    // The phone returns: it fast-forwards to r3, whose state is r1's.
    let report = await phone.sync.synchronize()
    #expect(report.error == nil)
    #expect(report.restore != nil, "a fast-forward to the restored head")
    #expect(try phone.newest() == PlayerState(score: .init(points: 10, highScore: 10)))
    let client = Client(base: server.base, token: player.token)
    let head = try await client.send(.GET, "/v1/slots/autosave")
    #expect(head.header("X-Stasis-Revision") == "3")
    #expect(sha256(head.body) == (try fileSHA(phone, phone.generations[0])), "the phone holds r3's bytes")
    let list = try await client.send(.GET, "/v1/slots/autosave/revisions").json["revisions"] as? [[String: Any]]
    #expect(list?.first { $0["revision"] as? Int == 2 }?["lostTo"] as? Int == 3, "r2 is kept, lost to the restore")
    // And the phone plays on from there: its next save goes up on r3.
    try phone.save(PlayerState(score: .init(points: 11, highScore: 11)), at: 300)
    #expect(await phone.sync.synchronize().error == nil)
    #expect(try await client.send(.GET, "/v1/slots/autosave").header("X-Stasis-Revision") == "4")
    let undo = try run(
      serverBinary, ["admin", "audit", "--staff", staff, "--server", server.base], environment: environment)
    #expect(undo.out.contains("\"action\":\"restore\""))
  }
}
