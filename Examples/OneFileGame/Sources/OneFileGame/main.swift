// A one-file game: its state, saved durably and loaded back.
import Foundation
import Stasis

struct Player: Codable, Sendable, Equatable {
  var name = "ada"
  var x = 0.0
  var y = 0.0
}

struct GameState: Codable, Sendable, Equatable {
  var player = Player()
  var score: Int64 = 0
  var inventory: [String: Int] = [:]
}

let folder = CommandLine.arguments.dropFirst().first ?? "Saves"
let store = SaveStore(directory: folder)
let codec = SaveCodec<GameState>(game: GameIdentity(name: "one-file-game", build: "1.0"))

var state = GameState()
state.player.x = 12.5
state.score = 1234
state.inventory = ["potion": 3, "key": 1]
_ = try store.save(state, codec: codec, slot: "autosave").wait()
let loaded = try store.load(codec: codec, slot: "autosave")
guard loaded.state == state else {
  print("the loaded state differs from the saved one")
  exit(1)
}
print("saved and loaded generation \(loaded.generation): score \(loaded.state.score)")
