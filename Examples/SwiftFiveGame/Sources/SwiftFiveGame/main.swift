// A game in Swift 5 language mode on Stasis: main.swift's top-level code runs on the main thread,
// but Swift 5 mode does not put it on the main actor, so the loop runs inside
// MainActor.assumeIsolated, where every @MainActor call of Stasis compiles.
import Foundation
import Stasis
import StasisSDL

struct Ship: Codable, Sendable {
  var x = 0.0
  var score = 0
  var frame: Int64 = 0
}

@MainActor final class Asteroids: SaveableGame {
  var state = Ship()
  var isPaused = false
  func snapshot() -> Ship { state }
  func restore(_ saved: Ship) throws { state = saved }
  func summary(of state: Ship) throws -> SaveSummary {  // what a load menu shows
    SaveSummary(frame: state.frame, playTime: Double(state.frame) / 60)
  }
  func step() {
    state.frame += 1
    state.x += 0.5
    state.score += 10
  }
}

let saves = CommandLine.arguments.dropFirst().first ?? "Saves"
var window = ScriptedWindow()  // the game's own SDL window (here a headless stand-in)

MainActor.assumeIsolated {  // main.swift runs on the main thread; Swift 5 mode must be told
  let game = Asteroids()
  let codec = SaveCodec<Ship>(game: GameIdentity(name: "asteroids", build: "1.0"))
  let coordinator = SaveCoordinator(game: game, store: SaveStore(directory: saves), codec: codec, slot: "autosave")
  coordinator.autosaveInterval = 300
  coordinator.onEvent = { print($0) }
  let app = Application(delegate: coordinator)
  let watch = LifecycleEventWatch { transition in  // SDL_APP_* events, from the process's one libSDL2
    MainActor.assumeIsolated { _ = app.apply(transition) }
  }
  app.launch(options: LaunchOptions(restoreSlot: "autosave"))  // continues the newest save that loads
  var running = true
  while running {
    while let event = window.poll() {  // as SDL_PollEvent: the binding's own event, by SDL's numbers
      guard
        let transition = lifecycleTransitionFromQueue(
          sdlEventType: event.type, windowEvent: event.window.event, data1: event.window.data1,
          data2: event.window.data2)
      else { continue }
      if transition == .terminate { running = false } else { app.apply(transition) }
    }
    if !game.isPaused {
      game.step()
      coordinator.didStep(frame: game.state.frame)
    }
    app.update()
  }
  app.quit()  // saved once more, under the budget
  watch.remove()
  print("frame \(game.state.frame), score \(game.state.score)")
}
