// The tank game as version 1.0 shipped it (schema 1), kept to write a save from that build:
// `--write-v1` makes the saves a 1.0 player would bring to 1.1.
import Stasis

enum SchemaV1 {
  struct Tank: Codable {
    var x = 0.0
    var y = 0.0
    var heading = 0.0
    var health = 100
  }
  struct Settings: Codable {
    var musicVolume = 0.3
    var difficulty = "hard"
  }
  struct State: Codable, Sendable {
    var frame: Int64 = 600
    var tank = Tank(x: 3, y: 4, heading: 1, health: 80)
    var bullets: [Bullet] = [Bullet(x: 1, y: 2, dx: 0.5, dy: 0.5, age: 9)]
    var inventory: [String: Int] = ["shells": 12]
    var settings = Settings()
    var random: UInt64 = 0x2545_F491_4F6C_DD1D
  }

  /// Writes the save a 1.0 player has in `slot-1` of `folder`.
  static func writeSave(in folder: String) {
    let codec = SaveCodec<State>(game: GameIdentity(name: "tanks", build: "1.0", schemaVersion: 1))
    let result = SaveStore(directory: folder).save(State(), codec: codec, slot: "slot-1", summary: SaveSummary())
      .waitForResult()
    print((try? result.get()).map { _ in "wrote a schema-1 save" } ?? "failed: \(result)")
  }
}
