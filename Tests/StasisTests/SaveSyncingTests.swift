import Foundation
import Stasis
import StasisTesting
import Testing

/// A sync the test drives by hand: it records what the coordinator tells it and hands out
/// catch-ups the test finishes (or writes under) itself.
@MainActor
final class ScriptedSync: SaveSyncing {
  var started: [SaveReason] = []
  var catchUps: [(stateGeneration: Int, progress: CatchUp)] = []
  var resumed = 0
  /// What the coordinator told, in order: `resume` and `new history`.
  var told: [String] = []

  func saveStarted(_ handle: SaveHandle, reason: SaveReason, application: Application) { started.append(reason) }

  func catchUp(stateGeneration: Int, application: Application) -> CatchUp {
    let progress = CatchUp()
    catchUps.append((stateGeneration, progress))
    return progress
  }

  func resumeUploads(application: Application) {
    resumed += 1
    told.append("resume")
  }

  func beganNewHistory(application: Application) { told.append("new history") }

  func restoredOlderGeneration(_ generation: Int, application: Application) { told.append("older \(generation)") }
}

@Suite("CatchUp: one write, only while the game is held")
struct CatchUpTests {
  @Test("the coordinator's stopWaiting and the sync's mayWrite exclude each other; one write per catch-up")
  func exclusive() {
    let abandoned = CatchUp()
    #expect(abandoned.stopWaiting())
    #expect(!abandoned.mayWrite(), "the game played on: nothing may be written")

    let writing = CatchUp()
    #expect(writing.mayWrite())
    #expect(!writing.stopWaiting(), "a write under way: its outcome must be awaited")
    writing.finish(.restore(generation: 4, reason: "test"))
    #expect(writing.outcome == .restore(generation: 4, reason: "test"))
    #expect(!writing.mayWrite(), "an outcome was given: no second write")
    writing.finish(.unchanged)
    #expect(writing.outcome == .restore(generation: 4, reason: "test"), "the first outcome counts")
    #expect(writing.wait(timeout: .zero))
  }
}

@MainActor
@Suite("The coordinator and a sync")
struct SaveSyncingTests {
  private func make() -> (CountingGame, SaveCoordinator<CountingGame>, Application, ManualClock, ScriptedSync) {
    let game = CountingGame()
    let coordinator = SaveCoordinator(
      game: game, store: SaveStore(directory: makeTemporaryDirectory()), codec: testCodec, slot: "autosave")
    let sync = ScriptedSync()
    coordinator.sync = sync
    let clock = ManualClock()
    let app = Application(delegate: coordinator, configuration: .init(clock: clock))
    return (game, coordinator, app, clock, sync)
  }

  /// Writes `state` as the slot's next generation, as a sync does after `mayWrite()`.
  private func write(_ state: TestGameState, _ coordinator: SaveCoordinator<CountingGame>) throws -> Int {
    try coordinator.store.save(state, codec: testCodec, slot: "autosave").wait().generation
  }

  @Test("launch: the game is held while the sync catches up, and what it wrote is restored before the first step")
  func launchRestoresFirst() throws {
    let (game, coordinator, app, _, sync) = make()
    var theirs = TestGameState.sample()
    theirs.score.points = 777
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    #expect(sync.catchUps.map(\.stateGeneration) == [0], "an empty slot: the game starts afresh")
    #expect(game.isPaused && coordinator.isCatchingUp, "held")
    let progress = sync.catchUps[0].progress
    #expect(progress.mayWrite())
    let generation = try write(theirs, coordinator)
    progress.finish(.restore(generation: generation, reason: "fast-forward"))
    app.update()
    #expect(!coordinator.isCatchingUp && !game.isPaused)
    #expect(game.state.score.points == 777, "restored before the first step")
    #expect(game.restores == 1)
  }

  /// The other side's newest, a save of a newer schema than this build reads.
  private let newerElsewhere = SaveFileError(
    .newerSchema, "schema version 2; this build of \(testGame.name) knows up to 1",
    context: .init(file: "revision 2 of slot 'autosave' on the server"))

  @Test(
    "issue 43 case 6: the other side's unreadable newest holds the game; start-over is refused, an answer is not asked again"
  )
  func heldByTheOtherSide() throws {
    let (game, coordinator, app, _, sync) = make()
    let mine = try write(TestGameState.sample(), coordinator)
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    sync.catchUps[0].progress.finish(unreadable: newerElsewhere)
    #expect(!sync.catchUps[0].progress.stopWaiting(), "an outcome given is taken, never played past")
    app.update()
    let failure = try #require(coordinator.restoreFailure, "held, as by an unreadable newest of its own")
    #expect(failure.reason == .newerInCloud && failure.olderGeneration == mine && failure.error == newerElsewhere)
    #expect(game.isPaused && !coordinator.isCatchingUp)
    #expect(coordinator.events.contains { if case .held(.restoreFailure, _) = $0 { true } else { false } })
    let refused = #expect(throws: SaveFileError.self) { try coordinator.resolveRestoreFailure(.startOver) }
    #expect(refused?.kind == .held && refused?.hold == .restoreFailure(newerElsewhere), "refused by the hold")
    #expect(coordinator.restoreFailure != nil, "a refused answer leaves the hold")

    // Answered: the same save elsewhere is not asked about again in this process.
    try coordinator.resolveRestoreFailure(.loadGeneration(mine))
    #expect(!game.isPaused)
    app.enterBackground()
    app.enterForeground()
    coordinator.waitForSaves()
    app.update()  // the return's catch-up begins once the background save has ended
    #expect(sync.catchUps.count == 2)
    let again = try #require(sync.catchUps.last?.progress)
    again.finish(unreadable: newerElsewhere)
    app.update()
    #expect(coordinator.restoreFailure == nil && !game.isPaused)
  }

