import Stasis
import StasisReplay

/// One recorded step: the keys the engine stepped with, and whether the autopilot chose them
/// (its generator is part of the state: a replay advances it as the run did).
public struct ReplayInput: BulkStorable, Equatable {
  public var left = false
  public var right = false
  public var jump = false
  public var autopilot = false
  /// Whether the regenerating power-up (a wall-clock timer) was applied before this step: it
  /// changes the score, so a replay applies it where the run did.
  public var powerUp = false

  /// No keys, no autopilot.
  public init() {}

  /// The step's keys, chosen by the autopilot or the player, and whether a power-up came first.
  public init(_ input: Input, autopilot: Bool, powerUp: Bool = false) {
    left = input.left
    right = input.right
    jump = input.jump
    self.autopilot = autopilot
    self.powerUp = powerUp
  }

  /// The keys.
  public var input: Input { Input(left: left, right: right, jump: jump) }

  /// Five bytes a step.
  public static let bulkLayout = BulkLayout(
    of: ReplayInput.self,
    [
      .field("left", \.left), .field("right", \.right), .field("jump", \.jump), .field("autopilot", \.autopilot),
      .field("powerUp", \.powerUp),
    ])
}

extension GameState {
  /// What the demo's replays hash: everything the next step reads, the physics' arrays as raw
  /// bytes (no padding in `Body`, `CachedImpulse` or a canvas cell).
  public static let replayScope = DigestScope<GameState>("demo state, v1") { state, hasher in
    let score = state.score
    hasher.combine(score.points)
    hasher.combine(score.highScore)
    hasher.combine(Int64(score.multiplier))
    hasher.combine(score.comboTimer)
    hasher.combine(Int64(score.collected))
    let level = state.level
    hasher.combine(Int64(level.index))
    hasher.combine(level.runFrame)
    hasher.combine(level.levelFrame)
    hasher.combine(Int64(level.checkpoint))
    hasher.combine(level.respawn.x)
    hasher.combine(level.respawn.y)
    hasher.combine(contentsOf: level.collected)
    hasher.combine(Int64(level.levelsFinished))
    let camera = state.camera
    for value in [
      camera.position.x, camera.position.y, camera.velocity.x, camera.velocity.y, camera.zoom, camera.target.x,
      camera.target.y,
    ] { hasher.combine(value) }
    hasher.combine(state.physics.gravity.x)
    hasher.combine(state.physics.gravity.y)
    hasher.combine(contentsOf: state.physics.bodies)
    hasher.combine(contentsOf: state.physics.contactCache)
    let pilot = state.autopilot
    hasher.combine(pilot.random)
    hasher.combine(Int64(pilot.stuckFrames))
    hasher.combine(pilot.lastX)
    hasher.combine(Int64(pilot.jumpCooldown))
    if let canvas = state.canvas {
      hasher.combine(Int64(canvas.columns))
      hasher.combine(Int64(canvas.rows))
      hasher.combine(count: canvas.tiles.count)
      for tile in canvas.tiles { hasher.combine(contentsOf: tile) }
    } else {
      hasher.combine(count: -1)
    }
  }
}

/// The demo's step for a replay's verifier: an engine kept beside the replayed state (its level's
/// definition and its scratch), restored only when the state it is handed is not the one it
/// reached (the first step, a jump to a keyframe).
public final class ReplayStepper {
  private var engine: Engine
  private var reached: Int64?

  /// A stepper over `library`'s levels; `desyncAt` plants a one-ulp drift at that tick
  /// (``Engine/desyncAt``).
  public init(library: LevelLibrary, desyncAt: Int64? = nil) throws(LevelError) {
    engine = try Engine(library: library, level: 1, seed: 1)
    engine.desyncAt = desyncAt
  }

  /// Steps `engine` with `input` as the game did (the autopilot's generator advanced when it
  /// chose the keys): a replay's step on an engine the caller keeps, as a window's playback does.
  public static func apply(_ input: ReplayInput, to engine: inout Engine) {
    engine.isPaused = false
    if input.autopilot { _ = engine.autopilotInput() }
    if input.powerUp { engine.applyPowerUp() }
    engine.step(input.input)
  }

  /// Steps `state` with `input` as the game did.
  public func step(_ state: inout GameState, _ input: ReplayInput) {
    if reached != state.level.runFrame || engine.state.level.runFrame != state.level.runFrame {
      guard (try? engine.restore(state)) != nil else { return }  // the verifier reports the state as it is
    }
    Self.apply(input, to: &engine)
    state = engine.state
    reached = state.level.runFrame
  }
}
