import DemoGame
import Foundation
import Stasis

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
    let store = SaveStore(directory: options.saves, fileSystem: fileSystem)
    let engine: Engine
    do {
      engine = try Engine(library: library, level: options.level, seed: options.seed)
    } catch {
      return fail("\(error)")
    }
    let game = Game(engine: engine, store: store, slot: options.slot)
    game.autosaveInterval = Int64((options.autosave * 60).rounded())
    let app = Application(
      delegate: game, configuration: .init(backgroundBudget: .milliseconds(Int64((options.budget * 1000).rounded()))))
    if options.trace { installTrace(app: app, game: game) }

    app.launch(options: options.resume ? LaunchOptions(restoreSlot: options.slot) : .none)
    if options.resume, case .loadFailed(let error)? = game.events.last {
      return fail("cannot resume slot '\(options.slot)': \(error)")
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
        game.waitForSaves()
        if options.terminateInBackground {
          // The OS kills a suspended app: no willTerminate, no more steps.
          return finish(app: app, game: game)
        }
      }
      if wentAway, !cameBack, let foregroundAt = options.foregroundAt, let backgroundAt = options.backgroundAt {
        if backgroundAt + awayFrames >= foregroundAt {
          cameBack = true
          app.enterForeground()
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
    game.waitForSaves()
    return finish(app: app, game: game)
  }

  private func finish(app: Application, game: Game) -> Int32 {
    let state = game.engine.state
    let digest = state.digest
    let failed = game.events.contains {
      switch $0 {
      case .saveFailed, .loadFailed: return true
      default: return false
      }
    }
    if options.json {
      print(summaryJSON(app: app, game: game, digest: digest))
    } else if !options.printDigest || options.trace {
      print(
        "frame \(state.level.runFrame), level \(state.level.index), score \(state.score.points), "
          + "\(game.events.filter { if case .saved = $0 { return true } else { return false } }.count) saves")
    }
    if options.printDigest { print("digest: \(digest)") }
    return failed ? 1 : 0
  }

  private func summaryJSON(app: Application, game: Game, digest: String) -> String {
    let state = game.engine.state
    var saves: [[String: Any]] = []
    var failures: [[String: Any]] = []
    var restoredFrom: Any = NSNull()
    for event in game.events {
      switch event {
      case .saved(let kind, let generation, let frame, let bytes, let ms):
        saves.append([
          "kind": kind.rawValue, "generation": generation, "frame": frame, "bytes": bytes, "milliseconds": ms,
        ])
      case .saveFailed(let kind, let frame, let error):
        failures.append([
          "kind": kind.rawValue, "frame": frame, "error": error.kind.rawValue, "message": error.description,
        ])
      case .restored(let generation, let frame, let skipped):
        restoredFrom = ["generation": generation, "frame": frame, "skipped": skipped] as [String: Any]
      default: break
      }
    }
    let episodes: [[String: Any]] = app.backgroundEpisodes.map { episode in
      var entry: [String: Any] = [
        "reason": episode.reason.rawValue, "durationMs": episode.duration.inMilliseconds,
        "budgetLeftMs": episode.budgetLeft.inMilliseconds, "outcome": episode.outcome.name,
      ]
      if case .expired(let cut) = episode.outcome { entry["cutTasks"] = cut }
      return entry
    }
    let summary: [String: Any] = [
      "frame": state.level.runFrame, "level": state.level.index, "score": state.score.points,
      "highScore": state.score.highScore, "multiplier": state.score.multiplier,
      "levelsFinished": state.level.levelsFinished, "digest": digest, "saves": saves, "saveFailures": failures,
      "backgroundEpisodes": episodes, "restoredFrom": restoredFrom, "events": game.events.map(\.description),
      "slot": options.slot, "bodies": state.physics.bodies.count,
      "bodiesAsleep": state.physics.bodies.filter(\.isAsleep).count,
    ]
    let data = (try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])) ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self)
  }

  private func installTrace(app: Application, game: Game) {
    for event in LifecycleEvent.allCases {
      app.addObserver(for: event) { _ in print("lifecycle: \(event.rawValue)") }
    }
    app.addBackgroundTaskObserver { event in print(event.description) }
    app.addEnvironmentObserver { _, change in print("environment: \(change.kind) \(change.value)") }
    app.addEpisodeObserver { episode in print("episode: \(episode.description)") }
    game.onEvent = { event in print(event.description) }
  }
}