  @Test("a hold by the other side's unreadable newest ends when a later catch-up restores a save this build reads")
  func heldByTheOtherSideUntilItMovesOn() throws {
    let (game, coordinator, app, _, sync) = make()
    _ = try write(TestGameState.sample(), coordinator)
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    sync.catchUps[0].progress.finish(unreadable: newerElsewhere)
    app.update()
    #expect(coordinator.restoreFailure?.reason == .newerInCloud)
    app.enterBackground()
    app.enterForeground()
    coordinator.waitForSaves()
    app.update()
    let next = try #require(sync.catchUps.last?.progress)
    #expect(sync.catchUps.count == 2, "a return while held catches up again")
    var theirs = TestGameState.sample()
    theirs.score.points = 4242
    #expect(next.mayWrite())
    let generation = try write(theirs, coordinator)
    next.finish(.restore(generation: generation, reason: "fast-forward"))
    app.update()
    #expect(coordinator.restoreFailure == nil, "nothing left this build cannot read")
    #expect(!game.isPaused && game.state.score.points == 4242)
  }

  @Test("a cold start over an empty slot that the sync fills records one load outcome: restored, no loadFailed")
  func coldStartOneOutcome() throws {
    let (game, coordinator, app, _, sync) = make()
    var theirs = TestGameState.sample()
    theirs.score.points = 555
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    #expect(coordinator.events == [.held(.catchingUp, for: .zero)], "no outcome while the sync may still restore")
    let progress = sync.catchUps[0].progress
    #expect(progress.mayWrite())
    progress.finish(.restore(generation: try write(theirs, coordinator), reason: "fast-forward"))
    app.update()
    #expect(game.state.score.points == 555)
    let outcomes = coordinator.events.filter { !$0.isHold }
    #expect(outcomes.count == 1, "\(coordinator.events)")
    guard case .restored? = outcomes.first else {
      Issue.record("the first event is not the restore: \(coordinator.events)")
      return
    }
  }

  @Test("a cold start over an empty slot that the sync leaves empty records one loadFailed, once it is over")
  func coldStartNothingAnywhere() {
    let (_, coordinator, app, _, sync) = make()
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    sync.catchUps[0].progress.finish(.unchanged)
    app.update()
    let outcomes = coordinator.events.filter { !$0.isHold }
    #expect(outcomes.count == 1, "\(coordinator.events)")
    guard case .loadFailed(let error)? = outcomes.first else {
      Issue.record("\(coordinator.events)")
      return
    }
    #expect(error.kind == .notFound)
  }

  @Test("out of patience before any write: the game plays on, and the sync may no longer write")
  func patience() {
    let (game, coordinator, app, clock, sync) = make()
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    clock.advance(by: coordinator.syncPatience)
    app.update()
    #expect(!coordinator.isCatchingUp && !game.isPaused)
    #expect(!sync.catchUps[0].progress.mayWrite(), "a late answer never writes under a game that played on")
  }

  @Test("a save during the hold waits for a write under way, restores it, then saves that state")
  func saveDuringHold() throws {
    let (game, coordinator, app, _, sync) = make()
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    let progress = sync.catchUps[0].progress
    #expect(progress.mayWrite())  // the sync began to write…
    var theirs = TestGameState.sample()
    theirs.score.points = 555
    let generation = try write(theirs, coordinator)
    progress.finish(.restore(generation: generation, reason: "fast-forward"))  // …and finished
    app.enterBackground()  // the background save settles the catch-up first
    while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
    coordinator.waitForSaves()
    #expect(game.state.score.points == 555)
    let saved = try coordinator.store.load(codec: testCodec, slot: "autosave")
    #expect(saved.generation == generation, "the background save holds the same state: nothing new is written")
    #expect(saved.state.score.points == 555, "the save is of the state the sync wrote, not of the one before")
    guard case .saved(.background, let receipt, _)? = coordinator.events.last(where: { $0.isSave }) else {
      Issue.record("no background save: \(coordinator.events)")
      return
    }
    #expect(receipt.outcome == .unchanged && receipt.generation == generation)
  }

