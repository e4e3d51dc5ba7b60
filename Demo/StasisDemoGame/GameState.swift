import Stasis

/// The score: points, the combo multiplier and its timer, the high score.
public struct ScoreState: Codable, Equatable, Sendable {
  public var points: Int64 = 0
  public var highScore: Int64 = 0
  /// 1...5: each pickup within `comboWindow` of the last raises it; it decays by one a second after.
  public var multiplier: Int = 1
  /// Seconds until the multiplier decays.
  public var comboTimer: Float = 0
  /// Collectibles picked up in this run.
  public var collected: Int = 0

  public static let comboWindow: Float = 2
  public static let maxMultiplier = 5
}

/// Where the player has got to in the level.
public struct LevelProgress: Codable, Equatable, Sendable {
  /// Which level file (`levelN.json`).
  public var index: Int
  /// Steps since the run started at its first level: `--frames` counts these.
  public var runFrame: Int64 = 0
  /// Steps since this level started: its timer.
  public var levelFrame: Int64 = 0
  /// The last checkpoint passed, or -1.
  public var checkpoint: Int = -1
  /// Where the player comes back after a fall.
  public var respawn: Vector
  /// One flag per collectible of the level.
  public var collected: [Bool]
  /// Levels finished in this run.
  public var levelsFinished: Int = 0

  /// The level timer, seconds.
  public var timer: Double { Double(levelFrame) / 60 }
}

/// The camera: everything it carries from frame to frame, so the first picture after a
/// restore is the picture before it.
public struct CameraState: Codable, Equatable, Sendable {
  /// Centre of the view, metres.
  public var position: Vector
  /// The smoothing spring's velocity, metres per second.
  public var velocity: Vector = .zero
  /// 1 shows 16 × 9 metres.
  public var zoom: Float
  /// Where it is heading: the player plus the look-ahead.
  public var target: Vector
}

/// The autopilot's memory: a seeded generator and what it noticed.
public struct AutopilotState: Codable, Equatable, Sendable {
  /// xorshift64* state.
  public var random: UInt64
  /// Steps without horizontal progress.
  public var stuckFrames: Int = 0
  /// The player's x at the previous step.
  public var lastX: Float = 0
  /// Steps until it may jump again.
  public var jumpCooldown: Int = 0
}

/// The whole game state: plain values, so a snapshot is a copy. Each field is a section of
/// the save file (`autopilot`, `camera`, `level`, `physics`, `score`, and `canvas` on a level
/// that declares one).
public struct GameState: Codable, Equatable, Sendable {
  public var score: ScoreState
  public var level: LevelProgress
  public var camera: CameraState
  public var physics: PhysicsState
  public var autopilot: AutopilotState
  /// What the balls painted, on a level that declares a canvas; nil on every other level,
  /// where it is not in the save at all (the file and the digest are what they were before
  /// canvases existed).
  public var canvas: PaintCanvas? = nil

  /// The levels of the campaign: a level after them (the canvas level) is outside it.
  public static let campaignLevels = 3

  /// The summary a slot picker shows: the demo's own fields, play time, and progress as the
  /// share of the three campaign levels behind the player (on a level outside the campaign,
  /// the levels finished in the run).
  public func summary() throws(SaveFileError) -> SaveSummary {
    let behind = level.index <= Self.campaignLevels ? level.index - 1 : 0
    let campaign = Double(Self.campaignLevels)
    return try SaveSummary(
      DemoSummary(level: level.index, score: score.points), frame: level.runFrame,
      playTime: Double(level.runFrame) / 60, progress: min(1, Double(max(behind, level.levelsFinished)) / campaign))
  }

  /// SHA-256 of the canonical encoding: the same state always gives the same digest.
  public var digest: String { (try? StateDigest.sha256(self)) ?? "unencodable" }
}

/// The demo's own part of a save's summary: what its slot picker shows besides play time.
public struct DemoSummary: Codable, Equatable, Sendable {
  /// The level being played.
  public var level: Int
  /// The score.
  public var score: Int64

  /// Creates a summary.
  public init(level: Int, score: Int64) {
    self.level = level
    self.score = score
  }
}

/// The save format's view of the demo: its name, build and schema.
public enum DemoSaveFormat {
  public static let game = GameIdentity(name: "stasis-demo", build: "0.1", schemaVersion: 1)
  public static let codec = SaveCodec<GameState>(game: game)
}
