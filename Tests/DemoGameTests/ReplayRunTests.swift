import Foundation
import StasisTestSupport
import Testing

/// Issue 45 on the built demo: every run is recorded, one replay across a background trip, a
/// kill while suspended and a cold restore; it verifies in a new process and in the other build;
/// a planted one-ulp drift is found at its exact tick.
@Suite("The demo's replays", .serialized)
struct ReplayRunTests {
  /// A run of `frames` steps on level 1 sent to the background at `at` and killed there, then a
  /// cold `--resume` to the end; returns the save folder and the digest the run ended on.
  private func recordAcrossAKill(frames: Int, at: Int, seed: Int) throws -> (saves: String, replay: String) {
    let saves = try temporaryFolder().path
    let common = ["--headless", "--seed", "\(seed)", "--autosave", "0", "--saves", saves]
    // The recording build: the one next to the tests (debug locally and in CI).
    let demo = "stasis-demo"
    let killed = try runBuilt(
      demo, withDefaultTraits: true,
      common + ["--frames", "\(frames)", "--background-at", "\(at)", "--terminate-in-background"])
    #expect(killed.status == 0, "\(killed.stderr)")
    let resumed = try runBuilt(demo, withDefaultTraits: true, common + ["--resume", "--frames", "\(frames)"])
    #expect(resumed.status == 0, "\(resumed.stderr)")
    return (saves, saves + "/replays/autosave.stasis")
  }

  private func runBuilt(_ name: String, withDefaultTraits: Bool, _ arguments: [String]) throws -> ProcessResult {
    try run(name, arguments, withDefaultTraits: withDefaultTraits)
  }

  @Test("one replay across a background trip, a kill while suspended and a cold restore verifies in a new process")
  func acrossAKill() throws {
    let (_, replay) = try recordAcrossAKill(frames: 900, at: 333, seed: 5)
    let info = try run("stasis", ["replay", "info", replay])
    #expect(info.status == 0, "\(info.stderr)")
    #expect(info.lines.contains("ticks: 900, from 0 to 900 (15 s)"), "\(info.stdout)")
    #expect(info.lines.contains("resumed in a new process at: 333"), "one replay across the kill")
    #expect(info.lines.contains("digests: 900, every tick, over 'demo state, v1'"))
    #expect(info.lines.contains("inputs: bulk"))

    // A new process, and the other build (in CI the release demo, which scripts/test.sh built).
    let verified = try run("stasis-demo", ["--verify-replay", replay])
    #expect(verified.status == 0, "\(verified.stdout) \(verified.stderr)")
    // Keyframes: at the background (333), every 600 ticks, and at the end (900).
    #expect(verified.lines.last == "replay verified: 900 ticks from 0, 900 digests and 3 keyframes, every one equal")
    let sameBuild = try runBuilt("stasis-demo", withDefaultTraits: true, ["--verify-replay", replay])
    #expect(sameBuild.status == 0, "\(sameBuild.stdout) \(sameBuild.stderr)")
  }

