import Foundation
import Stasis
@_spi(Plumbing) import StasisCloud
import Testing

private struct Counter: Codable, Sendable {
  var value = 1
}

/// Issue 27, case 10: a device that talked to another server came back and conflicted with its
/// own upload, because the one record was replaced when the server's URL changed.
@Suite("A slot keeps one sync record per server")
struct SyncRecordTests {
  /// A fresh save folder whose slot `autosave` has one save, so records can be written into it.
  private func slotWithASave() throws -> (folder: String, store: SaveStore) {
    let folder = NSTemporaryDirectory() + "stasis-records-\(UUID().uuidString)"
    let store = SaveStore(directory: folder)
    _ = try store.save(Counter(), codec: SaveCodec<Counter>(game: GameIdentity(name: "n")), slot: "autosave").wait()
      .get()
    return (folder, store)
  }

  @Test("an unflushed record is read when whole and newer; torn, or older, the flushed one stands")
  func unflushedBesideFlushed() throws {
    let (folder, store) = try slotWithASave()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let server = CloudCredentials(url: "https://saves.example.com", token: "alice", device: "deck")
    var flushed = SyncRecord.load(store: store, slot: "autosave", server: server)
    flushed.base = 4
    flushed.sequence = 7
    try flushed.save(store: store, slot: "autosave")
    var next = flushed
    next.base = 5
    next.sequence = 8
    try next.save(store: store, slot: "autosave", durable: false)
    #expect(SyncRecord.load(store: store, slot: "autosave", server: server).base == 5, "the newer, unflushed")
    // A crash of the machine left the unflushed file empty: the flushed record stands.
    let unflushed = try #require(
      try FileManager.default.contentsOfDirectory(atPath: folder + "/autosave").first { $0.hasSuffix("-next") })
    try Data().write(to: URL(fileURLWithPath: folder + "/autosave/" + unflushed))
    #expect(SyncRecord.load(store: store, slot: "autosave", server: server).base == 4)
    // An unflushed record older than the flushed one is one a later flushed write overtook.
    try next.save(store: store, slot: "autosave", durable: false)
    flushed.sequence = 9
    try flushed.save(store: store, slot: "autosave")
    #expect(SyncRecord.load(store: store, slot: "autosave", server: server).base == 4)
  }

  @Test("case 10: syncing with another server leaves this server's record, and what it sent, as it was")
  func onePerServer() throws {
    let (folder, store) = try slotWithASave()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let home = CloudCredentials(url: "https://saves.example.com", token: "alice", device: "deck")
    let staging = CloudCredentials(url: "https://staging.example.com", token: "alice", device: "deck")

    var record = SyncRecord.load(store: store, slot: "autosave", server: home)
    record.base = 95
    record.baseGeneration = 197
    record.queued = [198]
    try record.save(store: store, slot: "autosave")

    var other = SyncRecord.load(store: store, slot: "autosave", server: staging)
    #expect(other.base == nil, "another server starts afresh")
    other.base = 3
    try other.save(store: store, slot: "autosave")

    let back = SyncRecord.load(store: store, slot: "autosave", server: home)
    #expect(back.base == 95)
    #expect(back.baseGeneration == 197 && back.queued == [198], "what it agreed with this server, and what waits")
    #expect(SyncRecord.load(store: store, slot: "autosave", server: staging).base == 3)
    let another = CloudCredentials(url: "https://saves.example.com", token: "bob", device: "deck")
    #expect(SyncRecord.load(store: store, slot: "autosave", server: another).base == nil, "another player too")
  }

  @Test("a record written before each server had its own is read once, for its own server")
  func legacyRecord() throws {
    let (folder, store) = try slotWithASave()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let home = CloudCredentials(url: "https://saves.example.com", token: "alice", device: "deck")
    var legacy = SyncRecord.load(store: store, slot: "autosave", server: home)
    legacy.base = 7
    let encoder = JSONEncoder()
    try Data(try encoder.encode(legacy)).write(to: URL(fileURLWithPath: "\(folder)/autosave/.cloud"))
    #expect(SyncRecord.load(store: store, slot: "autosave", server: home).base == 7)
    let staging = CloudCredentials(url: "https://staging.example.com", token: "alice", device: "deck")
    #expect(SyncRecord.load(store: store, slot: "autosave", server: staging).base == nil)
  }
}
