import Foundation
import Stasis
import Testing

@Suite("Slot operations: a chosen generation, delete, copy, rename, the standard folder")
struct SlotOperationsTests {
  private func store(saves count: Int, slot: SaveSlot = "slot-1") throws -> SaveStore {
    let store = SaveStore(directory: makeTemporaryDirectory() + "/deep/er/Saves")
    for points in 1...count {
      var state = TestGameState.sample()
      state.score.points = Int64(points)
      _ = try store.save(state, codec: testCodec, slot: slot, summary: state.summary).wait()
    }
    return store
  }

  @Test("the save folder is created with its parents; a chosen generation loads, never another")
  func chosenGeneration() throws {
    let store = try store(saves: 3)
    #expect(try store.load(codec: testCodec, slot: "slot-1", generation: 2).state.score.points == 2)
    let missing = #expect(throws: SaveFileError.self) {
      try store.load(codec: testCodec, slot: "slot-1", generation: 9)
    }
    #expect(missing?.kind == .noSuchGeneration)
    #expect(missing?.message == "slot 'slot-1' has no generation 9 (it has 3, 2, 1)")
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.path(of: "slot-1", generation: 2))))
    bytes[bytes.count / 2] ^= 1
    try Data(bytes).write(to: URL(fileURLWithPath: store.path(of: "slot-1", generation: 2)))
    let damaged = #expect(throws: SaveFileError.self) {
      try SaveStore(directory: store.directory).load(codec: testCodec, slot: "slot-1", generation: 2)
    }
    #expect(damaged?.kind == .checksumMismatch, "no fallback to another generation")
  }

  @Test("delete removes every generation and the folder; a missing slot is notFound")
  func delete() throws {
    let store = try store(saves: 2)
    try store.deleteSlot("slot-1")
    #expect(!FileManager.default.fileExists(atPath: store.folder(of: "slot-1")))
    #expect(try store.listSlots().isEmpty)
    let error = #expect(throws: SaveFileError.self) { try store.deleteSlot("slot-1") }
    #expect(error?.kind == .notFound)
    let escape = "../escape"  // a runtime name: checked by the throwing initialiser
    #expect(throws: SaveFileError.self) { try store.deleteSlot(SaveSlot(escape)) }
  }

  @Test("copy duplicates every generation byte for byte, in order; the source is untouched")
  func copy() throws {
    let store = try store(saves: 3)
    let before = try store.generations(of: "slot-1").map {
      try Data(contentsOf: URL(fileURLWithPath: store.path(of: "slot-1", generation: $0)))
    }
    try store.copySlot("slot-1", to: "slot-2")
    let copied = try store.generations(of: "slot-2").map {
      try Data(contentsOf: URL(fileURLWithPath: store.path(of: "slot-2", generation: $0)))
    }
    #expect(copied == before)
    #expect(try store.load(codec: testCodec, slot: "slot-2").state.score.points == 3)
    let taken = #expect(throws: SaveFileError.self) { try store.copySlot("slot-1", to: "slot-2") }
    #expect(taken?.message == "slot 'slot-2' already exists")
  }

  @Test("rename moves the whole slot at once, unreadable generations included")
  func rename() throws {
    let store = try store(saves: 2)
    let newer = SaveCodec<TestGameState>(game: GameIdentity(name: testGame.name, schemaVersion: 2))
    _ = try SaveStore(directory: store.directory).save(
      TestGameState.sample(), codec: newer, slot: "slot-1", summary: SaveSummary()
    ).wait()
    try store.renameSlot("slot-1", to: "campaign")
    #expect(!FileManager.default.fileExists(atPath: store.folder(of: "slot-1")))
    #expect(try store.generations(of: "campaign") == [3, 2, 1])
    #expect(try store.load(codec: newer, slot: "campaign").generation == 3)
    #expect(throws: SaveFileError.self) { try store.renameSlot("nothing-here", to: "other") }
  }

  @Test("the standard folder follows XDG: $XDG_DATA_HOME/<game>/saves, else ~/.local/share/<game>/saves")
  func standardFolder() {
    #expect(
      SaveStore.defaultDirectory(game: "tanks", environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/ada"])
        == "/data/tanks/saves")
    #expect(
      SaveStore.defaultDirectory(game: "tanks", environment: ["HOME": "/home/ada"])
        == "/home/ada/.local/share/tanks/saves")
    #expect(
      SaveStore.defaultDirectory(game: "tanks", environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/ada"])
        == "/home/ada/.local/share/tanks/saves", "a relative XDG_DATA_HOME is ignored, as the spec says")
  }

  @Test("the encoder throws a SaveFileError naming the field, as the decoder does")
  func typedEncoderErrors() {
    struct Refusing: Encodable {
      struct Inner: Encodable {
        func encode(to encoder: any Encoder) throws {
          throw EncodingError.invalidValue(
            self, .init(codingPath: encoder.codingPath, debugDescription: "cannot be saved"))
        }
      }
      var inner = Inner()
    }
    let error = #expect(throws: SaveFileError.self) { try SaveValueEncoder().encode(Refusing()) }
    #expect(error?.kind == .typeMismatch)
    #expect(error?.context.field == "inner")
  }
}
