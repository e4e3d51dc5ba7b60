import Foundation
import Logging
import Stasis
import StasisTesting
import Testing

/// A newer build of the test game: same state types, schema 2.
private let newerCodec = SaveCodec<TestGameState>(
  game: GameIdentity(name: testGame.name, build: "newer", schemaVersion: 2))

@Suite("A newer build's save is never lost")
struct NewerSaveTests {
  private func save(
    _ store: SaveStore, points: Int64, codec: SaveCodec<TestGameState> = testCodec, slot: SaveSlot = "autosave",
    unreadableNewest: UnreadableNewest = .refuse
  ) -> Result<SaveReceipt, SaveFileError> {
    var state = TestGameState.sample()
    state.score.points = points
    return store.save(
      state, codec: codec, slot: slot, summary: state.summary, unreadableNewest: unreadableNewest
    ).wait()
  }

  private func contents(_ store: SaveStore, slot: SaveSlot = "autosave") throws -> [String: Data] {
    let folder = store.folder(of: slot)
    var files: [String: Data] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".stasis") {
      files[name] = try Data(contentsOf: URL(fileURLWithPath: "\(folder)/\(name)"))
    }
    return files
  }

  /// Generations 1 and 2 by this build, 3 by a newer one (another process: another store).
  private func slotWithNewerSave() throws -> SaveStore {
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder)
    _ = try save(store, points: 1).get()
    _ = try save(store, points: 2).get()
    _ = try save(SaveStore(directory: folder), points: 3, codec: newerCodec).get()
    return store
  }

  /// Flips a bit of a file, as a disk would, seen by a store that starts after it happened.
  private func damage(_ path: String, at offset: (Int) -> Int, with mask: UInt8 = 0x01) throws {
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    bytes[offset(bytes.count)] ^= mask
    try Data(bytes).write(to: URL(fileURLWithPath: path))
  }

  @Test("loading a slot whose newest generation has a newer schema is a newerSchema error naming what to do")
  func loadRefusesNewer() throws {
    let store = try slotWithNewerSave()
    let error = #expect(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: "autosave") }
    #expect(error?.kind == .newerSchema)
    #expect(error?.context.file == store.path(of: "autosave", generation: 3))
    #expect(error?.message.contains("generation 3") == true)
    #expect(error?.message.contains("schema version 2") == true)
    #expect(error?.suggestion?.contains("update the game") == true)
    #expect(error?.suggestion?.contains("stasis recover autosave --generation 2") == true)
  }

  @Test("falling back past an unreadable generation is the caller's explicit choice, and the result says so")
  func explicitFallback() throws {
    let store = try slotWithNewerSave()
    let loaded = try store.load(codec: testCodec, slot: "autosave", fallback: .pastUnreadable)
    #expect(loaded.generation == 2)
    #expect(loaded.state.score.points == 2)
    #expect(loaded.skipped.map(\.generation) == [3])
    #expect(loaded.skipped.first?.error.kind == .newerSchema)
    #expect(loaded.fallbackDescription?.hasPrefix("generation 3 cannot be read by this build (newer schema") == true)
    #expect(loaded.fallbackDescription?.hasSuffix("; loaded generation 2") == true)
    // The newer build still loads its own save.
    #expect(try store.load(codec: newerCodec, slot: "autosave").generation == 3)
  }

  @Test("saving on top of a newer build's save is refused by default and changes no file")
  func saveRefused() throws {
    let store = try slotWithNewerSave()
    let before = try contents(store)
    for _ in 0..<4 {
      guard case .failure(let error) = save(store, points: 9) else {
        Issue.record("saved on top of a newer build's save")
        return
      }
      #expect(error.kind == .newerSaveInSlot)
      #expect(error.context.file == store.path(of: "autosave", generation: 3))
      #expect(error.suggestion?.contains("update the game") == true)
    }
    #expect(try contents(store) == before)
  }

  @Test("saving alongside keeps the newer save through any number of saves; pruning never removes it")
  func saveAlongside() throws {
    let store = try slotWithNewerSave()
    let newer = try contents(store)["0000000003.stasis"]
    for points in 10..<16 {
      _ = try save(store, points: Int64(points), unreadableNewest: .saveAlongside).get()
    }
    let after = try contents(store)
    #expect(after["0000000003.stasis"] == newer, "the newer build's save is untouched")
    #expect(try store.generations(of: "autosave") == [9, 8, 7, 3])
    #expect(try store.load(codec: newerCodec, slot: "autosave").generation == 9, "the newer build reads the newest")
  }

  @Test("a generation of a newer format is kept, refused on load and not saved over")
  func newerFormat() throws {
    let folder = makeTemporaryDirectory()
    _ = try save(SaveStore(directory: folder), points: 1).get()
    let second = try save(SaveStore(directory: folder), points: 2).get()
    try damage(second.path, at: { _ in 8 }, with: 0x01)  // the format version (2 → 3), read before any checksum
    let store = SaveStore(directory: folder)
    let error = #expect(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: "autosave") }
    #expect(error?.kind == .newerFormat)
    guard case .failure(let refusal) = save(store, points: 3) else {
      Issue.record("saved on top of a newer format's save")
      return
    }
    #expect(refusal.kind == .newerSaveInSlot)
    for points in 3..<8 { _ = try save(store, points: Int64(points), unreadableNewest: .saveAlongside).get() }
    #expect(try store.generations(of: "autosave").contains(2))
  }

  @Test("pruning counts only generations that load, and never removes one newer than the oldest kept")
  func pruningCountsLoadable() throws {
    let folder = makeTemporaryDirectory()
    _ = try save(SaveStore(directory: folder), points: 1).get()
    _ = try save(SaveStore(directory: folder), points: 2, codec: newerCodec).get()
    let damaged = try save(SaveStore(directory: folder), points: 3, unreadableNewest: .saveAlongside).get()
    // Generation 3 is damaged; generation 2 is the newer build's; generation 1 loads.
    try damage(damaged.path, at: { $0 / 2 }, with: 0x40)
    let store = SaveStore(directory: folder, generationsToKeep: 2)

    _ = try save(store, points: 4, unreadableNewest: .saveAlongside).get()
    #expect(try store.generations(of: "autosave") == [4, 3, 2, 1], "two loadable generations: 4 and 1")
    _ = try save(store, points: 5).get()
    #expect(
      try store.generations(of: "autosave") == [5, 4, 2],
      "5 and 4 load; the damaged 3 and the old 1 go; the newer build's 2 stays")
  }

  @Test("a damaged newest generation still falls back by default, and the message reads naturally")
  func damagedFallsBack() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    _ = try save(store, points: 1).get()
    let newest = try save(store, points: 2).get()
    try damage(newest.path, at: { $0 - 40 })
    let loaded = try store.load(codec: testCodec, slot: "autosave")
    #expect(loaded.generation == 1)
    let description = try #require(loaded.fallbackDescription)
    #expect(description.hasPrefix("generation 2 is damaged (checksum mismatch in section 'score' at byte "))
    #expect(description.hasSuffix("; loaded generation 1"))
  }

  @Test("when every generation fails, the error says how many and what the user can do, never '0 older'")
  func everythingFails() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    let only = try save(store, points: 1).get()
    try Data([0x89, 0x53]).write(to: URL(fileURLWithPath: only.path))
    let one = #expect(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: "autosave") }
    #expect(one?.message.contains("older") == false)
    #expect(one?.suggestion?.contains("stasis slots") == true)

    let second = try save(store, points: 2).get()
    try Data([0x89, 0x53, 0x54]).write(to: URL(fileURLWithPath: second.path))
    let two = #expect(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: "autosave") }
    #expect(two?.message.hasSuffix("; the 1 older generation failed too") == true)
  }

  @Test("the store logs nothing for a failure it returns: the caller reports it once")
  func oneLogLine() throws {
    let handler = RecordingLogHandler.Lines()
    let logger = Logger(label: "test") { _ in RecordingLogHandler(handler) }
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder, logger: logger)
    _ = try save(store, points: 1).get()
    _ = try save(SaveStore(directory: folder), points: 2, codec: newerCodec).get()
    _ = try? store.load(codec: testCodec, slot: "autosave")  // refused
    _ = try store.load(codec: testCodec, slot: "autosave", fallback: .pastUnreadable)
    #expect(handler.messages.isEmpty, "\(handler.messages)")
    // What the store handles itself, it logs once, through the caller's logger: the refused
    // save still put the newer build's generation on the kept list first.
    #expect(throws: SaveFileError.self) { try save(store, points: 3).get() }
    for points in 4..<8 { _ = try save(store, points: Int64(points), unreadableNewest: .saveAlongside).get() }
    #expect(handler.messages.count == 1, "once per generation, not once per save: \(handler.messages)")
    #expect(handler.messages.first?.contains("kept generation 2 until discarded: schema 2") == true)
  }
}
