// The tank game's state: plain values, nothing about saving. Schema 2: `Settings.music`
// was called `musicVolume` in schema 1, and `Tank.armor` is new.

/// A bullet in flight: a plain struct, so thousands of them move as raw bytes.
struct Bullet: Codable, Sendable, Equatable {
  var x: Float = 0
  var y: Float = 0
  var dx: Float = 0
  var dy: Float = 0
  var age: UInt16 = 0
}

/// The player's tank.
struct Tank: Codable, Equatable {
  var x = 0.0
  var y = 0.0
  var heading = 0.0
  var health = 100
  var armor = 0
}

/// The options screen.
struct Settings: Codable, Equatable {
  var music = 0.7
  var difficulty = "normal"
}

/// Everything the game needs to continue exactly where it stopped.
struct TanksState: Codable, Equatable, Sendable {
  var frame: Int64 = 0
  var tank = Tank()
  var bullets: [Bullet] = []
  var inventory: [String: Int] = ["shells": 40, "mines": 3]
  var settings = Settings()
  var random: UInt64 = 0x2545_F491_4F6C_DD1D
}

/// What the tank game's load menu shows for a save, besides play time: stored in the save's
/// header, so the menu reads it without decoding the bullets.
struct TanksSummary: Codable, Equatable {
  var health: Int
  var shells: Int

  init(_ state: TanksState) {
    health = state.tank.health
    shells = state.inventory["shells"] ?? 0
  }
}
