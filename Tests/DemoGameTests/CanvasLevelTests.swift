import Foundation
import Stasis
import StasisTestSupport
import Testing

@testable import StasisDemoGame

/// Levels written for one test into a temporary folder.
private func library(_ levels: [String]) throws -> LevelLibrary {
  let folder = try temporaryFolder()
  for (index, json) in levels.enumerated() {
    try Data(json.utf8).write(to: folder.appendingPathComponent("level\(index + 1).json"))
  }
  return LevelLibrary(folder: folder.path)
}

/// A flat level whose goal is 3 m from the spawn point, with `extra` JSON members.
private func shortLevel(_ extra: String = "") -> String {
  """
  {"name": "short", "gravity": {"x": 0, "y": -20},
   "bounds": {"minX": -5, "minY": -10, "maxX": 59, "maxY": 22}, "spawn": {"x": 1, "y": 0.5},
   "goal": {"minX": 3, "minY": 0, "maxX": 6, "maxY": 3}, "boxes": [{"minX": -5, "minY": -1, "maxX": 59, "maxY": 0}],
   "segments": [], "collectibles": [], "checkpoints": []\(extra)}
  """
}

/// Counts rectangles and the calls that drew them.
private struct BatchCountingCanvas: Canvas {
  var rects = 0
  var batches = 0
  var outside = 0
  var width: Float = 320
  var height: Float = 180
  mutating func setColor(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8) {}
  mutating func fillRect(x: Float, y: Float, width: Float, height: Float) {}
  mutating func drawLine(x1: Float, y1: Float, x2: Float, y2: Float) {}
  mutating func fillRects(_ coordinates: [Float]) {
    batches += 1
    for index in stride(from: 0, to: coordinates.count, by: 4) {
      rects += 1
      let (x, y, w, h) = (coordinates[index], coordinates[index + 1], coordinates[index + 2], coordinates[index + 3])
      // A cell is at most 6 px here: a rectangle in view starts at most one cell before the picture.
      if x + w < -8 || y + h < -8 || x > self.width + 8 || y > self.height + 8 { outside += 1 }
    }
  }
}

@MainActor
@Suite("The canvas level: a large state that changes little")
struct CanvasLevelTests {
  static let assets = LevelLibrary(folder: packageRoot.appendingPathComponent("Assets/levels").path)

  /// Level 4 after `frames` steps of the autopilot.
  static func played(_ frames: Int, seed: UInt64 = 1) throws -> Engine {
    var engine = try Engine(library: assets, level: 4, seed: seed)
    for _ in 0..<frames { engine.step(engine.autopilotInput()) }
    return engine
  }

  @Test("level 4 declares a 2048 × 768 canvas over its bounds, is outside the campaign, and saves 8 to 16 MB")
  func shippedLevel() throws {
    let level = try Self.assets.load(4)
    #expect(level.canvas == LevelDefinition.CanvasSize(columns: 2048, rows: 768))
    #expect(level.campaign == false)
    let engine = try Engine(library: Self.assets, level: 4, seed: 1)
    let state = engine.snapshot()
    #expect(state.canvas?.paintedCells == 0)
    let bytes = SaveFileFormat.encode(
      try DemoSaveFormat.codec.document(for: state, summary: try state.summary(), createdAt: 0))
    #expect((8_000_000...16_000_000).contains(bytes.count), "\(bytes.count) bytes")
  }

  @Test("the moving balls paint the cells under them; the same seed paints the same cells")
  func painting() throws {
    let engine = try Self.played(120)
    let canvas = try #require(engine.state.canvas)
    let player = engine.state.physics.bodies[0]
    let bounds = engine.level.bounds
    let column = Int((player.x - bounds.minX) / (bounds.maxX - bounds.minX) * Float(canvas.columns))
    let row = Int((player.y - bounds.minY) / (bounds.maxY - bounds.minY) * Float(canvas.rows))
    let under = canvas[column, row]
    #expect(under.visits > 0 && under.painter == 0, "the cell under the player is the player's")
    #expect(under.frame == UInt32(engine.state.level.levelFrame), "painted on this very step")
    #expect(canvas.paintedCells > 1_000, "two seconds of rolling and falling balls")
    var later = engine
    for _ in 0..<60 { later.step(later.autopilotInput()) }
    let changed = zip(canvas.tiles, try #require(later.state.canvas).tiles).reduce(0) { total, pair in
      total + zip(pair.0, pair.1).filter { $0 != $1 }.count
    }
    #expect(changed > 0 && changed < canvas.columns * canvas.rows / 100, "\(changed) cells changed in a second")
    let again = try Self.played(120)
    #expect(again.state == engine.state)
    #expect(again.state.digest == engine.state.digest)
    #expect(try Self.played(120, seed: 2).state.digest != engine.state.digest)
  }

