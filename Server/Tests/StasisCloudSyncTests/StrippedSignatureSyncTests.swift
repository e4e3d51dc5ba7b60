import Foundation
import Stasis
import StasisCloud
import Testing

@testable import ServerTestSupport

/// Issue 27, case 8, on the sync's side: what the game refuses to load never goes up.
@Suite("An unsigned file in a signed slot is never uploaded")
struct StrippedSignatureSyncTests {
  @Test("a tool edits the newest save and strips its signature: push sends nothing, the server keeps r1")
  func strippedNeverUploaded() async throws {
    let database = try Database(.sqlite)
    let player = try database.addPlayer()
    let server = try ServerProcess(database)
    defer { server.stop() }
    let key = SigningKey(bytes: Array("the key, thirty-two bytes long!!".utf8))
    let device = Device(
      server: server.base, token: player.token, name: "A", signing: .signed(with: key, acceptingUnsigned: true))
    try device.save(PlayerState(), at: 100)
    #expect(await device.sync.synchronize().error == nil)  // r1
    let newest = try device.save(PlayerState(score: .init(points: 7)), at: 200)
    // The tool: the same state with more points, written back without a signature.
    var edited = PlayerState(score: .init(points: 7))
    edited.score.points = 1_000_000
    let unsigned = SaveFileFormat.encode(try playerCodec.document(for: edited, summary: SaveSummary(), createdAt: 200))
    try Data(unsigned).write(to: URL(fileURLWithPath: device.store.path(of: "autosave", generation: newest)))
    #expect(throws: SaveFileError.self) { try device.store.load(codec: playerCodec, slot: "autosave") }

    let pushed = await device.sync.push()
    #expect(pushed.error == nil, "\(String(describing: pushed.error))")
    let list =
      try await Client(base: server.base, token: player.token).send(.GET, "/v1/slots/autosave/revisions")
      .json["revisions"] as? [[String: Any]] ?? []
    #expect(list.map { $0["revision"] as? Int } == [1], "the edited save did not go up")
  }
}
