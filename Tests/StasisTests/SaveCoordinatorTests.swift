import Foundation
import Logging
import Stasis
import StasisTesting
import Synchronization
import Testing

/// The smallest game: StasisTesting's `TestGame` over a state that changes every step.
typealias CountingGame = TestGame<TestGameState>

extension TestGame where State == TestGameState {
  convenience init() {
    self.init(TestGameState.sample())
    summarize = { state in
      try SaveSummary(TestSummary(level: 0, score: state.score.points), frame: Int64(state.level.progress))
    }
  }

  func step() {
    state.level.progress += 1
    state.score.points += 10
  }
}

@MainActor
@Suite("The save coordinator: the iOS recipe for any game")
struct SaveCoordinatorTests {
  private func make(
    fileSystem: any FileSystem = PosixFileSystem(), folder: String = makeTemporaryDirectory()
  ) -> (CountingGame, SaveCoordinator<CountingGame>, Application, ManualClock) {
    let game = CountingGame()
    let store = SaveStore(directory: folder, fileSystem: fileSystem)
    let coordinator = SaveCoordinator(game: game, store: store, codec: testCodec, slot: "autosave")
    let clock = ManualClock()
    let app = Application(delegate: coordinator, configuration: .init(clock: clock))
    return (game, coordinator, app, clock)
  }

  private func play(_ game: CountingGame, _ coordinator: SaveCoordinator<CountingGame>, steps: Int) {
    for _ in 0..<steps where !game.isPaused {
      game.step()
      coordinator.didStep(frame: Int64(game.state.level.progress))
    }
  }

  @Test("sent away: paused, saved as a background task, suspended when durable; back: the same state, resumed")
  func backgroundRoundTrip() throws {
    let (game, coordinator, app, _) = make()
    app.launch()
    play(game, coordinator, steps: 30)
    let before = game.state
    app.enterBackground()
    #expect(game.isPaused)
    while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
    #expect(app.state == .suspended)
    game.state.score.points = -1  // memory is not what comes back
    app.enterForeground()
    #expect(!game.isPaused)
    #expect(game.state == before)
    guard case .restored(let generation, _, let skipped, let report)? = coordinator.events.last else {
      Issue.record("no restore: \(coordinator.events)")
      return
    }
    #expect(generation == 1 && skipped.isEmpty && report.isClean)
    #expect(coordinator.events.first.map { if case .saved(.background, _, _) = $0 { true } else { false } } == true)
  }

  @Test("the budget runs out mid-write: the save is cancelled, the previous generation stays, memory is kept")
  func budgetExpires() throws {
    let disk = FaultInjectingFileSystem()
    let (game, coordinator, app, clock) = make(fileSystem: disk)
    app.launch()
    play(game, coordinator, steps: 10)
    _ = coordinator.saveNow().waitForResult()
    play(game, coordinator, steps: 10)
    let inMemory = game.state
    disk.closeGate()
    app.enterBackground()
    disk.reachedGate.wait()  // the write is in progress
    clock.advance(by: .seconds(11))
    app.update()  // the expiration handler cancels the save
    disk.openGate()
    coordinator.waitForSaves()
    #expect(app.state == .suspended)
    app.enterForeground()
    #expect(game.state == inMemory, "the newest state is the one in memory")
    #expect(coordinator.events.contains { if case .keptMemory = $0 { true } else { false } })
    #expect(
      coordinator.events.contains {
        if case .saveFailed(.background, let error, _) = $0 { error.kind == .cancelled } else { false }
      })
    #expect(try coordinator.store.generations(of: "autosave") == [1])
  }

  @Test("a cold start restores the newest generation that loads, and says what it passed over")
  func coldStart() throws {
    let folder = makeTemporaryDirectory()
    let (first, firstCoordinator, firstApp, _) = make(folder: folder)
    firstApp.launch()
    play(first, firstCoordinator, steps: 5)
    _ = firstCoordinator.saveNow().waitForResult()
    let good = first.state
    play(first, firstCoordinator, steps: 5)
    let damaged = try firstCoordinator.saveNow().wait()
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: damaged.path)))
    bytes[bytes.count / 2] ^= 0x10
    try Data(bytes).write(to: URL(fileURLWithPath: damaged.path))

    let (game, coordinator, app, _) = make(folder: folder)
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    #expect(game.state == good)
    guard case .restored(1, _, let skipped, _)? = coordinator.events.last else {
      Issue.record("\(coordinator.events)")
      return
    }
    #expect(skipped.count == 1 && skipped[0].hasPrefix("generation 2 is damaged"))
  }

  @Test("a cold start with nothing to restore reports loadFailed and the game starts fresh")
  func coldStartNothing() {
    let (game, coordinator, app, _) = make()
    let fresh = game.state
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    #expect(game.state == fresh)
    guard case .loadFailed(let error)? = coordinator.events.last else {
      Issue.record("\(coordinator.events)")
      return
    }
    #expect(error.kind == .notFound)
  }

  @Test("autosave every N steps; the thumbnail is drawn on the worker, never the main thread")
  func autosave() throws {
    let (game, coordinator, app, _) = make()
    let drawnOnMain = Mutex<[Bool]>([])
    coordinator.thumbnail = { state in
      drawnOnMain.withLock { $0.append(Thread.isMainThread) }
      return Array("png of \(state.score.points)".utf8)
    }
    coordinator.autosaveInterval = 20
    app.launch()
    play(game, coordinator, steps: 60)
    coordinator.waitForSaves()
    let saved = coordinator.events.compactMap { event -> Int64? in
      if case .saved(.autosave, _, let summary) = event { return summary.frame }
      return nil
    }
    #expect(saved == [20, 40, 60])
    // An autosave overtaken while it waited is never encoded, so it draws nothing.
    let drawn = drawnOnMain.withLock { $0 }
    #expect(!drawn.isEmpty && !drawn.contains(true))
    let loaded = try coordinator.store.load(codec: testCodec, slot: "autosave")
    guard case .raw(let png)? = loaded.document[section: "thumbnail"]?.content else {
      Issue.record("no thumbnail section")
      return
    }
    #expect(String(decoding: png, as: UTF8.self) == "png of \(loaded.state.score.points)")
  }

  @Test("quitting saves with the budget; the game's own delegate hears every moment after the coordinator")
  func terminateAndForwarding() throws {
    final class Listener: ApplicationDelegate {
      var heard: [String] = []
      func applicationDidEnterBackground(_ application: Application) { heard.append("background") }
      func applicationWillTerminate(_ application: Application) { heard.append("terminate") }
      func applicationDidBecomeActive(_ application: Application) { heard.append("active") }
    }
    let (game, coordinator, app, _) = make()
    let listener = Listener()
    coordinator.delegate = listener
    app.launch()
    play(game, coordinator, steps: 7)
    app.terminate()
    while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
    coordinator.waitForSaves()
    #expect(listener.heard == ["active", "terminate"])
    #expect(try coordinator.store.load(codec: testCodec, slot: "autosave").state == game.state)
    #expect(coordinator.events.contains { if case .saved(.terminate, _, _) = $0 { true } else { false } })
  }
}