  @Test("a save while the sync's write is under way is refused at once, and its error carries the hold")
  func saveRefusedWhileWriting() throws {
    let (game, coordinator, app, _, sync) = make()
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    let progress = sync.catchUps[0].progress
    #expect(progress.mayWrite())  // the sync began to write, and has not finished
    guard case .failure(let refused) = coordinator.saveNow().waitForResult() else {
      Issue.record("a save was made over the sync's write")
      return
    }
    #expect(refused.kind == .held && refused.hold == .catchingUp, "\(refused)")
    #expect(game.isPaused && coordinator.isCatchingUp, "still held: the write goes on")
    let failed = coordinator.events.contains { event in
      if case .saveFailed(.manual, let error, _) = event { error.hold == .catchingUp } else { false }
    }
    #expect(failed, "the failed save is told with its hold: \(coordinator.events)")
    progress.finish(.unchanged)
    app.update()
    #expect(!coordinator.isCatchingUp)
  }

  @Test("a save during the hold before any write abandons the catch-up: nothing lands after it")
  func saveAbandons() throws {
    let (_, coordinator, app, _, sync) = make()
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    _ = coordinator.saveNow().waitForResult()
    #expect(!coordinator.isCatchingUp)
    #expect(!sync.catchUps[0].progress.mayWrite())
    #expect(sync.started == [.manual])
  }

  @Test("a return after a background save that failed lets only waiting uploads go: no catch-up over memory")
  func returnWithoutAGeneration() {
    let disk = FaultInjectingFileSystem()
    let game = CountingGame()
    let coordinator = SaveCoordinator(
      game: game, store: SaveStore(directory: makeTemporaryDirectory(), fileSystem: disk), codec: testCodec,
      slot: "autosave")
    let sync = ScriptedSync()
    coordinator.sync = sync
    let app = Application(delegate: coordinator)
    app.launch()
    #expect(sync.resumed == 1, "a new game: the last one's waiting uploads go")
    for _ in 0..<5 {
      game.step()
      coordinator.didStep(frame: Int64(game.state.level.progress))
    }
    disk.fail(.write, times: 2, with: .noSpace)
    app.enterBackground()
    while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
    app.enterForeground()  // the save failed: memory is newer than every generation
    #expect(coordinator.events.contains { if case .keptMemory = $0 { true } else { false } })
    #expect(sync.catchUps.isEmpty, "nothing may be written under unsaved progress")
    #expect(sync.resumed == 2)
  }
}

@MainActor
@Suite("A new game or a start-over is a history of its own")
struct NewHistoryTests {
  /// A store whose slot holds `states` (saved by `codec`, this build's by default), and a
  /// coordinator with a scripted sync, launched (restoring the slot when `restoring`).
  private func launched(
    _ states: [(TestGameState, SaveCodec<TestGameState>)], restoring: Bool
  ) throws -> (coordinator: SaveCoordinator<CountingGame>, sync: ScriptedSync, app: Application) {
    let store = SaveStore(directory: makeTemporaryDirectory())
    for (state, codec) in states { _ = try store.save(state, codec: codec, slot: "autosave").wait() }
    let coordinator = SaveCoordinator(game: CountingGame(), store: store, codec: testCodec, slot: "autosave")
    let sync = ScriptedSync()
    coordinator.sync = sync
    let app = Application(delegate: coordinator)
    app.launch(options: restoring ? LaunchOptions(restoreSlot: "autosave") : LaunchOptions())
    return (coordinator, sync, app)
  }

  @Test("a new game over a slot with saves: the old game's waiting uploads go first, then the new history begins")
  func newGame() throws {
    let (_, sync, _) = try launched([(TestGameState(), testCodec)], restoring: false)
    #expect(sync.told == ["resume", "new history"])
  }

  @Test("restoring the slot's newest generation continues its history")
  func restoreNewest() throws {
    let (coordinator, sync, _) = try launched(
      [(TestGameState(), testCodec), (TestGameState.sample(), testCodec)], restoring: true)
    #expect(coordinator.events.contains { if case .restored(2, _, _, _) = $0 { true } else { false } })
    #expect(sync.told.filter { $0 != "resume" }.isEmpty)
  }

  @Test(
    "a start-over after a failed restore begins a new history; playing on from an older generation is a branch from it")
  func startOver() throws {
    // A newer build's save on top: this build's restore fails over it, and holds the game.
    let newer = SaveCodec<TestGameState>(
      game: GameIdentity(name: testGame.name, build: "next", schemaVersion: testGame.schemaVersion + 1))
    for choice in ["start over", "older"] {
      let (coordinator, sync, app) = try launched(
        [(TestGameState(), testCodec), (TestGameState.sample(), newer)], restoring: true)
      let failure = try #require(coordinator.restoreFailure)
      #expect(!sync.told.contains("new history"))
      try coordinator.resolveRestoreFailure(
        choice == "older" ? .loadGeneration(try #require(failure.olderGeneration)) : .startOver)
      let told = sync.told.filter { $0 != "resume" }
      #expect(told == (choice == "older" ? ["older 1"] : ["new history"]), "\(choice): \(sync.told)")
      #expect(app.state == .active)
    }
  }
}

extension SaveEvent {
  /// True for a save that ended, written or not.
  fileprivate var isSave: Bool {
    if case .saved = self { return true }
    return false
  }
}
