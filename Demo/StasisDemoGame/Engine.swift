import Stasis

/// One step's input: what the keyboard or the autopilot asks for.
public struct Input: Equatable, Sendable {
  public var left = false
  public var right = false
  public var jump = false

  /// Creates an input.
  public init(left: Bool = false, right: Bool = false, jump: Bool = false) {
    self.left = left
    self.right = right
    self.jump = jump
  }
}

/// The fixed-step engine: 60 steps a second, never reading the clock. The same level, seed
/// and inputs give the same state, bit for bit.
public struct Engine: Sendable {
  /// The state: everything that is saved.
  public private(set) var state: GameState
  /// The current level's definition (static data from `Assets/levels`).
  public private(set) var level: LevelDefinition
  /// True while the engine refuses to step (background, pause overlay).
  public var isPaused = false
  /// A planted desync (`--desync-at`): after the step to this run frame, the player's x moves by
  /// one ulp. Nil in every ordinary run.
  public var desyncAt: Int64?
  /// Where the levels come from.
  public let library: LevelLibrary
  private var scratch = PhysicsScratch()

  /// Player tuning.
  static let runAcceleration: Float = 30
  static let runSpeed: Float = 8
  static let jumpSpeed: Float = 10

  /// Starts `levelIndex` with an autopilot seeded by `seed`.
  public init(library: LevelLibrary, level levelIndex: Int, seed: UInt64) throws(LevelError) {
    self.library = library
    let definition = try library.load(levelIndex)
    level = definition
    state = GameState(
      score: ScoreState(),
      level: LevelProgress(
        index: levelIndex, respawn: definition.spawn,
        collected: Array(repeating: false, count: definition.collectibles.count)),
      camera: CameraState(position: definition.spawn, zoom: definition.zoom ?? 1, target: definition.spawn),
      physics: definition.initialPhysics(),
      autopilot: AutopilotState(random: seed &* 0x9E37_79B9_7F4A_7C15 | 1, lastX: definition.spawn.x),
      canvas: definition.initialCanvas())
    Self.updateCamera(&state.camera, state: state, level: definition, dt: 0)
  }

  /// Lets extensions in this module change the state.
  mutating func withState(_ body: (inout GameState) -> Void) { body(&state) }

  /// The whole state, by value: cheap (the arrays are shared until the engine writes to them).
  public func snapshot() -> GameState { state }

  /// Puts a state back; the level's definition is reloaded when the state is on another level.
  public mutating func restore(_ snapshot: GameState) throws(InvalidStateError) {
    var definition = level
    if snapshot.level.index != state.level.index {
      do {
        definition = try library.load(snapshot.level.index)
      } catch {
        throw InvalidStateError(
          field: "level.index", value: "\(snapshot.level.index)", reason: "no such level: \(error)")
      }
    }
    // A state from a file, a tool or a test reaches the physics only if it fits its level.
    try snapshot.validate(against: definition)
    level = definition
    state = snapshot
  }

  /// Advances one step of 1/60 s unless paused; returns whether it stepped.
  @discardableResult
  public mutating func step(_ input: Input) -> Bool {
    // A state without a player (only a state forced past `restore`'s checks) does not step.
    guard !isPaused, !state.physics.bodies.isEmpty else { return false }
    let dt = PhysicsSettings.timeStep
    control(input, dt: dt)
    state.physics.step(geometry: level.geometry, scratch: &scratch)
    collect(dt: dt)
    // Counters wrap rather than trap: only a state forced past `restore`'s checks gets near the end.
    state.level.runFrame &+= 1
    state.level.levelFrame &+= 1
    paint()
    if !progress() { Self.updateCamera(&state.camera, state: state, level: level, dt: dt) }
    if let desyncAt, state.level.runFrame == desyncAt, !state.physics.bodies.isEmpty {
      state.physics.bodies[0].x = state.physics.bodies[0].x.nextUp
    }
    return true
  }

  private mutating func control(_ input: Input, dt: Float) {
    var player = state.physics.bodies[0]
    if input.left || input.right || input.jump { state.physics.wake(0) }
    if input.left && !input.right { player.vx = max(player.vx - Self.runAcceleration * dt, -Self.runSpeed) }
    if input.right && !input.left { player.vx = min(player.vx + Self.runAcceleration * dt, Self.runSpeed) }
    if input.jump && player.isGrounded { player.vy = Self.jumpSpeed }
    player.isAsleep = state.physics.bodies[0].isAsleep && !(input.left || input.right || input.jump)
    state.physics.bodies[0] = player
  }

