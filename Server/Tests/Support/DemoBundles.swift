import Foundation
import Stasis
import StasisDemoGame
import StasisReplay

/// Desync bundles as the demo makes them: a short run recorded (`ReplayRecorder`), then verified
/// by a step with a one-ulp drift planted at `desyncAt` (`--desync-at`), which finds it.
enum DemoBundles {
  /// A bundle of a `ticks`-tick run from `seed` whose replay drifts at `desyncAt`, and the
  /// report's differences.
  static func make(ticks: Int = 240, desyncAt: Int64 = 100, seed: UInt64 = 5) throws -> (
    bytes: [UInt8], bundle: DesyncBundle
  ) {
    let (replay, library, codec) = try record(ticks: ticks, seed: seed)
    let stepper = try ReplayStepper(library: library, desyncAt: desyncAt)
    let verifier = ReplayVerifier(codec: codec, digest: GameState.replayScope, step: stepper.step)
    guard let bundle = try verifier.verify(try ReplayFile(bytes: replay)).divergence else {
      throw ServerTestError("the planted drift at tick \(desyncAt) was not found")
    }
    return (try bundle.encoded(), bundle)
  }

  /// A replay file of a `ticks`-tick run from `seed`, as the demo records one.
  static func replay(ticks: Int = 240, seed: UInt64 = 5) throws -> [UInt8] {
    try record(ticks: ticks, seed: seed).bytes
  }

  private static func record(ticks: Int, seed: UInt64) throws -> (
    bytes: [UInt8], library: LevelLibrary, codec: SaveCodec<GameState>
  ) {
    let folder = temporaryURL("bundle").path
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let library = DemoSaves.library
    let codec = DemoSaveFormat.codec(levels: library)
    var engine = try Engine(library: library, level: 1, seed: seed)
    let recorder = try ReplayRecorder<GameState, ReplayInput>(
      "run", store: SaveStore(directory: folder), codec: codec, start: engine.state,
      startTick: engine.state.level.runFrame, seed: seed, digest: GameState.replayScope, keyframeInterval: 60)
    for tick in 0..<ticks {
      let input = Input(right: true, jump: tick % 45 == 0)
      _ = engine.step(input)
      recorder.record(ReplayInput(input, autopilot: false), reaching: engine.state)
    }
    recorder.flush(keyframing: engine.state)
    try recorder.waitUntilWritten()
    return ([UInt8](try Data(contentsOf: URL(fileURLWithPath: recorder.path))), library, codec)
  }
}
