import Foundation
import NIOHTTP1
import Stasis
import StasisServer
import Testing

@testable import ServerTestSupport

/// `PUT /v1/settings` and `GET /v1/settings` (15.6) on both backends: the player's settings,
/// merged key by key (the last writer wins by stamp), through the server's real router in this
/// process; two `stasis-server` processes on one PostgreSQL over sockets.
@Suite("stasis-server: settings carried between devices", .serialized)
struct SettingsAPITests {
  /// A settings file of `entries`: (key, value, milliseconds, device).
  static func file(_ entries: [(String, SaveValue, Int64, String)]) -> SettingsFile {
    SettingsFile(
      entries: entries.map { .init(key: $0.0, value: $0.1, stamp: SettingsStamp(milliseconds: $0.2, device: $0.3)) })
  }

  static func settings(_ reply: Reply) throws -> SettingsFile {
    try SettingsFile(bytes: reply.body)
  }

  @Test(
    "a player with none has an empty file; each PUT answers the merge; GET answers the same; players are apart",
    arguments: Backend.allCases)
  func roundTrip(backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      let empty = try await client.send(.GET, "/v1/settings")
      #expect(empty.status == 200, "no settings yet is an empty file, never a 404")
      #expect(empty.header("Content-Type") == "application/vnd.stasis")
      #expect(try Self.settings(empty) == SettingsFile())

      let phone = Self.file([("volume", .float64(0.5), 1000, "phone"), ("palette", .string("standard"), 1000, "phone")])
      let first = try await client.send(.PUT, "/v1/settings", body: phone.encoded())
      #expect(first.status == 200)
      #expect(first.header("Content-Type") == "application/vnd.stasis")
      #expect(try Self.settings(first) == phone)

      let deck = Self.file([("volume", .float64(0.9), 2000, "deck"), ("bindings", .string("wasd"), 1500, "deck")])
      let second = try await client.send(.PUT, "/v1/settings", body: deck.encoded())
      #expect(second.status == 200)
      var expected = phone
      expected.merge(deck)
      let merged = try Self.settings(second)
      #expect(merged == expected, "the deck's newer volume, the phone's palette, the deck's new key")
      #expect(merged["volume"]?.value == .float64(0.9))
      #expect(merged["palette"]?.stamp.device == "phone")
      #expect(try Self.settings(try await client.send(.GET, "/v1/settings")) == expected)

      let other = server.client(token: try await server.addPlayer().token)
      #expect(try Self.settings(try await other.send(.GET, "/v1/settings")) == SettingsFile(), "another player's")
      #expect(try await server.client().send(.GET, "/v1/settings").status == 401, "a token is needed")
    }
  }

  @Test(
    "a stale stamp never overwrites a newer one; an equal stamp keeps what is stored", arguments: Backend.allCases)
  func staleStamp(backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      let newer = Self.file([("volume", .float64(0.9), 5000, "phone")])
      #expect(try await client.send(.PUT, "/v1/settings", body: newer.encoded()).status == 200)

      let older = Self.file([("volume", .float64(0.1), 4000, "deck")])
      let answer = try await client.send(.PUT, "/v1/settings", body: older.encoded())
      #expect(answer.status == 200)
      #expect(try Self.settings(answer) == newer, "the answer carries the newer value back to the stale device")

      // Same milliseconds: the counter, then the device name, decide, as SettingsStamp orders them.
      let sameMillisecond = SettingsFile(entries: [
        .init(key: "volume", value: .float64(0.2), stamp: SettingsStamp(milliseconds: 5000, counter: 0, device: "a"))
      ])
      #expect(try Self.settings(try await client.send(.PUT, "/v1/settings", body: sameMillisecond.encoded())) == newer)
      let equal = Self.file([("volume", .float64(0.3), 5000, "phone")])
      #expect(try Self.settings(try await client.send(.PUT, "/v1/settings", body: equal.encoded())) == newer)
      let counted = SettingsFile(entries: [
        .init(key: "volume", value: .float64(0.4), stamp: SettingsStamp(milliseconds: 5000, counter: 1, device: "a"))
      ])
      #expect(try Self.settings(try await client.send(.PUT, "/v1/settings", body: counted.encoded())) == counted)
      #expect(try Self.settings(try await client.send(.GET, "/v1/settings")) == counted)
    }
  }

  @Test(
    "two devices' PUTs at once, 16 rounds each over shared and own keys: the server ends at the merge of all",
    arguments: Backend.allCases)
  func concurrentDevices(backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      let sent = try await Self.race([client, client])
      try await Self.expectConverged(sent, [client, client])
    }
  }

  // Live: two server processes over one PostgreSQL, each device on its own.
  @Test("two server processes on one PostgreSQL: concurrent merges through both lose no key")
  func twoServers() async throws {
    try await withTwoServers { clients in
      let sent = try await Self.race(clients)
      try await Self.expectConverged(sent, clients)
      let metrics = try await clients[0].send(.GET, "/metrics")
      #expect(metrics.text.contains("stasis_settings_merges_total"))
    }
  }

  /// Two devices, each sending 16 files at once with the other: a key of its own, a key both
  /// change (their stamps interleave), and the round's own key. Returns every file sent.
  static func race(_ clients: [Client]) async throws -> [SettingsFile] {
    try await withThrowingTaskGroup(of: (SettingsFile, Int).self) { group in
      for (index, device) in ["phone", "deck"].enumerated() {
        let client = clients[index]
        for round in 0..<16 {
          let file = Self.file([
            ("\(device)-only", .int64(Int64(round)), Int64(1000 + round), device),
            ("shared", .string("\(device) \(round)"), Int64(1000 + round * 2 + index), device),
            ("round-\(round)", .string(device), Int64(2000 - index), device),
          ])
          group.addTask { (file, try await client.send(.PUT, "/v1/settings", body: file.encoded()).status) }
        }
      }
      var sent: [SettingsFile] = []
      for try await (file, status) in group {
        #expect(status == 200)
        sent.append(file)
      }
      return sent
    }
  }

  /// The server holds the merge of every file sent, and each device that merges one answer agrees.
  static func expectConverged(_ sent: [SettingsFile], _ clients: [Client]) async throws {
    var expected = SettingsFile()
    for file in sent { expected.merge(file) }
    #expect(expected.entries.count == 2 + 1 + 16)
    let stored = try Self.settings(try await clients[0].send(.GET, "/v1/settings"))
    #expect(stored == expected, "every key at its latest stamp")
    #expect(stored["shared"]?.value == .string("deck 15"))
    for client in clients {
      var device = sent[0]
      device.merge(try Self.settings(try await client.send(.PUT, "/v1/settings", body: device.encoded())))
      #expect(device == expected, "one round trip and the device agrees with the server")
    }
  }

  @Test(
    "garbage, another game's save, a damaged file, too large, a hostile key: a JSON error, and nothing changes",
    arguments: Backend.allCases)
  func hostileBodies(backend: Backend) async throws {
    let options = ServerOptions(limits: PlayerLimits(settingsBytes: 4096))
    try await RouterServer.test(try Database(backend), options: options) { server in
      let client = server.client(token: try await server.addPlayer().token)
      let good = Self.file([("volume", .float64(0.5), 1000, "phone")])
      #expect(try await client.send(.PUT, "/v1/settings", body: good.encoded()).status == 200)

      func refused(_ bytes: [UInt8], _ status: Int, _ says: String, _ what: String) async throws {
        let reply = try await client.send(.PUT, "/v1/settings", body: bytes)
        #expect(reply.status == status, "\(what): \(reply.text)")
        #expect(reply.header("Content-Type") == "application/json", "\(what)")
        #expect((reply.json["error"] as? String)?.contains(says) == true, "\(what): \(reply.text)")
      }
      try await refused(Array("{\"volume\": 1}".utf8), 400, "not a settings file", "JSON")
      try await refused([], 400, "not a settings file", "an empty body")
      try await refused(DemoSaves.small[0], 400, "not Stasis's settings", "a slot's save")
      let bytes = Self.file([("volume", .float64(0.1), 9000, "evil")]).encoded()
      try await refused(Array(bytes.prefix(bytes.count - 3)), 400, "not a settings file", "truncated")
      var flipped = bytes
      flipped[bytes.count / 2] ^= 0x10
      try await refused(flipped, 400, "not a settings file", "a flipped bit")
      try await refused(
        Self.file([(String(repeating: "k", count: 256), .int64(1), 9000, "evil")]).encoded(), 400, "key",
        "a key of 256 bytes")
      try await refused(
        Self.file([("volume", .int64(1), 9000, String(repeating: "d", count: 256))]).encoded(), 400, "device",
        "a device name of 256 bytes")
      try await refused([UInt8](repeating: 0x53, count: 5000), 413, "limit", "over the limit, by Content-Length")
      // Under the body limit, but more than the player's settings may take once stored.
      let many = Self.file((0..<30).map { ("key-\($0)", .int64(Int64($0)), 9000, "evil") })
      #expect(many.encoded().count < 4096)
      try await refused(many.encoded(), 413, "limit", "over the stored limit")

      #expect(try Self.settings(try await client.send(.GET, "/v1/settings")) == good, "nothing changed")
    }
  }
}