  private mutating func collect(dt: Float) {
    let player = state.physics.bodies[0].position
    for (index, item) in level.collectibles.enumerated()
    where index < state.level.collected.count && !state.level.collected[index] {
      let reach = state.physics.bodies[0].radius + 0.4
      guard (player - Vector(item.x, item.y)).lengthSquared < reach * reach else { continue }
      state.level.collected[index] = true
      state.score.points &+= Int64(item.value) &* Int64(state.score.multiplier)
      state.score.multiplier = min(state.score.multiplier &+ 1, ScoreState.maxMultiplier)
      state.score.comboTimer = ScoreState.comboWindow
      state.score.collected &+= 1
    }
    state.score.comboTimer -= dt
    if state.score.comboTimer <= 0 {
      if state.score.multiplier > 1 {
        state.score.multiplier &-= 1
        state.score.comboTimer = 1
      } else {
        state.score.comboTimer = 0
      }
    }
    state.score.highScore = max(state.score.highScore, state.score.points)
  }

  /// On a level with a canvas, every awake ball paints the cells under it with the frame the
  /// step reached (the player is body 0; sleeping bodies are still, and paint nothing). In
  /// body order: the same steps paint the same cells.
  private mutating func paint() {
    guard state.canvas != nil else { return }
    let frame = UInt32(truncatingIfNeeded: state.level.levelFrame)
    let bounds = level.bounds
    for (index, body) in state.physics.bodies.enumerated() where !body.isAsleep {
      state.canvas!.paint(
        disc: body.position, radius: body.radius, frame: frame, painter: UInt16(clamping: index), bounds: bounds)
    }
  }

  /// Checkpoints, falls and the goal. Returns true when a new level was loaded.
  private mutating func progress() -> Bool {
    let player = state.physics.bodies[0].position
    let next = state.level.checkpoint &+ 1
    if next >= 0, next < level.checkpoints.count, player.x >= level.checkpoints[next] {
      state.level.checkpoint = next
      state.level.respawn = Vector(level.checkpoints[next], level.spawn.y + 1)
    }
    if player.y < level.bounds.minY {
      var body = state.physics.bodies[0]
      body.position = state.level.respawn
      body.velocity = .zero
      body.angularVelocity = 0
      state.physics.bodies[0] = body
      state.score.multiplier = 1
    }
    guard level.goal.contains(player) else { return false }
    // Finished: on to the next level of the campaign (back to level 1 after its last, or
    // when the next one is outside it: the canvas level is played with --level), keeping the score.
    var nextIndex = library.has(state.level.index &+ 1) ? state.level.index &+ 1 : 1
    // A next level that cannot be read leaves the player on the finished one, never a crash.
    guard var definition = try? library.load(nextIndex) else { return false }
    if definition.campaign == false, nextIndex != 1 {
      nextIndex = 1
      guard let first = try? library.load(1) else { return false }
      definition = first
    }
    level = definition
    state.level = LevelProgress(
      index: nextIndex, runFrame: state.level.runFrame, respawn: definition.spawn,
      collected: Array(repeating: false, count: definition.collectibles.count),
      levelsFinished: state.level.levelsFinished &+ 1)
    state.physics = definition.initialPhysics()
    state.canvas = definition.initialCanvas()
    state.camera = CameraState(position: definition.spawn, zoom: definition.zoom ?? 1, target: definition.spawn)
    state.autopilot.lastX = definition.spawn.x
    return true
  }

  /// Follows the player with a critically damped spring and a look-ahead in the direction of
  /// travel, kept inside the level's bounds.
  static func updateCamera(_ camera: inout CameraState, state: GameState, level: LevelDefinition, dt: Float) {
    let player = state.physics.bodies[0]
    let lookAhead = min(max(player.vx * 0.35, -3), 3)
    camera.target = clampToBounds(Vector(player.x + lookAhead, player.y + 1), camera: camera, level: level)
    guard dt > 0 else {
      camera.position = camera.target
      return
    }
    let smoothTime: Float = 0.25
    let omega = 2 / smoothTime
    let x = omega * dt
    let decay = 1 / (1 + x + 0.48 * x * x + 0.235 * x * x * x)
    let change = camera.position - camera.target
    let temp = (camera.velocity + change * omega) * dt
    camera.velocity = (camera.velocity - temp * omega) * decay
    camera.position = clampToBounds(camera.target + (change + temp) * decay, camera: camera, level: level)
  }

  /// The view's half size in metres at a zoom.
  public static func halfView(zoom: Float) -> Vector { Vector(8 / zoom, 4.5 / zoom) }

  static func clampToBounds(_ point: Vector, camera: CameraState, level: LevelDefinition) -> Vector {
    let half = halfView(zoom: camera.zoom)
    let bounds = level.bounds
    func clamp(_ value: Float, _ low: Float, _ high: Float) -> Float {
      low > high ? (low + high) / 2 : min(max(value, low), high)
    }
    return Vector(
      clamp(point.x, bounds.minX + half.x, bounds.maxX - half.x),
      clamp(point.y, bounds.minY + half.y, bounds.maxY - half.y))
  }
}
