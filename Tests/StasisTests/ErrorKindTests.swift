import Foundation
import StasisTesting
import Testing

@testable import Stasis

/// Each error kind means one thing, and kinds are values a later version can add to without
/// breaking anyone's `switch` (issue 44).
@Suite("Error kinds: one meaning each, extensible")
struct ErrorKindTests {
  @Test("a conditional write after another writer saved is slotChanged, not newerSaveInSlot, and writes nothing")
  func slotChanged() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    let first = try store.save(TestGameState.sample(), codec: testCodec, slot: "autosave", summary: SaveSummary())
      .wait()
    var state = TestGameState.sample()
    state.score.points = 2
    _ = try store.save(state, codec: testCodec, slot: "autosave", summary: SaveSummary()).wait()
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.path(of: "autosave", generation: 1))))
    // A sync read generation 1 and writes a download on it: generation 2 came in between.
    let result = store.save(fileBytes: bytes, slot: "autosave", ifNewestIs: first.generation).waitForResult()
    guard case .failure(let error) = result else {
      Issue.record("written over a save it had not seen: \(result)")
      return
    }
    #expect(error.kind == .slotChanged)
    #expect(error.kind != .newerSaveInSlot, "a slot that changed is not a save this build cannot read")
    #expect(error.description.contains("the slot changed since it was read"), "\(error)")
    #expect(try store.generations(of: "autosave") == [2, 1], "nothing written")
  }

  @Test("a switch over kinds needs a default, and a kind from a later version falls into it")
  func extensible() {
    func advice(_ kind: SaveFileError.Kind) -> String {
      switch kind {
      case .io: "check the disk"
      case .newerSchema, .newerSaveInSlot: "update the game"
      default: "other"
      }
    }
    #expect(advice(.io) == "check the disk")
    #expect(advice(.newerSaveInSlot) == "update the game")
    let later = SaveFileError.Kind(rawValue: "someKindOfVersion2")
    #expect(advice(later) == "other")
    #expect(SaveFileError(later, "what happened").description == "someKindOfVersion2: what happened")
    #expect(SaveFileError.Kind.slotChanged.rawValue == "slotChanged", "the name scripts see is stable")
  }
}

@Suite("StasisTesting's temporary folder")
struct TemporaryFolderTests {
  @Test("a temporary folder exists while used and is removed, with what it holds, when released")
  func removesItself() throws {
    var folder: TemporaryFolder? = try TemporaryFolder(prefix: "stasis-folder-test")
    let path = try #require(folder?.path)
    var isFolder: ObjCBool = false
    #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue)
    let store = SaveStore(directory: folder!.appending("Saves"))
    _ = try store.save(TestGameState.sample(), codec: testCodec, slot: "autosave", summary: SaveSummary()).wait()
    #expect(FileManager.default.fileExists(atPath: "\(path)/Saves/autosave"))
    folder = nil
    #expect(!FileManager.default.fileExists(atPath: path), "removed with everything in it")
  }
}
