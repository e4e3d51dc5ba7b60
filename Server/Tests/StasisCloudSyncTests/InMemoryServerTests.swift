import Foundation
import Stasis
import StasisCloud
import StasisReplay
import StasisServerTesting
import Testing

@testable import ServerTestSupport

/// Cloud sync against `InMemoryCloudServer`: the real router and upload rule in this process,
/// with no socket and no `stasis-server` process. What a studio's own tests of its sync use;
/// the tests that need a socket (a killed server, a cut line) start `stasis-server`.
@Suite("In-memory cloud server: the real server in the test's process")
struct InMemoryServerTests {
  @Test("two devices: one uploads, the other fast-forwards, then a conflict merges by rule and both converge")
  func twoDevices() async throws {
    let server = try InMemoryCloudServer(keepRevisions: 5)
    let credentials = try await server.addPlayer("ada")
    let rules = MergeRules(["score.highScore": .max, "inventory": .union])
    func device(_ name: String) -> Device {
      Device(
        server: credentials.url, token: credentials.token, name: name,
        policy: .merge(rules: rules, fallback: .mostRecent), transport: server)
    }
    let (a, b) = (device("A"), device("B"))
    var state = PlayerState()
    state.score.highScore = 10
    try a.save(state, at: 100)
    #expect(await a.sync.synchronize().error == nil)
    #expect(a.sync.status.uploaded == [1])
    #expect(await b.sync.synchronize().error == nil)
    #expect(try b.newest() == state, "B fast-forwarded to A's revision")

    var ours = state
    ours.score.highScore = 30
    ours.inventory["sword"] = 1
    try a.save(ours, at: 200)
    var theirs = state
    theirs.score.highScore = 20
    theirs.inventory["shield"] = 1
    try b.save(theirs, at: 300)
    #expect(await b.sync.synchronize().error == nil)  // r2, B's
    let merged = await a.sync.synchronize()  // A meets r2: a three-way merge against r1
    #expect(merged.error == nil)
    let conflict = try #require(a.sync.status.conflicts.first)
    #expect(conflict.outcome == .merged && conflict.history == .shared && conflict.base == 1)
    #expect(try a.newest().score.highScore == 30, "max")
    #expect(try a.newest().inventory == ["potion": 1, "sword": 1, "shield": 1], "union")
    #expect(await b.sync.synchronize().error == nil)
    #expect(try b.newest() == (try a.newest()), "both hold the merge, r3")
    #expect(server.requestsServed > 0)
  }

  @Test("a stale upload is refused by the real rule (412), and a wrong token is 401, as over HTTP")
  func answersAsTheServer() async throws {
    let server = try InMemoryCloudServer()
    let credentials = try await server.addPlayer("bo", device: "test")
    let client = CloudClient(credentials: credentials, transport: server)
    let bytes = SaveFileFormat.encode(
      try playerCodec.document(for: PlayerState(), summary: SaveSummary(), createdAt: 1))
    let first = try await client.upload(slot: "autosave", bytes: bytes, base: nil)
    #expect(first.revision == 1)
    // The same bytes again are a retry, answered with revision 1; other bytes are stale.
    #expect(try await client.upload(slot: "autosave", bytes: bytes, base: nil).revision == 1)
    var other = PlayerState()
    other.score.points = 1
    let otherBytes = SaveFileFormat.encode(
      try playerCodec.document(for: other, summary: SaveSummary(), createdAt: 1))
    let stale = await #expect(throws: CloudError.self) {
      _ = try await client.upload(slot: "autosave", bytes: otherBytes, base: nil)
    }
    #expect(stale?.kind == .conflict)
    let stranger = CloudClient(
      credentials: CloudCredentials(url: InMemoryCloudServer.url, token: "not-a-token"), transport: server)
    let refused = await #expect(throws: CloudError.self) {
      _ = try await stranger.head(slot: "autosave", ifNoneMatch: nil)
    }
    #expect(refused?.kind == .unauthorized)
  }

  @Test("a device sends a desync bundle: stored once, a retry answers the same; a save is refused")
  func sendsADesyncBundle() async throws {
    let server = try InMemoryCloudServer()
    let client = CloudClient(credentials: try await server.addPlayer("cy", device: "test"), transport: server)
    let (bytes, bundle) = try DemoBundles.make(desyncAt: 90)
    let sent = try await client.sendDesyncBundle(bytes)
    #expect(sent.isNew && sent.tick == 90 && sent.bytes == bytes.count && sent.summary == bundle.report.summary)
    let again = try await client.sendDesyncBundle(bytes)
    #expect(!again.isNew && again.id == sent.id, "one copy")
    let refused = await #expect(throws: CloudError.self) { _ = try await client.sendDesyncBundle(DemoSaves.small[0]) }
    #expect(refused?.kind == .refused)
  }

  @Test("a device sends its replay as it grows: kept under its name, the last one sent")
  func sendsAReplay() async throws {
    let server = try InMemoryCloudServer()
    let client = CloudClient(credentials: try await server.addPlayer("di", device: "test"), transport: server)
    let first = try await client.sendReplay(try DemoBundles.replay(ticks: 60), named: "autosave")
    #expect(first.isNew && first.ticks == 60 && first.name == "autosave")
    let grown = try await client.sendReplay(try DemoBundles.replay(ticks: 180), named: "autosave")
    #expect(!grown.isNew && grown.ticks == 180)
    let refused = await #expect(throws: CloudError.self) {
      _ = try await client.sendReplay(DemoSaves.small[0], named: "autosave")
    }
    #expect(refused?.kind == .refused)
  }
}
