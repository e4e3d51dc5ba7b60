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

  private func store(saves: Int, slot: SaveSlot = "autosave") throws -> SaveStore {
    let store = SaveStore(directory: makeTemporaryDirectory())
    for points in 0..<saves {
      var state = TestGameState.sample()
      state.score.points = Int64(points)
      _ = try store.save(state, codec: testCodec, slot: slot, summary: SaveSummary()).wait()
    }
    return store
  }

  @Test("a generation the slot does not have is noSuchGeneration; a slot with no save is notFound")
  func noSuchGeneration() throws {
    let store = try store(saves: 2)
    let load = #expect(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: "autosave", generation: 9) }
    #expect(load?.kind == .noSuchGeneration)
    let discard = #expect(throws: SaveFileError.self) { try store.discard(generation: 9, slot: "autosave") }
    #expect(discard?.kind == .noSuchGeneration)
    let empty = #expect(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: "nothing-here") }
    #expect(empty?.kind == .notFound)
    let none = #expect(throws: SaveFileError.self) {
      try store.load(codec: testCodec, slot: "nothing-here", generation: 1)
    }
    #expect(none?.kind == .notFound, "a slot with no save is not there, whichever generation is asked for")
    try FileManager.default.createDirectory(
      atPath: store.path(of: "autosave", generation: 5), withIntermediateDirectories: false)
    let folder = #expect(throws: SaveFileError.self) {
      try store.load(codec: testCodec, slot: "autosave", generation: 5)
    }
    #expect(folder?.kind == .notARegularFile, "\(String(describing: folder))")
    try FileManager.default.removeItem(atPath: store.path(of: "autosave", generation: 5))
    #expect(try store.generations(of: "autosave") == [2, 1], "nothing discarded")
  }

  @Test("discarding a slot's only generation is onlyGeneration, and it stays")
  func onlyGeneration() throws {
    let store = try store(saves: 1)
    let error = #expect(throws: SaveFileError.self) { try store.discard(generation: 1, slot: "autosave") }
    #expect(error?.kind == .onlyGeneration)
    #expect(try store.generations(of: "autosave") == [1])
  }

  @Test("copying or renaming onto a slot that exists is slotExists, and neither slot changes")
  func slotExists() throws {
    let store = try store(saves: 1)
    _ = try store.save(TestGameState.sample(), codec: testCodec, slot: "other", summary: SaveSummary()).wait()
    let copy = #expect(throws: SaveFileError.self) { try store.copySlot("autosave", to: "other") }
    #expect(copy?.kind == .slotExists)
    let rename = #expect(throws: SaveFileError.self) { try store.renameSlot("autosave", to: "other") }
    #expect(rename?.kind == .slotExists)
    #expect(try store.generations(of: "autosave") == [1] && store.generations(of: "other") == [1])
  }

  @Test("a slot file's name outside 1-32 lowercase letters, digits and dashes is invalidSlotFileName")
  func invalidSlotFileName() throws {
    let store = try store(saves: 1)
    for name in ["", "Kept", "../escape", String(repeating: "a", count: 33)] {
      let error = #expect(throws: SaveFileError.self) { _ = try store.readSlotFile(named: name, slot: "autosave") }
      #expect(error?.kind == .invalidSlotFileName, "'\(name)'")
    }
  }

  @Test("a save another game wrote is anotherGame, naming both games")
  func anotherGame() throws {
    let store = try store(saves: 1)
    let other = SaveCodec<TestGameState>(game: GameIdentity(name: "another-game", build: "1"))
    let error = #expect(throws: SaveFileError.self) {
      try store.load(codec: other, slot: "autosave", generation: 1)
    }
    #expect(error?.kind == .anotherGame)
    #expect(error?.message.contains("another-game") == true, "\(String(describing: error))")
  }

  @Test("a folder where a slot's hidden record belongs is notARegularFile, not io; it is not read or replaced")
  func notARegularFile() throws {
    let store = try store(saves: 1)
    let kept = "\(store.folder(of: "autosave"))/.kept"
    try FileManager.default.createDirectory(atPath: kept, withIntermediateDirectories: false)
    let error = #expect(throws: SaveFileError.self) {
      try store.keep(generation: 1, slot: "autosave", reason: "a test")
    }
    #expect(error?.kind == .notARegularFile, "\(String(describing: error))")
    #expect(error?.context.file == kept)
    var isFolder: ObjCBool = false
    #expect(FileManager.default.fileExists(atPath: kept, isDirectory: &isFolder) && isFolder.boolValue, "left as found")
  }

  @Test("a kept list whose bytes are not a list is malformed, not io; nothing is pruned or kept meanwhile")
  func malformedKeptList() throws {
    let store = try store(saves: 1)
    let kept = "\(store.folder(of: "autosave"))/.kept"
    try Data("not a list".utf8).write(to: URL(fileURLWithPath: kept))
    let error = #expect(throws: SaveFileError.self) {
      try store.keep(generation: 1, slot: "autosave", reason: "a test")
    }
    #expect(error?.kind == .malformed, "\(String(describing: error))")
    #expect(error?.context.file == kept)
    #expect(try Data(contentsOf: URL(fileURLWithPath: kept)) == Data("not a list".utf8), "left as found")
  }

  @Test("an unsigned write into a slot whose saves are signed is signingRequired, and nothing is written")
  func signingRequired() throws {
    let folder = makeTemporaryDirectory()
    let key = SigningKey(bytes: Array("the key, thirty-two bytes long!!".utf8))
    let signer = SaveStore(directory: folder, signing: .signed(with: key, acceptingUnsigned: true))
    _ = try signer.save(TestGameState.sample(), codec: testCodec, slot: "autosave", summary: SaveSummary()).wait()
    let unsigned = SaveStore(directory: folder)
    let error = #expect(throws: SaveFileError.self) {
      try unsigned.save(TestGameState.sample(), codec: testCodec, slot: "autosave", summary: SaveSummary()).wait()
    }
    #expect(error?.kind == .signingRequired, "\(String(describing: error))")
    #expect(error?.kind != .unsigned, "unsigned is a file read without a signature it needs")
    #expect(try unsigned.generations(of: "autosave") == [1])
  }

  @Test("a game whose restore throws is refusedByGame, wrapping its error; a failed validation stays invalidState")
  @MainActor
  func refusedByGame() throws {
    struct NotThisOne: Error {}
    let store = try store(saves: 2)
    let game = TestGame(TestGameState.sample())
    game.refusal = NotThisOne()
    let coordinator = SaveCoordinator(game: game, store: store, codec: testCodec, slot: "autosave")
    let app = Application(delegate: coordinator, configuration: .init(clock: ManualClock()))
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    let failure = try #require(coordinator.restoreFailure)
    #expect(failure.error.kind == .refusedByGame, "\(failure.error)")
    #expect(failure.error.underlyingError is NotThisOne)
    #expect(failure.error.context.file == store.path(of: "autosave", generation: 2), "it names the refused file")
    #expect(failure.olderGeneration == 1, "the generation offered is the one before the refused one")
    #expect(game.isPaused, "held until the game answers")
  }

  /// Every kind is asserted by at least one test somewhere, so each kind's one meaning is shown
  /// by the path that raises it (issue 44).
  @Test("every kind of SaveFileError and CloudError is the subject of a test")
  func everyKindIsTested() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    func kinds(_ file: String) throws -> [String] {
      let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
      let pattern = try Regex(#"public static let (\w+) = Kind\(rawValue:"#)
      return text.matches(of: pattern).map { String(text[$0.range].split(separator: " ")[3]) }
    }
    var tests = ""
    for folder in ["Tests", "Server/Tests"] {
      let enumerator = FileManager.default.enumerator(atPath: root.appendingPathComponent(folder).path)
      while let path = enumerator?.nextObject() as? String {
        guard path.hasSuffix(".swift") else { continue }
        tests += try String(contentsOf: root.appendingPathComponent("\(folder)/\(path)"), encoding: .utf8)
      }
    }
    let saveKinds = try kinds("Sources/Core/Stasis/Format/SaveFileError.swift")
    let cloudKinds = try kinds("Sources/Sync/StasisCloud/Transport/CloudError.swift")
    #expect(saveKinds.count >= 32 && cloudKinds.count >= 9, "\(saveKinds) \(cloudKinds)")
    let untested = try (saveKinds + cloudKinds).filter { kind in
      // An assertion on the kind: `kind == .x`, `(401, .x)` in a table, `== [.x]`.
      let asserted = try Regex(#"(==|!=) \[?\.\#(kind)\b|, (CloudError\.Kind|SaveFileError\.Kind)?\.\#(kind)\)"#)
      // Or the CLI's one line for it, `error: FILE: <the kind's words> in ...`, in a golden test.
      let words = SaveFileError(SaveFileError.Kind(rawValue: kind), "x").description.dropLast(3)
      let printed = saveKinds.contains(kind) && tests.contains("error: ") && tests.contains(": \(words) in ")
      return !tests.contains(asserted) && !printed
    }
    #expect(untested.isEmpty, "no test asserts these kinds: \(untested)")
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

/// A write builds one view of the slot (issue 44): the newest generation a new process finds is
/// read once and checked, never decoded only to learn whose it is.
@MainActor
@Suite("A store's first save in a new process reads the newest generation once")
struct FirstSaveReadsTests {
  @Test("a new state: the newest generation read once, decoded never; the same state: read once, nothing written")
  func readsOnce() throws {
    let folder = makeTemporaryDirectory()
    var state = TestGameState.sample()
    _ = try SaveStore(directory: folder).save(state, codec: testCodec, slot: "autosave", summary: SaveSummary()).wait()

    let store = SaveStore(directory: folder)  // a new process
    let newest = store.path(of: "autosave", generation: 1)
    let before = WorkCounters(store: store)
    state.score.points += 1
    _ = try store.save(state, codec: testCodec, slot: "autosave", summary: SaveSummary()).wait()
    let after = WorkCounters(store: store)
    #expect(after.reads(since: before) == [newest: 1], "\(after.reads(since: before))")
    #expect(after.decodes(since: before).isEmpty, "nothing decoded to learn whose it is")

    let again = SaveStore(directory: folder)  // another new process, the same state as the newest
    let newer = again.path(of: "autosave", generation: 2)
    let start = WorkCounters(store: again)
    let receipt = try again.save(state, codec: testCodec, slot: "autosave", summary: SaveSummary()).wait()
    let end = WorkCounters(store: again)
    #expect(receipt.outcome == .unchanged && receipt.generation == 2)
    #expect(end.reads(since: start) == [newer: 1], "checked and compared from one read: \(end.reads(since: start))")
    #expect(end.decodes(since: start).isEmpty)
  }
}
