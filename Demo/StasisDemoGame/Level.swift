import Foundation

/// A level as its JSON file in `Assets/levels/` describes it: geometry, spawn point,
/// collectibles, goal, checkpoints, camera bounds, gravity and the dynamic bodies.
public struct LevelDefinition: Codable, Equatable, Sendable {
  public struct Collectible: Codable, Equatable, Sendable {
    public var x: Float
    public var y: Float
    /// Points before the combo multiplier.
    public var value: Int
  }

  /// A rectangle of dynamic circles: `columns × rows`, `spacing` apart, from `x`, `y`.
  public struct BodyGrid: Codable, Equatable, Sendable {
    public var x: Float
    public var y: Float
    public var columns: Int
    public var rows: Int
    public var spacing: Float
    public var radius: Float
  }

  public var name: String
  /// Gravity, metres per second squared.
  public var gravity: Vector
  /// The camera never shows anything outside these bounds; falling below `minY` respawns.
  public var bounds: Box
  /// Where the player starts.
  public var spawn: Vector
  /// Reaching this box finishes the level.
  public var goal: Box
  /// Static boxes.
  public var boxes: [Box]
  /// Static segments (ramps).
  public var segments: [Segment]
  public var collectibles: [Collectible]
  /// Checkpoint x positions, in order: passing one moves the respawn point there.
  public var checkpoints: [Float]
  /// Single dynamic bodies.
  public var bodies: [Vector]?
  /// Grids of dynamic bodies (the stress level has thousands).
  public var bodyGrids: [BodyGrid]?
  /// Camera zoom: 1 shows 16 × 9 metres.
  public var zoom: Float?
  /// A paint layer of `columns × rows` cells over the bounds, which every moving ball paints
  /// (``PaintCanvas``): the level's state is then large, and changes little per step.
  public var canvas: CanvasSize?
  /// False for a level outside the campaign, played with `--level N`: finishing the level
  /// before it goes back to level 1 instead. True when absent.
  public var campaign: Bool?

  /// The size of a level's canvas, in cells.
  public struct CanvasSize: Codable, Equatable, Sendable {
    /// Cells across the bounds: a multiple of ``PaintCanvas/tileSide``.
    public var columns: Int
    /// Cells up the bounds: a multiple of ``PaintCanvas/tileSide``.
    public var rows: Int
  }

  /// The static shapes as the physics sees them.
  public var geometry: StaticGeometry { StaticGeometry(boxes: boxes, segments: segments) }

  /// How many dynamic bodies the level starts with, the player included.
  public var bodyCount: Int {
    1 + (bodies?.count ?? 0) + (bodyGrids ?? []).reduce(0) { $0 + $1.columns * $1.rows }
  }
}

/// A level file that cannot be used: which file, which field, what is wrong.
public struct LevelError: Error, Equatable, CustomStringConvertible {
  public var file: String
  public var field: String
  public var message: String
  public var description: String {
    field.isEmpty ? "\(file): \(message)" : "\(file): field '\(field)': \(message)"
  }
}

/// The levels of the demo, read from a folder of `levelN.json` files.
public struct LevelLibrary: Sendable {
  /// The folder holding `level1.json`, `level2.json`, ...
  public let folder: String

  /// Creates a library over `folder`.
  public init(folder: String) { self.folder = folder }

  /// Finds `Assets/levels`: in `STASIS_ASSETS`, the working folder, or beside the executable's
  /// build folder (`.build/debug/...` → the package root).
  public static func locate(executable: String = CommandLine.arguments[0]) -> LevelLibrary? {
    var candidates: [String] = []
    if let assets = ProcessInfo.processInfo.environment["STASIS_ASSETS"] { candidates.append(assets + "/levels") }
    candidates.append(FileManager.default.currentDirectoryPath + "/Assets/levels")
    var url = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<6 {
      candidates.append(url.appendingPathComponent("Assets/levels").path)
      url.deleteLastPathComponent()
    }
    return candidates.first { FileManager.default.fileExists(atPath: $0 + "/level1.json") }.map(LevelLibrary.init)
  }

  /// The path of level `index`.
  public func path(of index: Int) -> String { "\(folder)/level\(index).json" }

  /// True when level `index` exists.
  public func has(_ index: Int) -> Bool { FileManager.default.fileExists(atPath: path(of: index)) }

  /// Reads and checks level `index`.
  public func load(_ index: Int) throws(LevelError) -> LevelDefinition {
    let path = path(of: index)
    guard let data = FileManager.default.contents(atPath: path) else {
      throw LevelError(file: path, field: "", message: "no such level file")
    }
    return try Self.parse(data, file: path)
  }