  @Test("a one-ulp drift planted at a random tick is found at that tick; the bundle's diff names the fields")
  func plantedDrift() throws {
    var random = SystemRandomNumberGenerator()
    let tick = Int.random(in: 2...899, using: &random)
    let (_, replay) = try recordAcrossAKill(frames: 900, at: 400, seed: 9)
    let result = try run("stasis-demo", ["--verify-replay", replay, "--desync-at", "\(tick)"])
    #expect(result.status == 1, "tick \(tick): \(result.stdout) \(result.stderr)")
    #expect(result.lines.first == "first divergence at tick \(tick)", "planted at \(tick): \(result.stdout)")
    let bundleLine = try #require(result.lines.last { $0.hasPrefix("desync bundle: ") })
    let bundle = String(bundleLine.dropFirst("desync bundle: ".count))
    #expect(bundle.hasSuffix("/replays/autosave.desync.stasis"))
    let diff = try run("stasis", ["replay", "diff", bundle])
    #expect(diff.status == 1)
    #expect(diff.lines.first == "first divergence at tick \(tick)")
    // The recorded state is known at the keyframes: the background's (400), 600, and the end's.
    let compared = [400, 600, 900].first { $0 >= tick } ?? 900
    #expect(
      diff.lines.contains(
        compared == tick
          ? "recorded → replayed at tick \(tick):"
          : "recorded → replayed at tick \(compared) (the first keyframe after it):"),
      "\(diff.stdout)")
    // The player's body differs there, unless one ulp healed before the keyframe (seen in CI: a
    // drift at tick 18 gone by the keyframe at 400), which the diff then says.
    #expect(
      diff.lines.contains { $0.hasPrefix("physics.bodies: ") }
        || diff.lines.contains("the states agree again at tick \(compared): the divergence healed before it"),
      "\(diff.stdout)")
  }

  @Test("a drift in the recorded run is found by a clean verifier, at its tick")
  func driftInTheRecording() throws {
    let saves = try temporaryFolder().path
    let recorded = try run(
      "stasis-demo", ["--headless", "--frames", "300", "--autosave", "0", "--desync-at", "123", "--saves", saves])
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let result = try run("stasis-demo", ["--verify-replay", saves + "/replays/autosave.stasis"])
    #expect(result.status == 1)
    #expect(result.lines.first == "first divergence at tick 123", "\(result.stdout)")
  }

  @Test("--replay FILE --seek TICK reaches the recorded run's state at that tick from the keyframe before it")
  func seeks() throws {
    let saves = try temporaryFolder().path
    let recorded = try run(
      "stasis-demo", ["--headless", "--level", "2", "--frames", "1500", "--autosave", "0", "--saves", saves])
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let direct = try run(
      "stasis-demo",
      [
        "--headless", "--level", "2", "--frames", "1234", "--autosave", "0", "--print-digest", "--no-replay", "--saves",
        try temporaryFolder().path,
      ])
    let sought = try run(
      "stasis-demo", ["--replay", saves + "/replays/autosave.stasis", "--seek", "1234", "--print-digest"])
    #expect(sought.status == 0, "\(sought.stderr)")
    #expect(
      sought.lines.first?.hasPrefix("replayed from the keyframe at tick 1200, 34 steps: frame 1234, level 2") == true)
    #expect(sought.lines.last == direct.lines.last, "the state at 1234, bit for bit (SHA-256 of its encoding)")
  }

  @Test("a --resume that restores a tick before the replay's end keeps the replay and records a new one")
  func resumeBehindTheReplay() throws {
    let saves = try temporaryFolder().path
    // Autosaves every second (60 steps): the newest save is of step 300, the replay ends at 330.
    let first = try run("stasis-demo", ["--headless", "--frames", "330", "--autosave", "1", "--saves", saves])
    #expect(first.status == 0, "\(first.stderr)")
    let resumed = try run(
      "stasis-demo", ["--headless", "--resume", "--frames", "400", "--autosave", "0", "--saves", saves])
    #expect(resumed.status == 0, "\(resumed.stderr)")
    let kept = try run("stasis-demo", ["--verify-replay", saves + "/replays/autosave.stasis"])
    #expect(kept.lines.last == "replay verified: 330 ticks from 0, 330 digests and 1 keyframes, every one equal")
    let next = try run("stasis-demo", ["--verify-replay", saves + "/replays/autosave-from-300.stasis"])
    #expect(next.lines.last == "replay verified: 100 ticks from 300, 100 digests and 1 keyframes, every one equal")
  }

  @Test("--no-replay records nothing")
  func noReplay() throws {
    let saves = try temporaryFolder().path
    let result = try run("stasis-demo", ["--headless", "--frames", "60", "--no-replay", "--saves", saves])
    #expect(result.status == 0)
    #expect(!FileManager.default.fileExists(atPath: saves + "/replays"))
    let recorded = try run("stasis-demo", ["--headless", "--frames", "60", "--saves", saves])
    #expect(recorded.status == 0)
    #expect(FileManager.default.fileExists(atPath: saves + "/replays/autosave.stasis"), "recorded by default")
  }

  @Test("--replay-digest-every 60: the demo's ten minutes take at most 16 KB apart from keyframes, and verify")
  func tenMinutesCompact() throws {
    let saves = try temporaryFolder().path
    let run10 = try run(
      "stasis-demo",
      [
        "--headless", "--level", "2", "--frames", "36000", "--replay-digest-every", "60", "--autosave", "0", "--saves",
        saves,
      ])
    #expect(run10.status == 0, "\(run10.stderr)")
    let replay = saves + "/replays/autosave.stasis"
    let info = try run("stasis", ["replay", "info", replay])
    #expect(info.lines.contains("digests: 600, every 60 ticks, over 'demo state, v1'"), "\(info.stdout)")
    func part(_ name: String) -> Int {
      info.lines.first { $0.hasPrefix("  \(name): ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? Int.max / 4
    }
    let apart = part("replay") + part("inputs") + part("digests")
    #expect(apart <= 16 * 1024, "manifest, inputs and digests: \(apart) bytes\n\(info.stdout)")
    let verified = try run("stasis-demo", ["--verify-replay", replay])
    #expect(verified.status == 0, "\(verified.stdout)")
  }
}
