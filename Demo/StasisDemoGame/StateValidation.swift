import Stasis

/// The limits a loaded state must keep: what the levels and the physics can produce, with
/// room to spare, so no real save is refused and no hostile one reaches the engine.
public enum StateLimits {
  /// Cells along a canvas's side: 65,536 at most (and ``PaintCanvas/maxCells`` in all).
  public static let canvasSide = 1 << 16
  /// Body radii the levels use are 0.4–0.6 m; the broad phase's cell is twice the largest.
  public static let radius: ClosedRange<Float> = 0.05...(PhysicsState.cellSize / 2)
  /// Density 1: π r² for the largest radius is 1.13 kg.
  public static let mass: ClosedRange<Float> = 0.001...10
  /// The physics caps speed at `PhysicsSettings.maxSpeed` each step; gravity adds one step's worth.
  public static let speed: Float = 2 * PhysicsSettings.maxSpeed
  /// Radians per second: the top speed over the smallest radius, with margin.
  public static let angularSpeed: Float = 1_000
  /// Metres from the origin: levels are tens of metres; a marble falling for hours stays inside.
  public static let coordinate: Float = 1_000_000
  /// Bodies in one level (the stress level has 5,200).
  public static let bodies = 100_000
  /// Frames and counters: 2^40 steps is 580 years at 60 Hz; far from any overflow.
  public static let counter: Int64 = 1 << 40
  /// Camera zoom (levels allow 0.05–4).
  public static let zoom: ClosedRange<Float> = 0.05...4
  /// Body flags the engine defines: asleep (1) and grounded (2).
  public static let knownFlags: UInt32 = 0b11
}

extension GameState: ValidatedSaveState {
  /// Checks every value the engine and the drawing use, without the level: finite numbers,
  /// radii, masses and speeds within the physics' limits, indices in range, counters far
  /// from overflow. ``validate(against:)`` adds what needs the level.
  public func validate() throws(InvalidStateError) {
    var check = Check()
    try check.count("physics.bodies", physics.bodies.count, 1...StateLimits.bodies)
    try check.vector("physics.gravity", physics.gravity, limit: 100)
    for (index, body) in physics.bodies.enumerated() {
      func path() -> String { "physics.bodies[\(index)]" }
      try check.finite(path() + ".x", body.x, limit: StateLimits.coordinate)
      try check.finite(path() + ".y", body.y, limit: StateLimits.coordinate)
      try check.finite(path() + ".vx", body.vx, limit: StateLimits.speed)
      try check.finite(path() + ".vy", body.vy, limit: StateLimits.speed)
      try check.finite(path() + ".angle", body.angle, limit: 1e7)
      try check.finite(path() + ".angularVelocity", body.angularVelocity, limit: StateLimits.angularSpeed)
      try check.range(path() + ".radius", body.radius, StateLimits.radius)
      try check.range(path() + ".mass", body.mass, StateLimits.mass)
      try check.range(path() + ".sleepTime", body.sleepTime, 0...1e9)
      guard body.flags & ~StateLimits.knownFlags == 0 else {
        throw InvalidStateError(
          field: path() + ".flags", value: "\(body.flags)", reason: "only bits 0 and 1 are defined")
      }
    }
    try check.count("physics.contactCache", physics.contactCache.count, 0...(8 * physics.bodies.count))
    for (index, cached) in physics.contactCache.enumerated() {
      func path() -> String { "physics.contactCache[\(index)]" }
      try check.count(path() + ".a", Int(cached.a), 0...(physics.bodies.count - 1))
      try check.count(path() + ".b", Int(cached.b), -StateLimits.bodies...(physics.bodies.count - 1))
      try check.finite(path() + ".normal", cached.normal, limit: 1e6)
      try check.finite(path() + ".tangent", cached.tangent, limit: 1e6)
    }
    try check.vector("camera.position", camera.position, limit: StateLimits.coordinate)
    try check.vector("camera.velocity", camera.velocity, limit: StateLimits.coordinate)
    try check.vector("camera.target", camera.target, limit: StateLimits.coordinate)
    try check.range("camera.zoom", camera.zoom, StateLimits.zoom)
    try check.count("level.index", level.index, 1...1_000)
    try check.counter("level.runFrame", level.runFrame)
    try check.counter("level.levelFrame", level.levelFrame)
    try check.count("level.checkpoint", level.checkpoint, -1...10_000)
    try check.vector("level.respawn", level.respawn, limit: StateLimits.coordinate)
    try check.count("level.collected", level.collected.count, 0...100_000)
    try check.count("level.levelsFinished", level.levelsFinished, 0...Int(StateLimits.counter))
    try check.counter("score.points", score.points)
    try check.counter("score.highScore", score.highScore)
    try check.count("score.multiplier", score.multiplier, 1...ScoreState.maxMultiplier)
    try check.range("score.comboTimer", score.comboTimer, -1...(ScoreState.comboWindow + 1))
    try check.count("score.collected", score.collected, 0...Int(StateLimits.counter))
    try check.count("autopilot.stuckFrames", autopilot.stuckFrames, 0...Int(StateLimits.counter))
    try check.count("autopilot.jumpCooldown", autopilot.jumpCooldown, 0...1_000)
    try check.finite("autopilot.lastX", autopilot.lastX, limit: StateLimits.coordinate)
    if let canvas { try check.canvas(canvas) }
  }

