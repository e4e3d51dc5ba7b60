import ArgumentParser
import DemoGame
import Foundation
import Stasis

/// `stasis-demo`: the demo game in a window, or headless for tests and scripts.
@main
struct StasisDemo: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stasis-demo",
    abstract: "The Stasis demo game: play, go to the background, come back exactly where you were.",
    discussion: """
      Example (headless, a background round trip at step 60, traced):
        stasis-demo --headless --frames 120 --background-at 60 --foreground-at 60 --trace
      """
  )

  @Flag(help: "Run without a window: a scripted platform drives the lifecycle.")
  var headless = false

  @Option(help: "Stop after this step, counted from the level's start.")
  var frames: Int = 600

  @Option(name: .customLong("background-at"), help: "At this step: resign active, enter the background, save.")
  var backgroundAt: Int?

  @Option(name: .customLong("foreground-at"), help: "At this step (>= --background-at): come back and resume.")
  var foregroundAt: Int?

  @Option(help: "The save folder.")
  var saves: String = "Saves"

  @Flag(help: "Print one line per lifecycle callback and background-task event.")
  var trace = false

  func validate() throws {
    guard frames >= 0 else { throw ValidationError("--frames must be 0 or more") }
    if let foregroundAt {
      guard let backgroundAt else { throw ValidationError("--foreground-at needs --background-at") }
      guard foregroundAt >= backgroundAt else {
        throw ValidationError(
          "--foreground-at (\(foregroundAt)) must not come before --background-at (\(backgroundAt))")
      }
    }
  }

  func run() throws {
    if !headless {
      // The SDL window is not built yet; say so instead of pretending.
      FileHandle.standardError.write(Data("stasis-demo: no window yet; running the headless session\n".utf8))
    }
    try MainActor.assumeIsolated {
      try HeadlessRunner(options: self).run()
    }
  }
}

/// The headless session: a scripted platform that launches, sends the game away and
/// brings it back on the given steps.
@MainActor
struct HeadlessRunner {
  let options: StasisDemo

  func run() throws {
    let game = GameDelegate()
    let app = Application(delegate: game)
    if options.trace { installTrace(on: app) }

    app.launch()
    var wentAway = false
    var cameBack = false
    while game.engine.frame < options.frames {
      let frame = game.engine.frame
      if frame == options.backgroundAt, !wentAway {
        wentAway = true
        app.enterBackground()
        while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
      }
      if frame == options.foregroundAt, wentAway, !cameBack {
        cameBack = true
        app.enterForeground()
      }
      if app.state.isInBackground { break }  // sent away for good: nothing more to step
      game.step(app)
      app.update()
    }
    print("frame: \(game.engine.frame)")
  }

  private func installTrace(on app: Application) {
    for event in LifecycleEvent.allCases {
      app.addObserver(for: event) { _ in print("lifecycle: \(event.rawValue)") }
    }
    app.addBackgroundTaskObserver { event in print(event.description) }
    app.addEnvironmentObserver { _, change in print("environment: \(change.kind) \(change.value)") }
    app.addEpisodeObserver { episode in print("episode: \(episode.description)") }
  }
}
