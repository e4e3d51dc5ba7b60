// The README's quick start, compiled (ReadmeTests checks the README's block is here, line for
// line): a game's state, the game, and its loop handed to the save coordinator.
import Stasis

struct Hero: Codable, Sendable { var x = 0.0, coins = 0 }  // the state: plain values, nothing about saving

@MainActor final class HeroGame: SaveableGame {
  var state = Hero()
  var isPaused = false  // the coordinator pauses the game while it is away
  func snapshot() -> Hero { state }  // a value copy, on the main thread
  func restore(_ saved: Hero) throws { state = saved }
  func step() { state.x += 0.1 }
}

@MainActor func play(in window: some GameWindow) -> BackgroundEpisode? {
  let game = HeroGame()
  let codec = SaveCodec<Hero>(game: GameIdentity(name: "hero", build: "1.0"))
  let store = SaveStore(directory: SaveStore.defaultDirectory(game: "hero"))  // ~/.local/share/hero/saves
  let coordinator = SaveCoordinator(game: game, store: store, codec: codec, slot: "autosave")
  coordinator.autosaveInterval = 600  // steps; only the snapshot is taken on the main thread
  let app = Application(delegate: coordinator)
  app.launch(options: LaunchOptions(restoreSlot: "autosave"))  // continues the newest save that loads
  var frame: Int64 = 0
  while true {
    switch window.poll() {
    case .minimized: app.enterBackground()  // paused, and saved inside the 10-second budget
    case .restored: app.enterForeground()  // back where it was: restored, or kept in memory
    case .closed: return app.quit()  // saved once more under the budget; the episode says how it went
    case .nothing: break
    }
    if !game.isPaused {
      frame += 1
      game.step()
      coordinator.didStep(frame: frame)
    }
    app.update()  // the one delivery point: saves that ended, cloud, settings, timers, the budget
  }
}

/// What the quick start's window tells the loop: a stand-in for the platform layer, which in a
/// real game is SDL's window events (`StasisSDL`) or the platform's own.
enum WindowEvent { case minimized, restored, closed, nothing }

@MainActor protocol GameWindow { func poll() -> WindowEvent }
