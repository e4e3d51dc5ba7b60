import Foundation
import Stasis
import StasisDemoGame
import StasisMerge
import StasisTestSupport
import Testing

@Suite("The demo's merge declarations")
struct DemoMergeTests {
  static let assets = LevelLibrary(folder: packageRoot.appendingPathComponent("Assets/levels").path)

  private func played(_ engine: Engine, frames: Int, _ input: Input) -> GameState {
    var engine = engine
    for _ in 0..<frames { engine.step(input) }
    return engine.snapshot()
  }

  private func document(_ state: GameState, playTime: Double) throws -> SaveDocument {
    try DemoSaveFormat.codec.document(for: state, summary: SaveSummary(playTime: playTime), createdAt: 0)
  }

  @Test("high score and levels finished by max; the physics world and the camera together, from one side")
  func declared() throws {
    var engine = try Engine(library: Self.assets, level: 1, seed: 1)
    for _ in 0..<30 { engine.step(Input()) }
    let base = engine.snapshot()
    var ours = played(engine, frames: 90, Input(right: true))  // ran right
    ours.score.highScore = 500
    ours.level.levelsFinished = 2
    var theirs = played(engine, frames: 60, Input(left: true, jump: true))  // jumped left
    theirs.score.highScore = 700
    theirs.level.levelsFinished = 1
    #expect(ours.physics != theirs.physics && ours.camera != theirs.camera, "both moved the world")
    let (b, o, t) = (
      try document(base, playTime: 1), try document(ours, playTime: 3), try document(theirs, playTime: 2)
    )
    for (fallback, side) in [(MergeSide.ours, ours), (.theirs, theirs)] {
      let outcome = ThreeWayMerge.merge(
        base: b, ours: o, theirs: t, rules: DemoSaveFormat.mergeRules, fallback: fallback, createdAt: 1)
      let merged = try DemoSaveFormat.codec.state(from: try #require(outcome.document))
      #expect(merged.physics == side.physics && merged.camera == side.camera, "one side's world: \(fallback)")
      #expect(merged.score.highScore == 700, "max")
      #expect(merged.level.levelsFinished == 2, "max")
      #expect(merged.level.runFrame == side.level.runFrame, "the rest of the level: the same side's")
      try merged.validate()
    }
    // Each side moved a different member of the group: still one side's world, never a mix.
    var cameraOnly = base
    cameraOnly.camera.zoom *= 2
    let physicsOnly = played(engine, frames: 30, Input(right: true))
    var physicsMoved = physicsOnly
    physicsMoved.camera = base.camera
    let outcome = ThreeWayMerge.merge(
      base: b, ours: try document(cameraOnly, playTime: 1), theirs: try document(physicsMoved, playTime: 2),
      rules: DemoSaveFormat.mergeRules, fallback: .ours, createdAt: 1)
    let merged = try DemoSaveFormat.codec.state(from: try #require(outcome.document))
    #expect(merged.physics == base.physics, "ours' world: its physics is the base's, not theirs'")
    #expect(merged.camera == cameraOnly.camera)
    #expect(
      outcome.sections.first { $0.name == "physics" }?.description
        == "physics: ours (group physics+camera: both changed it: policy: ours)")
  }
}
