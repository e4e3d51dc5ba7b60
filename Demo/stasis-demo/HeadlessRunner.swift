import Foundation
import Logging
import Stasis
import StasisDemoGame

/// The headless session: a scripted platform that launches, sends the game away and brings
/// it back on the given steps, then prints what happened.
@MainActor
struct HeadlessRunner {
  let options: StasisDemo

  private func fail(_ message: String) -> Int32 {
    FileHandle.standardError.write(Data("stasis-demo: \(message)\n".utf8))
    return 1
  }

  func run() -> Int32 {
    guard let library = options.levels.map(LevelLibrary.init(folder:)) ?? LevelLibrary.locate() else {
      return fail("cannot find Assets/levels (set --levels or STASIS_ASSETS)")
    }
    let fileSystem: any FileSystem =
      options.ioThrottle.map { ThrottledFileSystem(bytesPerSecond: $0) } ?? PosixFileSystem()
    let store = SaveStore(directory: options.saves, fileSystem: fileSystem, device: options.device)
    var engine: Engine
    do {
      engine = try Engine(library: library, level: options.level, seed: options.seed)
    } catch {
      return fail("\(error)")
    }
    engine.desyncAt = options.desyncAt
    // Headless, the run's own lines are its output: a hold is one of --trace's events, and a
    // failed --resume is the one line below, so the coordinator logs only warnings here.
    var logger = Logger(label: "stasis.demo")
    logger.logLevel = options.trace ? .info : .warning
    let game = Game(engine: engine, store: store, slot: options.saveSlot, logger: logger)
    game.coordinator.autosaveInterval = Int64((options.autosave * 60).rounded())
    game.autopilot = options.autopilot  // --no-autopilot: the player stands still
    let app = Application(
      delegate: game.coordinator,
      configuration: .init(backgroundBudget: .milliseconds(Int64((options.budget * 1000).rounded()))))
    if options.trace { installTrace(app: app, game: game) }
    let trace = options.trace
    let cloud = DemoCloud.attach(options, to: game) { line in if trace { traceLine(line) } }

    app.launch(options: options.resume ? LaunchOptions(restoreSlot: options.saveSlot) : .none)
    game.coordinator.waitForCatchUp()  // the cloud's head, restored before the first step
    if options.resume, !game.coordinator.events.contains(where: \.isRestore),
      let error = game.coordinator.events.lazy.compactMap(\.loadError).last
    {
      return fail("cannot resume slot '\(options.slot)': \(error)")
    }
    // Every run is recorded, one replay per slot; a --resume goes on with it where it ends.
    if !options.noReplay {
      game.recordReplay(
        named: options.slot, seed: options.seed, continuing: options.resume, digestInterval: options.replayDigestEvery,
        application: app)
    }

    var wentAway = false
    var cameBack = false
    var ring: [GameState] = []
    // The platform's frames go on while the game is away: `--foreground-at G` comes G − F of
    // them after `--background-at F`, with no engine step in between.
    var awayFrames: Int64 = 0
    while game.engine.state.level.runFrame < options.frames {
      let frame = game.engine.state.level.runFrame
      if frame == options.backgroundAt, !wentAway {
        wentAway = true
        app.enterBackground()
        while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
        game.coordinator.waitForSaves()
        if options.terminateInBackground {
          // The OS kills a suspended app: no willTerminate, no more steps.
          return finish(app: app, game: game, cloud: cloud)
        }
      }
      if wentAway, !cameBack, let foregroundAt = options.foregroundAt, let backgroundAt = options.backgroundAt {
        if backgroundAt + awayFrames >= foregroundAt {
          cameBack = true
          app.enterForeground()
          game.coordinator.waitForCatchUp()
        } else {
          awayFrames += 1
          continue
        }
      }
      if app.state.isInBackground { break }  // sent away for good: nothing more to step

      if options.syncTest != nil { ring.append(game.engine.snapshot()) }
      game.tick(app)
      app.update()
      if let depth = options.syncTest {
        if ring.count > depth { ring.removeFirst() }
        if let mismatch = game.replayMatches(from: ring[0], steps: ring.count) {
          return fail("sync test diverged at step \(game.engine.state.level.runFrame): \(mismatch)")
        }
      }
    }
    if cloud != nil {
      // With a cloud the end of the run is a quit: the last save goes up inside the budget.
      app.terminate()
      while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
    }
    game.coordinator.waitForSaves()
    if let replay = game.replay {
      replay.flush(keyframing: game.engine.state)
      do {
        try replay.waitUntilWritten()
      } catch {
        FileHandle.standardError.write(Data("stasis-demo: the replay was not written: \(error)\n".utf8))
      }
    }
    return finish(app: app, game: game, cloud: cloud)
  }

  private func finish(app: Application, game: Game, cloud: DemoCloud? = nil) -> Int32 {
    RunReport(options: options).finish(app: app, game: game, cloud: cloud?.json)
  }

  private func installTrace(app: Application, game: Game) {
    RunReport(options: options).installTrace(app: app, game: game)
  }
}