  /// Parses and checks a level file's bytes.
  public static func parse(_ data: Data, file: String) throws(LevelError) -> LevelDefinition {
    let level: LevelDefinition
    do {
      level = try JSONDecoder().decode(LevelDefinition.self, from: data)
    } catch let error as DecodingError {
      throw LevelError(file: file, decoding: error)
    } catch {
      throw LevelError(file: file, field: "", message: "\(error)")
    }
    try level.validate(file: file)
    return level
  }
}

extension LevelError {
  init(file: String, decoding error: DecodingError) {
    func path(_ keys: [any CodingKey]) -> String {
      keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().trimmingCharacters(in: ["."])
        .replacingOccurrences(of: ".[", with: "[")
    }
    switch error {
    case .keyNotFound(let key, let context):
      self.init(file: file, field: path(context.codingPath + [key]), message: "missing")
    case .typeMismatch(let type, let context):
      self.init(file: file, field: path(context.codingPath), message: "expected \(type)")
    case .valueNotFound(let type, let context):
      self.init(file: file, field: path(context.codingPath), message: "expected \(type), found null")
    case .dataCorrupted(let context):
      self.init(file: file, field: path(context.codingPath), message: context.debugDescription)
    @unknown default:
      self.init(file: file, field: "", message: "\(error)")
    }
  }
}

extension LevelDefinition {
  func validate(file: String) throws(LevelError) {
    func fail(_ field: String, _ message: String) -> LevelError {
      LevelError(file: file, field: field, message: message)
    }
    guard bounds.maxX > bounds.minX, bounds.maxY > bounds.minY else { throw fail("bounds", "max must exceed min") }
    guard bounds.contains(spawn) else { throw fail("spawn", "outside the bounds") }
    for (index, box) in boxes.enumerated() where !(box.maxX > box.minX && box.maxY > box.minY) {
      throw fail("boxes[\(index)]", "max must exceed min")
    }
    for (index, grid) in (bodyGrids ?? []).enumerated() {
      guard grid.columns > 0, grid.rows > 0, grid.columns * grid.rows <= 100_000 else {
        throw fail("bodyGrids[\(index)]", "columns and rows must be 1 or more, 100,000 bodies at most")
      }
      guard grid.radius >= 0.2, grid.radius <= 0.6 else {
        throw fail("bodyGrids[\(index)].radius", "must be between 0.2 and 0.6 metres")
      }
      guard grid.spacing >= 2 * grid.radius else {
        throw fail("bodyGrids[\(index)].spacing", "must be at least twice the radius")
      }
    }
    guard checkpoints == checkpoints.sorted() else { throw fail("checkpoints", "must be in increasing order") }
    if let zoom, !(zoom > 0.05 && zoom <= 4) { throw fail("zoom", "must be between 0.05 and 4") }
    if let canvas {
      let side = PaintCanvas.tileSide
      for (name, count) in [("columns", canvas.columns), ("rows", canvas.rows)]
      where !(count > 0 && count % side == 0 && count <= StateLimits.canvasSide) {
        throw fail("canvas.\(name)", "must be a positive multiple of \(side), \(StateLimits.canvasSide) at most")
      }
      guard canvas.columns * canvas.rows <= PaintCanvas.maxCells else {
        throw fail("canvas", "\(canvas.columns) × \(canvas.rows) cells; \(PaintCanvas.maxCells) at most")
      }
    }
  }

  /// The level's canvas, unpainted; nil when it declares none.
  func initialCanvas() -> PaintCanvas? {
    canvas.map { PaintCanvas(columns: $0.columns, rows: $0.rows) }
  }

  /// The level's starting physics: the player first, then the listed bodies, then the grids.
  func initialPhysics() -> PhysicsState {
    var bodies = [Body(position: spawn, radius: 0.5)]
    for position in self.bodies ?? [] { bodies.append(Body(position: position, radius: 0.4)) }
    for grid in bodyGrids ?? [] {
      for row in 0..<grid.rows {
        for column in 0..<grid.columns {
          // Odd rows shift by half a spacing so piles do not stand in perfect columns.
          let shift: Float = row % 2 == 1 ? grid.spacing / 2 : 0
          bodies.append(
            Body(
              position: Vector(grid.x + Float(column) * grid.spacing + shift, grid.y + Float(row) * grid.spacing),
              radius: grid.radius))
        }
      }
    }
    return PhysicsState(gravity: gravity, bodies: bodies)
  }
}