  @Test("a step copies only the tiles it paints: every other tile still shares the previous state's storage")
  func copyOnWriteByTile() throws {
    var engine = try Self.played(60)
    let before = engine.snapshot()
    let awake = before.physics.bodies.filter { !$0.isAsleep }.count
    engine.step(engine.autopilotInput())
    let previous = try #require(before.canvas?.tiles)
    let now = try #require(engine.state.canvas?.tiles)
    func address(_ tile: [PaintCanvas.Cell]) -> UnsafeRawPointer? {
      tile.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }
    let copied = zip(previous, now).filter { address($0) != address($1) }.count
    #expect(copied > 0, "the step painted")
    // A ball of radius 0.5 m covers at most 2 × 2 tiles of 2 × 2 m.
    #expect(copied <= 4 * awake, "\(copied) of \(now.count) tiles copied for \(awake) awake balls")
  }

  @Test("a level without a canvas has no canvas section: the state and its digest are what they were before canvases")
  func levelsWithoutCanvas() throws {
    var engine = try Engine(library: Self.assets, level: 2, seed: 7)
    for _ in 0..<600 { engine.step(engine.autopilotInput()) }
    #expect(engine.state.canvas == nil)
    // `stasis-demo --headless --level 2 --seed 7 --frames 600 --print-digest` before the
    // canvas existed (the README's example shows the same digest).
    #expect(engine.state.digest == "68aa00e0b92b6e3827c2bdbf3c8f67d2203ddfaf32f38b3353c0f41704635372")
    let document = try DemoSaveFormat.codec.document(for: engine.state, summary: SaveSummary(), createdAt: 0)
    #expect(document.sections.map(\.name) == ["autopilot", "camera", "level", "physics", "score"])
    let canvasLevel = try DemoSaveFormat.codec.document(
      for: try Self.played(1).state, summary: SaveSummary(), createdAt: 0)
    #expect(canvasLevel.sections.map(\.name) == ["autopilot", "camera", "canvas", "level", "physics", "score"])
  }

  @Test("a level-4 save round-trips byte for byte, and only the painted runs differ between two saves")
  func roundTrip() throws {
    let codec = DemoSaveFormat.codec(levels: Self.assets)
    let store = SaveStore(directory: try temporaryFolder().path)
    var engine = try Self.played(90)
    let first = try store.save(engine.snapshot(), codec: codec, slot: "autosave", summary: SaveSummary()).wait()
    #expect(try store.load(codec: codec, slot: "autosave").state == engine.state)
    for _ in 0..<60 { engine.step(engine.autopilotInput()) }
    let second = try store.save(engine.snapshot(), codec: codec, slot: "autosave", summary: SaveSummary()).wait()
    let a = try store.readBytes(at: first.path)
    let b = try store.readBytes(at: second.path)
    let differing = zip(a, b).filter { $0 != $1 }.count
    #expect(a.count == b.count || abs(a.count - b.count) < 4_096, "the canvas keeps its size")
    #expect(differing < a.count / 100, "\(differing) of \(a.count) bytes differ after a second of play")
  }

  @Test("the summary's progress counts the three campaign levels; on level 4, the levels finished")
  func summaryProgress() throws {
    let start = try Engine(library: Self.assets, level: 4, seed: 1).snapshot()
    #expect(try start.summary().progress == 0)
    var finished = start
    finished.level.levelsFinished = 2
    #expect(try finished.summary().progress == 2.0 / 3)
    let second = try Engine(library: Self.assets, level: 2, seed: 1).snapshot()
    #expect(try second.summary().progress == 1.0 / 3, "as before the canvas level")
  }

