import Foundation
import Stasis
import StasisDemoGame
import StasisReplay

/// `--verify-replay FILE`: the replay played through the demo's own step (``ReplayStepper``),
/// every digest compared. At the first divergence it writes the desync bundle beside the replay
/// (`NAME.desync.stasis`), prints `first divergence at tick N` and the bundle's path, and exits 1.
struct ReplayCheck {
  let file: String
  let levels: String?
  let desyncAt: Int64?

  func run() -> Int32 {
    withLevels(levels) { library in
      let replay = try ReplayFile(contentsOf: file)
      let stepper = try ReplayStepper(library: library, desyncAt: desyncAt)
      let verifier = ReplayVerifier(
        codec: DemoSaveFormat.codec(levels: library), digest: GameState.replayScope, step: stepper.step)
      let result = try verifier.verify(replay)
      guard let bundle = result.divergence else {
        print(
          "replay verified: \(result.ticks) ticks from \(replay.manifest.startTick), \(result.digestsCompared) digests "
            + "and \(replay.keyframes.count) keyframes, every one equal")
        return 0
      }
      print(bundle.report.summary)
      for line in bundle.report.differences { print(line) }
      print("desync bundle: \(try bundle.write(besides: file))")
      return 1
    }
  }
}

/// `--replay FILE`: a replay played back headless through the demo's own step, to its end or
/// to `--seek TICK`, from the keyframe at or before it; prints where it ended, and with
/// `--print-digest` the state's digest: the recorded run's at that frame.
struct ReplayPlayback {
  let file: String
  let levels: String?
  let seek: Int64?
  let printDigest: Bool

  func run() -> Int32 {
    withLevels(levels) { library in
      let replay = try Replay(
        try ReplayFile(contentsOf: file), codec: DemoSaveFormat.codec(levels: library), input: ReplayInput.self)
      let stepper = try ReplayStepper(library: library)
      var (state, from, inputs) = try replay.seek(to: seek ?? replay.manifest.endTick)
      for input in inputs { stepper.step(&state, input) }
      print(
        "replayed from the keyframe at tick \(from), \(inputs.count) steps: frame \(state.level.runFrame), "
          + "level \(state.level.index), score \(state.score.points)")
      if printDigest { print("digest: \(state.digest)") }
      return 0
    }
  }
}
