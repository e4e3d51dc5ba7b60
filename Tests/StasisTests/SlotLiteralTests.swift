import Foundation
import Stasis
import Testing

@Suite("Slot literals")
struct SlotLiteralTests {
  @Test("try SaveSlot(\"../escape\") does not trap: every store call refuses the slot, and nothing is written")
  func invalidLiteralIsRefusedNotTrapped() throws {
    let root = makeTemporaryDirectory()
    let store = SaveStore(directory: root + "/Saves")
    // Swift makes this spelling a literal (`init(stringLiteral:)`): it cannot throw, and must not trap.
    let escape = try SaveSlot("../escape")
    #expect(!escape.isValid)
    let refused = #expect(throws: SaveFileError.self) { try escape.validated() }
    #expect(refused?.kind == .invalidSlotName)

    let saved = store.save(TestGameState.sample(), codec: testCodec, slot: escape).waitForResult()
    guard case .failure(let error) = saved else {
      Issue.record("a save to '../escape' was written")
      return
    }
    #expect(error.kind == .invalidSlotName)
    #expect(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: escape) }
    #expect(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: escape, generation: 1) }
    #expect(throws: SaveFileError.self) { try store.generations(of: escape) }
    #expect(throws: SaveFileError.self) { try store.writeSlotFile([1], named: "note", slot: escape) }
    #expect(throws: SaveFileError.self) { try store.readSlotFile(named: "note", slot: escape) }
    #expect(throws: SaveFileError.self) { try store.copySlot("spring", to: escape) }
    #expect(throws: SaveFileError.self) { try store.deleteSlot(escape) }
    #expect(!FileManager.default.fileExists(atPath: root + "/escape"), "nothing outside the save folder")

    let valid: SaveSlot = "autosave"
    #expect(valid.isValid)
    #expect(try valid.validated() == valid)
    #expect(valid == (try SaveSlot("autosave")), "a literal and a checked name are the same slot")
  }
}