  @Test("finishing the level before one outside the campaign goes back to level 1; finishing that one too")
  func campaign() throws {
    let levels = try library([
      shortLevel(), shortLevel(), shortLevel(),
      shortLevel(#", "campaign": false, "canvas": {"columns": 64, "rows": 32}"#),
    ])
    var engine = try Engine(library: levels, level: 3, seed: 1)
    for _ in 0..<240 where engine.state.level.levelsFinished == 0 { engine.step(Input(right: true)) }
    #expect(engine.state.level.index == 1, "level 3 leads back to level 1, as before level 4 existed")
    #expect(engine.state.canvas == nil)
    engine = try Engine(library: levels, level: 4, seed: 1)
    #expect(engine.state.canvas?.columns == 64)
    for _ in 0..<240 where engine.state.level.levelsFinished == 0 { engine.step(Input(right: true)) }
    #expect(engine.state.level.index == 1)
    #expect(engine.state.canvas == nil, "level 1 has no canvas: it is gone from the state")
    engine = try Engine(library: levels, level: 2, seed: 1)
    for _ in 0..<240 where engine.state.level.levelsFinished == 0 { engine.step(Input(right: true)) }
    #expect(engine.state.level.index == 3, "inside the campaign, the next level")
  }

  @Test("a level's canvas must be a positive multiple of 32 cells each way, 4,194,304 cells at most")
  func levelCanvasChecks() throws {
    for (canvas, field) in [
      (#"{"columns": 100, "rows": 32}"#, "canvas.columns"), (#"{"columns": 64, "rows": 0}"#, "canvas.rows"),
      (#"{"columns": 65536, "rows": 65536}"#, "canvas"), (#"{"columns": 131072, "rows": 32}"#, "canvas.columns"),
    ] {
      do {
        _ = try LevelLibrary.parse(Data(shortLevel(#", "canvas": \#(canvas)"#).utf8), file: "l")
        Issue.record("\(canvas) was accepted")
      } catch {
        #expect(error.field == field, "\(canvas): \(error)")
      }
    }
  }

  /// Each hostile canvas: what it changes, and the field the error must name.
  static let hostile: [(name: String, field: String, edit: @Sendable (inout GameState) -> Void)] = [
    ("a tile missing", "canvas.tiles", { $0.canvas!.tiles.removeLast() }),
    ("a short tile", "canvas.tiles[7]", { $0.canvas!.tiles[7].removeLast() }),
    ("columns not a multiple of 32", "canvas.columns", { $0.canvas!.columns = 2047 }),
    ("a canvas of another size", "canvas", { $0.canvas = PaintCanvas(columns: 1024, rows: 768) }),
    ("no canvas on the canvas level", "canvas", { $0.canvas = nil }),
    ("a canvas of 2^40 columns", "canvas.columns", { $0.canvas!.columns = 1 << 40 }),
    ("negative rows", "canvas.rows", { $0.canvas!.rows = -32 }),
    // Not the canvas's own values, but what it is painted and drawn from.
    ("NaN player", "physics.bodies[0].x", { $0.physics.bodies[0].x = .nan }),
    ("NaN camera", "camera.position.x", { $0.camera.position = Vector(.nan, 0) }),
  ]

  @Test("a hostile canvas is refused as invalidState naming its field; forced past validation, it never traps")
  func hostileCanvas() throws {
    let good = try Self.played(30).snapshot()
    let codec = DemoSaveFormat.codec(levels: Self.assets)
    for (name, field, edit) in Self.hostile {
      var hostile = good
      edit(&hostile)
      let error = #expect(throws: SaveFileError.self, "\(name)") { try codec.validate(hostile) }
      #expect(error?.kind == .invalidState, "\(name)")
      #expect(error?.context.field == field, "\(name): \(String(describing: error))")

      var engine = try Engine(library: Self.assets, level: 4, seed: 1)
      #expect(throws: InvalidStateError.self, "\(name): the engine refuses it too") { try engine.restore(hostile) }
      engine.withState { $0 = hostile }  // bypasses restore's validation on purpose
      for _ in 0..<60 { engine.step(engine.autopilotInput()) }
      var canvas = BatchCountingCanvas()
      SceneDrawing(width: 320, height: 180).draw(
        engine.state, level: engine.level, camera: engine.state.camera, on: &canvas)
    }
    var elsewhere = try Engine(library: Self.assets, level: 2, seed: 1).snapshot()
    elsewhere.canvas = good.canvas
    let error = #expect(throws: SaveFileError.self) { try codec.validate(elsewhere) }
    #expect(error?.context.field == "canvas", "a canvas on a level without one")
  }

  @Test("the drawing paints only the cells in view, a colour's rectangles in one call")
  func drawing() throws {
    let engine = try Self.played(300)
    var canvas = BatchCountingCanvas()
    SceneDrawing(width: 320, height: 180).draw(
      engine.state, level: engine.level, camera: engine.state.camera, on: &canvas)
    #expect(canvas.rects > 0, "the player's trail is in view")
    #expect(canvas.outside == 0, "nothing outside the picture")
    #expect(canvas.batches <= SceneDrawing.paintPalette.count)
    // A row's run of one colour is one rectangle: far fewer rectangles than painted cells in view.
    #expect(canvas.rects < 2_000, "\(canvas.rects) rectangles")
  }
}
