import Foundation
import Stasis
import StasisDemoGame
import StasisReplay
import StasisTestSupport
import StasisTesting
import Testing

/// Levels written for one test into a temporary folder.
private func library(_ levels: [String]) throws -> LevelLibrary {
  let folder = try temporaryFolder()
  for (index, json) in levels.enumerated() {
    try Data(json.utf8).write(to: folder.appendingPathComponent("level\(index + 1).json"))
  }
  return LevelLibrary(folder: folder.path)
}

private func level(
  collectibles: String = "[]", goal: String = #"{"minX": 90, "minY": 0, "maxX": 95, "maxY": 3}"#, extra: String = ""
) -> String {
  """
  {"name": "test", "gravity": {"x": 0, "y": -20},
   "bounds": {"minX": -5, "minY": -10, "maxX": 100, "maxY": 20}, "spawn": {"x": 1, "y": 0.5},
   "goal": \(goal), "boxes": [{"minX": -5, "minY": -1, "maxX": 100, "maxY": 0}], "segments": [],
   "collectibles": \(collectibles), "checkpoints": [20, 40]\(extra)}
  """
}

@MainActor
@Suite("Game rules")
struct GameRulesTests {
  static let assets = LevelLibrary(folder: packageRoot.appendingPathComponent("Assets/levels").path)

  @Test("the shipped levels load; the third has at least 5,000 dynamic bodies")
  func shippedLevels() throws {
    for index in 1...4 { _ = try Self.assets.load(index) }
    #expect(try Self.assets.load(3).bodyCount >= 5000)
  }

  @Test("collectibles add their value times the combo multiplier, which grows, then decays")
  func scoring() throws {
    let items = #"[{"x": 2, "y": 0.5, "value": 10}, {"x": 3, "y": 0.5, "value": 10}, {"x": 4, "y": 0.5, "value": 10}]"#
    var engine = try Engine(library: try library([level(collectibles: items)]), level: 1, seed: 1)
    var steps = 0
    while engine.state.score.collected < 3 && steps < 300 {
      engine.step(Input(right: true))
      steps += 1
    }
    #expect(engine.state.score.collected == 3)
    #expect(engine.state.score.points == 10 * 1 + 10 * 2 + 10 * 3)
    #expect(engine.state.score.multiplier == 4)
    #expect(engine.state.score.highScore == 60)
    for _ in 0..<(Int(ScoreState.comboWindow * 60) + 5) { engine.step(Input()) }
    #expect(engine.state.score.multiplier == 3, "after the combo window it decays by one")
    for _ in 0..<(3 * 60) { engine.step(Input()) }
    #expect(engine.state.score.multiplier == 1, "and down to 1, no further")
    #expect(engine.state.score.points == 60, "decay never takes points away")
  }

  @Test("passing a checkpoint moves the respawn point; a fall respawns there and resets the multiplier")
  func checkpoints() throws {
    var engine = try Engine(library: try library([level()]), level: 1, seed: 1)
    while engine.state.physics.bodies[0].x < 21 { engine.step(Input(right: true)) }
    #expect(engine.state.level.checkpoint == 0)
    var fallen = engine.snapshot()
    fallen.physics.bodies[0].position = Vector(30, -20)
    fallen.score.multiplier = 4
    try engine.restore(fallen)
    engine.step(Input())
    #expect(engine.state.physics.bodies[0].x == 20)
    #expect(engine.state.score.multiplier == 1)
  }

