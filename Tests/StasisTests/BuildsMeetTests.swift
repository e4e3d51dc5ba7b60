import Foundation
import Logging
import Stasis
import StasisTesting
import Testing

/// Issue 27's cases 1 and 2: where a newer and an older build of a game share a slot.
@MainActor
@Suite("Where builds meet, nothing a player reached is lost")
struct BuildsMeetTests {
  let newer = SaveCodec<TestGameState>(game: GameIdentity(name: testGame.name, build: "next", schemaVersion: 2))

  /// A game of this build (schema 1) or the newer one over `folder`'s slot.
  private func launch(
    _ folder: String, codec: SaveCodec<TestGameState>, restoring: Bool, logger: Logger = Logger(label: "test")
  ) -> (CountingGame, SaveCoordinator<CountingGame>, Application) {
    let game = CountingGame()
    let coordinator = SaveCoordinator(
      game: game, store: SaveStore(directory: folder), codec: codec, slot: "autosave", logger: logger)
    let app = Application(delegate: coordinator, configuration: .init(clock: ManualClock()))
    app.launch(options: LaunchOptions(restoreSlot: restoring ? "autosave" : nil))
    return (game, coordinator, app)
  }

  private func play(_ game: CountingGame, _ coordinator: SaveCoordinator<CountingGame>, saves: Int) {
    for _ in 0..<saves where !game.isPaused {
      game.step()
      coordinator.didStep(frame: Int64(game.state.level.progress))
      coordinator.saveNow()
      coordinator.waitForSaves()
    }
  }

  private func failures(_ coordinator: SaveCoordinator<CountingGame>) -> [SaveEvent] {
    coordinator.events.filter { if case .saveFailed = $0 { true } else { false } }
  }

  @Test("case 1: a newer build's save survives an older build's start-over and the newer build's own saves after it")
  func newerSaveOutlivesAStartOver() throws {
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder)
    var progress = TestGameState.sample()
    progress.level.progress = 900  // what the player reached on the newer build
    let reached = try store.save(progress, codec: newer, slot: "autosave").wait()

    // The older build refuses it, the player starts over and plays.
    let (old, oldCoordinator, oldApp) = launch(folder, codec: testCodec, restoring: true)
    #expect(oldCoordinator.restoreFailure?.error.kind == .newerSchema)
    try oldCoordinator.resolveRestoreFailure(.startOver)
    play(old, oldCoordinator, saves: 3)
    oldApp.terminate()
    oldCoordinator.waitForSaves()
    #expect(failures(oldCoordinator).isEmpty)

    // Back on the newer build: it plays on from the start-over's saves (it chose so), and saves.
    let (game, coordinator, app) = launch(folder, codec: newer, restoring: true)
    if coordinator.restoreFailure != nil {
      try coordinator.resolveRestoreFailure(.loadGeneration(try #require(coordinator.restoreFailure?.olderGeneration)))
    }
    play(game, coordinator, saves: 6)
    app.terminate()
    coordinator.waitForSaves()

    #expect(try store.generations(of: "autosave").contains(reached.generation), "never pruned without a discard")
    let kept = store.keptGenerations(of: "autosave")
    #expect(kept.map(\.generation).contains(reached.generation))
    #expect(
      kept.first { $0.generation == reached.generation }?.reason
        == "schema 2, newer than the build that saved after it (schema 1)")
    #expect(try store.load(codec: newer, slot: "autosave", generation: reached.generation).state == progress)
    try store.discard(generation: reached.generation, slot: "autosave")
    #expect(try !store.generations(of: "autosave").contains(reached.generation), "an explicit discard removes it")
  }

  @Test("case 2: an older build's new game over a newer save saves beside it; the newer build is offered both")
  func newGameSavesAlongside() throws {
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder)
    var progress = TestGameState.sample()
    progress.level.progress = 900
    let reached = try store.save(progress, codec: newer, slot: "autosave").wait()
    let bytes = try Data(contentsOf: URL(fileURLWithPath: reached.path))

    // A new game on the older build: every save is made, none fails, the newer file untouched.
    let (old, oldCoordinator, oldApp) = launch(folder, codec: testCodec, restoring: false)
    #expect(oldCoordinator.restoreFailure == nil)
    play(old, oldCoordinator, saves: 5)
    oldApp.terminate()
    oldCoordinator.waitForSaves()
    #expect(failures(oldCoordinator).isEmpty, "\(oldCoordinator.events)")
    let saved = oldCoordinator.events.filter { if case .saved = $0 { true } else { false } }
    #expect(saved.count == 6, "5 saves and the quit's")
    #expect(try Data(contentsOf: URL(fileURLWithPath: reached.path)) == bytes)
    #expect(store.keptGenerations(of: "autosave").map(\.generation) == [reached.generation])
    let olderNewest = try #require(try store.generations(of: "autosave").first)