  /// Checks what needs the level: the body count it starts with, its collectibles and
  /// checkpoints, its static shapes in the contact cache, and a camera inside its bounds.
  public func validate(against definition: LevelDefinition) throws(InvalidStateError) {
    try validate()
    var check = Check()
    let bodies = definition.bodyCount
    try check.count("physics.bodies", physics.bodies.count, bodies...bodies)
    try check.count(
      "level.collected", level.collected.count, definition.collectibles.count...definition.collectibles.count)
    try check.count("level.checkpoint", level.checkpoint, -1...(definition.checkpoints.count - 1))
    let shapes = definition.boxes.count + definition.segments.count
    for (index, cached) in physics.contactCache.enumerated() {
      try check.count("physics.contactCache[\(index)].b", Int(cached.b), -shapes...(physics.bodies.count - 1))
    }
    switch (definition.canvas, canvas) {
    case (nil, nil): break
    case (let declared?, let canvas?):
      guard canvas.columns == declared.columns, canvas.rows == declared.rows else {
        throw InvalidStateError(
          field: "canvas", value: "\(canvas.columns) × \(canvas.rows)",
          reason: "level \(level.index)'s canvas is \(declared.columns) × \(declared.rows) cells")
      }
    case (let declared?, nil):
      throw InvalidStateError(
        field: "canvas", value: "none",
        reason: "level \(level.index) has a \(declared.columns) × \(declared.rows) canvas")
    case (nil, let canvas?):
      throw InvalidStateError(
        field: "canvas", value: "\(canvas.columns) × \(canvas.rows)", reason: "level \(level.index) has no canvas")
    }
    let bounds = definition.bounds
    for (name, point) in [("camera.position", camera.position), ("camera.target", camera.target)] {
      guard point.x >= bounds.minX - 1, point.x <= bounds.maxX + 1, point.y >= bounds.minY - 1,
        point.y <= bounds.maxY + 1
      else {
        throw InvalidStateError(
          field: name, value: "(\(point.x), \(point.y))",
          reason: "must be inside the level's bounds (\(bounds.minX)…\(bounds.maxX), \(bounds.minY)…\(bounds.maxY))")
      }
    }
  }
}

extension DemoSaveFormat {
  /// The codec that also checks each loaded state against its level in `library`: a level
  /// that does not exist, or a state that does not fit its level, is `invalidState`.
  public static func codec(levels library: LevelLibrary) -> SaveCodec<GameState> {
    var checked = codec
    checked.validator = { state throws(InvalidStateError) in
      let definition: LevelDefinition
      do {
        definition = try library.load(state.level.index)
      } catch {
        throw InvalidStateError(field: "level.index", value: "\(state.level.index)", reason: "no such level: \(error)")
      }
      try state.validate(against: definition)
    }
    return checked
  }
}

/// One check per value; each throws naming the field, the value and the allowed range.
private struct Check {
  // Field names are built only when a check fails: a 10,000-body state validates in well
  // under a millisecond instead of formatting 150,000 paths.
  func finite(_ field: @autoclosure () -> String, _ value: Float, limit: Float) throws(InvalidStateError) {
    guard value.isFinite, abs(value) <= limit else {
      throw InvalidStateError(field: field(), value: "\(value)", reason: "must be finite, at most \(limit) in size")
    }
  }

  func vector(_ field: @autoclosure () -> String, _ value: Vector, limit: Float) throws(InvalidStateError) {
    try finite(field() + ".x", value.x, limit: limit)
    try finite(field() + ".y", value.y, limit: limit)
  }

  func range(_ field: @autoclosure () -> String, _ value: Float, _ allowed: ClosedRange<Float>)
    throws(InvalidStateError)
  {
    guard allowed.contains(value) else {  // NaN is in no range
      throw InvalidStateError(
        field: field(), value: "\(value)", reason: "must be between \(allowed.lowerBound) and \(allowed.upperBound)")
    }
  }

  func count(_ field: @autoclosure () -> String, _ value: Int, _ allowed: ClosedRange<Int>) throws(InvalidStateError) {
    guard allowed.contains(value) else {
      throw InvalidStateError(
        field: field(), value: "\(value)", reason: "must be between \(allowed.lowerBound) and \(allowed.upperBound)")
    }
  }

  /// A canvas's shape: its size within the limits, as many tiles as its size makes, each
  /// whole. Any cell's values are a cell the engine and the drawing handle (visits saturate,
  /// a painter outside the palette wraps round it), so the cells themselves are not read.
  func canvas(_ canvas: PaintCanvas) throws(InvalidStateError) {
    let side = PaintCanvas.tileSide
    for (name, value) in [("canvas.columns", canvas.columns), ("canvas.rows", canvas.rows)] {
      try count(name, value, side...StateLimits.canvasSide)
      guard value % side == 0 else {
        throw InvalidStateError(field: name, value: "\(value)", reason: "must be a multiple of \(side)")
      }
    }
    guard canvas.columns * canvas.rows <= PaintCanvas.maxCells else {
      throw InvalidStateError(
        field: "canvas", value: "\(canvas.columns) × \(canvas.rows)",
        reason: "must have \(PaintCanvas.maxCells) cells at most")
    }
    let tiles = (canvas.columns / side) * (canvas.rows / side)
    try count("canvas.tiles", canvas.tiles.count, tiles...tiles)
    for (index, tile) in canvas.tiles.enumerated() where tile.count != side * side {
      throw InvalidStateError(
        field: "canvas.tiles[\(index)]", value: "\(tile.count) cells", reason: "a tile holds \(side * side) cells")
    }
  }

  func counter(_ field: @autoclosure () -> String, _ value: Int64) throws(InvalidStateError) {
    guard value >= 0, value <= StateLimits.counter else {
      throw InvalidStateError(
        field: field(), value: "\(value)", reason: "must be between 0 and \(StateLimits.counter)")
    }
  }
}