  @Test("reaching the goal finishes the level and loads the next, keeping the score")
  func goal() throws {
    let near = #"{"minX": 3, "minY": 0, "maxX": 6, "maxY": 3}"#
    let items = #"[{"x": 2, "y": 0.5, "value": 10}]"#
    var engine = try Engine(
      library: try library([level(collectibles: items, goal: near), level(extra: #", "zoom": 0.5"#)]), level: 1, seed: 1
    )
    for _ in 0..<120 where engine.state.level.index == 1 { engine.step(Input(right: true)) }
    #expect(engine.state.level.index == 2)
    #expect(engine.state.level.levelsFinished == 1)
    #expect(engine.state.score.points == 10)
    #expect(engine.state.level.levelFrame == 0)
    #expect(engine.state.camera.zoom == 0.5)
  }

  @Test("the camera follows the player but never shows outside the level's bounds")
  func cameraBounds() throws {
    var engine = try Engine(library: Self.assets, level: 1, seed: 3)
    let bounds = engine.level.bounds
    for _ in 0..<900 {
      engine.step(engine.autopilotInput())
      let half = Engine.halfView(zoom: engine.state.camera.zoom)
      let camera = engine.state.camera.position
      #expect(camera.x - half.x >= bounds.minX - 0.001 && camera.x + half.x <= bounds.maxX + 0.001)
      #expect(camera.y - half.y >= bounds.minY - 0.001 && camera.y + half.y <= bounds.maxY + 0.001)
    }
    // Right against the far edge, the camera stops at the bound rather than centring the player.
    var edge = engine.snapshot()
    edge.physics.bodies[0].position = Vector(bounds.maxX - 0.6, 1)
    try engine.restore(edge)
    for _ in 0..<120 { engine.step(Input()) }
    #expect(abs(engine.state.camera.position.x - (bounds.maxX - Engine.halfView(zoom: 1).x)) < 0.01)
  }

  @Test("the camera's whole state is saved: the first step after a restore moves it as before")
  func cameraRestores() throws {
    var engine = try Engine(library: Self.assets, level: 1, seed: 3)
    for _ in 0..<200 { engine.step(engine.autopilotInput()) }
    let snapshot = engine.snapshot()
    let bytes = SaveFileFormat.encode(
      try DemoSaveFormat.codec.document(for: snapshot, summary: SaveSummary(), createdAt: 0))
    let restored = try DemoSaveFormat.codec.state(from: try SaveFileFormat.decode(bytes))
    #expect(restored.camera == snapshot.camera)
    var other = try Engine(library: Self.assets, level: 1, seed: 99)
    try other.restore(restored)
    engine.step(Input(right: true))
    other.step(Input(right: true))
    #expect(other.state.camera == engine.state.camera)
    #expect(other.state.digest == engine.state.digest)
  }

  @Test("a bad level file gets a clear error naming the file and the field")
  func levelErrors() throws {
    let cases: [(String, String)] = [
      (#"{"name": 3}"#, "name"),
      (level().replacingOccurrences(of: #""spawn": {"x": 1, "y": 0.5}"#, with: #""spawn": {"x": 1}"#), "spawn.y"),
      (
        level(extra: #", "bodyGrids": [{"x": 0, "y": 0, "columns": 2, "rows": 2, "spacing": 1, "radius": 3}]"#),
        "bodyGrids[0].radius"
      ),
      (level().replacingOccurrences(of: #""checkpoints": [20, 40]"#, with: #""checkpoints": [40, 20]"#), "checkpoints"),
      (
        level().replacingOccurrences(of: #""spawn": {"x": 1, "y": 0.5}"#, with: #""spawn": {"x": 500, "y": 0.5}"#),
        "spawn"
      ),
    ]
    for (json, field) in cases {
      let library = try library([json])
      do {
        _ = try library.load(1)
        Issue.record("accepted a level with a bad \(field)")
      } catch {
        #expect(error.field == field, "\(error)")
        #expect(error.file == library.path(of: 1))
        #expect(error.description.hasPrefix("\(library.path(of: 1)): field '\(field)'"))
      }
    }
    #expect(throws: LevelError.self) { try LevelLibrary(folder: "/nonexistent").load(1) }
  }

  @Test("snapshot and restore are cheap copies; the rollback ring keeps the last 9 states")
  func rollbackRing() throws {
    let store = SaveStore(directory: try temporaryFolder().path)
    let game = Game(engine: try Engine(library: Self.assets, level: 2, seed: 4), store: store, slot: "ring")
    let app = Application(delegate: game.coordinator, configuration: .init(clock: ManualClock()))
    app.launch()
    for _ in 0..<20 { game.tick(app) }
    #expect(game.rollback.states.count == 9)
    let before = game.rollback.states[game.rollback.states.count - 5]
    #expect(game.rollBack(steps: 5))
    #expect(game.engine.state == before)
    #expect(game.engine.state.level.runFrame == 15)
    #expect(!game.rollBack(steps: 9), "only 4 states are left behind this one")
  }

  @Test("a power-up is part of the next step's input: the run's replay plays back across it")
  func powerUpInTheReplay() throws {
    let store = SaveStore(directory: try temporaryFolder().path)
    let game = Game(engine: try Engine(library: Self.assets, level: 2, seed: 4), store: store, slot: "power")
    let app = Application(delegate: game.coordinator, configuration: .init(clock: ManualClock()))
    app.launch()
    game.recordReplay(named: "power", seed: 4, continuing: false, application: app)
    for tick in 1...240 {
      if tick == 100 { game.applyPowerUp() }
      game.tick(app)
      if tick == 100 { #expect(game.engine.state.score.multiplier == ScoreState.maxMultiplier, "applied at the step") }
    }
    let replay = try #require(game.replay)
    replay.flush(keyframing: game.engine.state)
    try replay.waitUntilWritten()
    let file = try ReplayFile(contentsOf: replay.path)
    #expect(
      try Replay(file, codec: DemoSaveFormat.codec(levels: Self.assets), input: ReplayInput.self).inputs[99].powerUp)
    let stepper = try ReplayStepper(library: Self.assets)
    let verifier = ReplayVerifier(
      codec: DemoSaveFormat.codec(levels: Self.assets), digest: GameState.replayScope, step: stepper.step)
    let result = try verifier.verify(file)
    #expect(result.matched, "\(result.divergence?.report.summary ?? "")")
    #expect(result.digestsCompared == 240)
  }
}