    // The newer build returns: held, offered both, nothing restored until the player chooses.
    let (game, coordinator, app) = launch(folder, codec: newer, restoring: true)
    defer { _ = app }
    let failure = try #require(coordinator.restoreFailure)
    #expect(failure.error.kind == .savedAlongside)
    #expect(failure.reason == .savedAlongside(newer: reached.generation))
    #expect(failure.olderGeneration == olderNewest)
    #expect(game.isPaused && game.restores == 0)
    try coordinator.resolveRestoreFailure(.loadGeneration(reached.generation))
    #expect(game.state == progress, "the player's newer progress, back")
    #expect(!game.isPaused)
    let kept = store.keptGenerations(of: "autosave").map(\.generation)
    #expect(kept.contains(olderNewest), "the older build's branch, not chosen, is kept too")
  }

  @Test("a save only a full decode refuses is kept durably when the coordinator's restore meets it")
  func decodeFailureKeptDurably() throws {
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder)
    _ = try store.save(TestGameState.sample(), codec: testCodec, slot: "autosave").wait()
    // Another build of the same schema renamed a field without a migration: only decoding finds it.
    var document = try store.readDocument(at: store.path(of: "autosave", generation: 1))
    let index = try #require(document.sections.firstIndex { $0.name == "score" })
    guard case .tree(var score) = document.sections[index].content else { return }
    score.renameField("points", to: "total")
    document.sections[index].content = .tree(score)
    let renamed = try store.save(document: document, slot: "autosave").wait().generation
    let (_, coordinator, _) = launch(folder, codec: testCodec, restoring: true)
    #expect(coordinator.restoreFailure != nil)
    // A new process (a tool) that never decodes it sees it kept, on disk.
    #expect(SaveStore(directory: folder).keptGenerations(of: "autosave").map(\.generation) == [renamed])
  }

  @Test("a newer build saves into the slot while this one plays: the game is held, said once, and saves nothing")
  func failingSavesHoldTheGame() throws {
    let folder = makeTemporaryDirectory()
    let lines = RecordingLogHandler.Lines()
    let (game, coordinator, app) = launch(
      folder, codec: testCodec, restoring: false,
      logger: Logger(label: "test") { _ in
        var handler = RecordingLogHandler(lines)
        handler.logLevel = .info
        return handler
      })
    defer { _ = app }
    play(game, coordinator, saves: 2)
    _ = try SaveStore(directory: folder).save(TestGameState.sample(), codec: newer, slot: "autosave").wait()
    play(game, coordinator, saves: 5)
    #expect(failures(coordinator).count == 1, "one save failed, then the game was held")
    #expect(game.isPaused)
    #expect(coordinator.restoreFailure?.error.kind == .newerSaveInSlot)
    let holds = coordinator.events.filter(\.isHold)
    #expect(holds.count == 1)
    #expect(lines.messages.filter { $0.contains("held until resolveRestoreFailure") }.count == 1, "\(lines.messages)")
    // The player chooses: a new game beside it, and saves are made again.
    try coordinator.resolveRestoreFailure(.startOver)
    play(game, coordinator, saves: 2)
    #expect(failures(coordinator).count == 1)
  }

  @Test("a held game says so when the hold begins and again every holdNoticeInterval, never silently, until answered")
  func heldGameIsLoud() throws {
    let folder = makeTemporaryDirectory()
    _ = try SaveStore(directory: folder).save(TestGameState.sample(), codec: newer, slot: "autosave").wait()
    let lines = RecordingLogHandler.Lines()
    let clock = ManualClock()
    let game = CountingGame()
    let coordinator = SaveCoordinator(
      game: game, store: SaveStore(directory: folder), codec: testCodec, slot: "autosave",
      logger: Logger(label: "test") { _ in
        var handler = RecordingLogHandler(lines)
        handler.logLevel = .notice
        return handler
      })
    let app = Application(delegate: coordinator, configuration: .init(clock: clock))
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    let holds = {
      coordinator.events.compactMap { if case .held(let reason, let duration) = $0 { (reason, duration) } else { nil } }
    }

    // A newer build's save: the restore fails, the game is held, and it says so at once.
    #expect(coordinator.isHeld && game.isPaused)
    guard case .restoreFailure(let error)? = coordinator.heldReason else {
      Issue.record("held for \(String(describing: coordinator.heldReason))")
      return
    }
    #expect(error.kind == .newerSchema)
    #expect(holds().map(\.1) == [.zero])
    #expect(lines.messages.filter { $0.hasPrefix("hold: the game is held until resolveRestoreFailure(_:)") }.count == 1)

    // A loop that plays on regardless hears it again every 10 s of the application's clock.
    for _ in 0..<90 {
      clock.advance(by: .milliseconds(100))
      app.update()
    }
    #expect(holds().count == 1, "9 s: not yet")
    clock.advance(by: .seconds(1))
    app.update()
    #expect(holds().map(\.1) == [.zero, .seconds(10)])
    clock.advance(by: .seconds(10))
    app.update()
    #expect(holds().map(\.1) == [.zero, .seconds(10), .seconds(20)])
    #expect(lines.messages.filter { $0.contains("(for 20 s)") }.count == 1)
    guard case .failure(let refused) = coordinator.saveNow().waitForResult() else {
      Issue.record("a save was made while held")
      return
    }
    #expect(refused.kind == .held, "nothing saved while held, and the error says why")
    #expect(refused.hold == coordinator.heldReason, "the hold itself, the coordinator's type")
    guard case .restoreFailure(let failure)? = refused.hold else {
      Issue.record("held by the restore failure: \(String(describing: refused.hold))")
      return
    }
    #expect(failure == coordinator.restoreFailure?.error)

    // Answered: the hold ends, and nothing more is said.
    try coordinator.resolveRestoreFailure(.startOver)
    #expect(!coordinator.isHeld && coordinator.heldReason == nil)
    clock.advance(by: .seconds(30))
    app.update()
    #expect(holds().count == 3)
  }
}
