// A headless tank game adopting Stasis: plays, goes to the background and back, quits, and
// on `--resume` continues exactly where the last session stopped.
//
//   stasis-example-tanks --saves DIR [--frames N] [--background-at F] [--resume [--start-over|--play-older]]
//                        [--write-v1]
import Foundation
import Stasis

let arguments = CommandLine.arguments.dropFirst()
func option(_ name: String) -> String? {
  guard let index = arguments.firstIndex(of: name), arguments.index(after: index) < arguments.endIndex else {
    return nil
  }
  return arguments[arguments.index(after: index)]
}
let saves = option("--saves") ?? "Saves"
let frames = Int64(option("--frames") ?? "") ?? 600
let backgroundAt = Int64(option("--background-at") ?? "")

MainActor.assumeIsolated {
  if arguments.contains("--write-v1") { return SchemaV1.writeSave(in: saves) }
  let game = TanksGame()
  let coordinator = SaveCoordinator(
    game: game, store: SaveStore(directory: saves), codec: tanksCodec, slot: "slot-1")
  coordinator.autosaveInterval = 300
  coordinator.onEvent = { print($0) }
  let app = Application(delegate: coordinator)
  app.launch(options: arguments.contains("--resume") ? LaunchOptions(restoreSlot: "slot-1") : .none)
  if let failure = coordinator.restoreFailure {  // the save cannot be read: say so, let the player choose
    print("cannot restore: \(failure.error)")
    if arguments.contains("--start-over") {
      try? coordinator.resolveRestoreFailure(.startOver)  // the unreadable save stays, kept until discarded
    } else if let older = failure.olderGeneration, arguments.contains("--play-older") {
      try? coordinator.resolveRestoreFailure(.loadGeneration(older))
    } else {
      exit(1)  // nothing saved: the next build with the migration finds the save as it was
    }
  }

  while game.state.frame < frames {
    if game.state.frame == backgroundAt, app.state == .active {  // headless: the game sends itself away and back
      app.enterBackground()
      while app.hasBackgroundEpisode { app.waitForBackgroundWork() }  // the save there is durable
      app.enterForeground()
    }
    if !game.isPaused {  // paused whenever the app is not active
      game.step()
      coordinator.didStep(frame: game.state.frame)
    }
    app.update()
  }
  app.quit()
  coordinator.waitForSaves()
  print("frame \(game.state.frame), \(game.state.bullets.count) bullets, music \(game.state.settings.music)")
  print("digest: \(game.digest)")
}
