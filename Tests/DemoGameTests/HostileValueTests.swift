import Foundation
import Stasis
import StasisTestSupport
import Testing

@testable import StasisDemoGame

/// Saves with every checksum right and hostile values inside (a save editor, a shared save, a
/// compromised device): refused as `invalidState` naming the field, so the store falls back
/// to the previous good generation; the engine and the drawing never trap on any value.
@MainActor
@Suite("Hostile values under correct checksums")
struct HostileValueTests {
  static let assets = LevelLibrary(folder: packageRoot.appendingPathComponent("Assets/levels").path)

  /// A real level-2 state after two seconds: bodies in piles, a full contact cache.
  static func realState() throws -> GameState {
    var engine = try Engine(library: assets, level: 2, seed: 3)
    for _ in 0..<120 { engine.step(engine.autopilotInput()) }
    #expect(!engine.state.physics.contactCache.isEmpty)
    return engine.snapshot()
  }

  /// Each case: what it changes, and the field path the error must name.
  static let cases: [(name: String, field: String, edit: @Sendable (inout GameState) -> Void)] = [
    ("NaN radius", "bodies[3].radius", { $0.physics.bodies[3].radius = .nan }),
    ("+inf radius", "bodies[3].radius", { $0.physics.bodies[3].radius = .infinity }),
    ("-inf radius", "bodies[3].radius", { $0.physics.bodies[3].radius = -.infinity }),
    ("subnormal radius", "bodies[3].radius", { $0.physics.bodies[3].radius = 1.4e-38 }),
    ("negative radius", "bodies[3].radius", { $0.physics.bodies[3].radius = -0.4 }),
    ("huge radius", "bodies[3].radius", { $0.physics.bodies[3].radius = 1.6e33 }),
    ("NaN mass", "bodies[4].mass", { $0.physics.bodies[4].mass = .nan }),
    ("+inf mass", "bodies[4].mass", { $0.physics.bodies[4].mass = .infinity }),
    ("subnormal mass", "bodies[4].mass", { $0.physics.bodies[4].mass = .leastNonzeroMagnitude }),
    ("negative mass", "bodies[4].mass", { $0.physics.bodies[4].mass = -1 }),
    ("huge velocity", "bodies[0].vx", { $0.physics.bodies[0].vx = 1e30 }),
    ("NaN position", "bodies[7].y", { $0.physics.bodies[7].y = .nan }),
    ("NaN contact normal", "contactCache[0].normal", { $0.physics.contactCache[0].normal = .nan }),
    ("contact index out of range", "contactCache[0].a", { $0.physics.contactCache[0].a = 1_000_000 }),
    ("level 99", "index", { $0.level.index = 99 }),
    ("camera outside the level", "position", { $0.camera.position = Vector(5_000, 5_000) }),
    ("zero zoom", "zoom", { $0.camera.zoom = 0 }),
    ("multiplier that overflows the score", "multiplier", { $0.score.multiplier = .max }),
    ("frame counter at Int64.max", "runFrame", { $0.level.runFrame = .max }),
    ("collectibles of another level", "collected", { $0.level.collected = [] }),
    ("no bodies at all", "bodies", { $0.physics.bodies = [] }),
  ]

  @Test("each hostile value is refused as invalidState naming its field; the store falls back to the good save")
  func refusedAndFallback() throws {
    let good = try Self.realState()
    let codec = DemoSaveFormat.codec(levels: Self.assets)
    for (name, field, edit) in Self.cases {
      let store = SaveStore(directory: try temporaryFolder().path)
      _ = try store.save(good, codec: codec, slot: "autosave", summary: SaveSummary()).wait()
      var hostile = good
      edit(&hostile)
      // Written as a save editor would: every checksum right.
      _ = try store.save(hostile, codec: codec, slot: "autosave", summary: SaveSummary()).wait()
      let loaded = try store.load(codec: codec, slot: "autosave")
      #expect(loaded.generation == 1, "\(name): fell back to the good save")
      #expect(loaded.state == good, "\(name)")
      let error = loaded.skipped.first?.error
      #expect(error?.kind == .invalidState, "\(name): \(String(describing: error))")
      #expect(error?.context.field?.hasSuffix(field) == true, "\(name): \(String(describing: error))")
      #expect(loaded.fallbackDescription?.contains("generation 2 is damaged (invalid state") == true, "\(name)")

      var engine = try Engine(library: Self.assets, level: 2, seed: 3)
      #expect(throws: InvalidStateError.self, "\(name): the engine refuses it too") { try engine.restore(hostile) }
    }
  }

  @Test("the engine never traps: hostile values forced past validation step 60 times and draw in bounded time")
  func engineNeverTraps() throws {
    let good = try Self.realState()
    for (name, _, edit) in Self.cases {
      var engine = try Engine(library: Self.assets, level: 2, seed: 3)
      var hostile = good
      edit(&hostile)
      engine.withState { $0 = hostile }  // bypasses restore's validation on purpose
      for _ in 0..<60 { engine.step(engine.autopilotInput()) }
      var canvas = CountingCanvas()
      SceneDrawing(width: 320, height: 180).draw(
        engine.state, level: engine.level, camera: engine.state.camera, on: &canvas)
      #expect(canvas.spans < 100_000, "\(name): the drawing is bounded by the picture, not the radius")
    }
  }
}

/// A canvas that only counts what it is asked to draw.
struct CountingCanvas: Canvas {
  var spans = 0
  mutating func setColor(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8) {}
  mutating func fillRect(x: Float, y: Float, width: Float, height: Float) { spans += 1 }
  mutating func drawLine(x1: Float, y1: Float, x2: Float, y2: Float) { spans += 1 }
}

@MainActor
@Suite("Hostile values: the demo's executables")
struct HostileValueProcessTests {
  /// A slot whose only generation is a real state with a body of radius 1.6e33.
  private func hostileSlot() throws -> (saves: String, file: String) {
    var state = try HostileValueTests.realState()
    state.physics.bodies[5].radius = 1.6e33
    let saves = try temporaryFolder().path
    let receipt = try SaveStore(directory: saves).save(
      state, codec: DemoSaveFormat.codec, slot: "autosave", summary: SaveSummary()
    ).wait()
    return (saves, receipt.path)
  }

  @Test("--resume on a slot whose only save is hostile exits 1 with one line naming the field, no crash")
  func resume() throws {
    let (saves, _) = try hostileSlot()
    let result = try run("stasis-demo", ["--headless", "--resume", "--frames", "200", "--saves", saves])
    #expect(result.status == 1)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 1, "\(result.stderr)")
    #expect(lines.first?.contains("invalid state in section 'physics', field 'bodies[5].radius'") == true)
  }

  @Test("drawing a hostile save's thumbnail is refused at once, never a hang")
  func thumbnail() throws {
    let (_, file) = try hostileSlot()
    let output = try temporaryFolder().appendingPathComponent("x.png").path
    let result = try run("stasis-demo", ["--render-thumbnail", file, "--output", output], in: packageRoot)
    #expect(result.status == 1)
    #expect(result.stderr.contains("bodies[5].radius"))
    #expect(!FileManager.default.fileExists(atPath: output))
  }
}
