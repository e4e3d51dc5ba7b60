import Foundation
import Stasis
import StasisDemoGame
import StasisTestSupport
import StasisTesting
import Testing

@MainActor
@Suite("I/O errors while playing")
struct IOErrorTests {
  static let assets = LevelLibrary(folder: packageRoot.appendingPathComponent("Assets/levels").path)

  @Test(
    "disk full, EIO on write or fsync, a read-only folder: a typed error, the previous generation kept, the game plays on",
    arguments: [
      (FileOperation.write, Errno.noSpace), (.write, .ioError), (.fsync, .ioError), (.open, .readOnlyFileSystem),
    ])
  func failures(operation: FileOperation, errno: Errno) throws {
    let fileSystem = FaultInjectingFileSystem()
    let store = SaveStore(directory: try temporaryFolder().path, fileSystem: fileSystem)
    let game = Game(engine: try Engine(library: Self.assets, level: 1, seed: 1), store: store, slot: "autosave")
    game.coordinator.autosaveInterval = 0
    let app = Application(delegate: game.coordinator, configuration: .init(clock: ManualClock()))
    app.launch()
    for _ in 0..<30 { game.tick(app) }
    _ = game.coordinator.saveNow().waitForResult()
    fileSystem.fail(operation, times: 2, with: errno)  // two: the store redoes a failed fsync once
    for _ in 0..<30 { game.tick(app) }
    _ = game.coordinator.saveNow().waitForResult()
    game.coordinator.waitForSaves()
    for _ in 0..<30 { game.tick(app) }
    #expect(game.engine.state.level.runFrame == 90, "the game played on")
    guard
      case .saveFailed(_, let error, _)? = game.coordinator.events.last(where: {
        if case .saveFailed = $0 { true } else { false }
      })
    else {
      Issue.record("no failed save was reported")
      return
    }
    #expect(error.kind == .io)
    #expect(error.cause?.operation == operation, "the failed call is kept as a value")
    #expect(error.cause?.errno == errno)
    #expect(error.description.contains(errno.description.split(separator: " ")[0]))
    if errno == .readOnlyFileSystem { #expect(error.suggestion == "the save folder is read-only") }
    if errno == .noSpace { #expect(error.suggestion?.contains("disk is full") == true) }
    let loaded = try store.load(codec: DemoSaveFormat.codec, slot: "autosave")
    #expect(loaded.generation == 1)
    #expect(loaded.state.level.runFrame == 30, "the previous generation is still the newest")
  }

  @Test("the save folder removed under the game: the next save makes it again and the game plays on")
  func folderRemoved() throws {
    let folder = try temporaryFolder().appendingPathComponent("Saves").path
    let store = SaveStore(directory: folder)
    let game = Game(engine: try Engine(library: Self.assets, level: 1, seed: 1), store: store, slot: "autosave")
    let app = Application(delegate: game.coordinator, configuration: .init(clock: ManualClock()))
    app.launch()
    _ = game.coordinator.saveNow().waitForResult()
    try FileManager.default.removeItem(atPath: folder)
    #expect(!game.coordinator.restoreSlot(), "nothing to load: a typed error, no crash")
    guard case .loadFailed(let error)? = game.coordinator.events.last else {
      Issue.record("no load failure reported")
      return
    }
    #expect(error.kind == .notFound)
    for _ in 0..<10 { game.tick(app) }
    let receipt = try game.coordinator.saveNow().wait()
    #expect(receipt.generation == 1)
    #expect(try store.load(codec: DemoSaveFormat.codec, slot: "autosave").state.level.runFrame == 10)
  }
}
