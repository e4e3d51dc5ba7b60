import Foundation
import Stasis
import StasisDemoGame
import StasisTestSupport
import StasisTesting
import Testing

@Suite("Kill -9 soak")
struct KillSoakTests {
  /// 200 kills in CI; STASIS_SOAK_KILLS asks for more.
  static let kills = Int(ProcessInfo.processInfo.environment["STASIS_SOAK_KILLS"] ?? "") ?? 200
  /// The seed of the kill moments: fresh each run, printed first; STASIS_SOAK_SEED replays them
  /// (the moments after each save, not the machine's timing).
  static let seed = UInt64(ProcessInfo.processInfo.environment["STASIS_SOAK_SEED"] ?? "") ?? .random(in: 0...UInt64.max)

  @Test(
    "SIGKILL at random moments while autosaving in a tight loop: the slot always loads, and no durable save is lost")
  func soak() throws {
    let saves = try temporaryFolder().path
    let store = SaveStore(directory: saves)
    print("kill -9 soak: seed \(Self.seed) (STASIS_SOAK_SEED=\(Self.seed) draws the same kill moments)")
    var generator = SeededRandom(seed: Self.seed)
    var highestReported = 0
    var killedWhileRunning = 0
    for round in 0..<Self.kills {
      var arguments = ["--headless", "--trace", "--frames", "1000000", "--autosave", "0.05", "--saves", saves]
      if round > 0 { arguments.append("--resume") }
      let demo = try LineProcess(try builtProduct("stasis-demo"), arguments)
      // Once it has saved at least once, kill it at a random moment (the scenario, not a wait).
      _ = demo.waitForLine { $0.hasPrefix("save: autosave generation") }
      Thread.sleep(forTimeInterval: Double.random(in: 0..<0.03, using: &generator))
      kill(demo.process.processIdentifier, SIGKILL)
      demo.process.waitUntilExit()
      // The kill landed on a running game (a game that had stopped on its own would prove nothing
      // of a kill): it died of the signal.
      if demo.process.terminationReason == .uncaughtSignal, demo.process.terminationStatus == SIGKILL {
        killedWhileRunning += 1
      }
      _ = demo.waitForLine { _ in false }  // everything it printed before dying
      for line in demo.lines where line.hasPrefix("save: autosave generation") {
        highestReported = max(highestReported, Int(line.split(separator: " ")[3]) ?? 0)
      }
      let loaded = try store.load(codec: DemoSaveFormat.codec, slot: "autosave")
      #expect(
        loaded.generation >= highestReported, "seed \(Self.seed), round \(round): a save reported durable was lost")
      #expect(
        loaded.skipped.isEmpty,
        "seed \(Self.seed), round \(round): a generation on disk was torn: \(loaded.skipped.map(\.error))")
      let temporaries = try FileManager.default.contentsOfDirectory(atPath: saves + "/autosave").filter {
        $0.contains(".tmp-")
      }
      #expect(temporaries.count <= 1, "stale temporary files are cleaned by the next save")
    }
    #expect(killedWhileRunning == Self.kills, "every round's game was killed while it ran, not after it stopped")
    #expect(highestReported >= Self.kills, "each round saved at least one generation past the last round's")
    print(
      "kill -9 soak (seed \(Self.seed)): \(killedWhileRunning) kills while running, newest generation "
        + "\(highestReported), 0 lost")
  }
}

@Suite("Two processes, one slot")
struct TwoWritersTests {
  @Test("two processes autosaving to one slot never interleave: every generation is one whole save")
  func twoProcesses() throws {
    let saves = try temporaryFolder().path
    let arguments = ["--headless", "--frames", "600", "--autosave", "0.05", "--saves", saves]
    let first = try LineProcess(try builtProduct("stasis-demo"), arguments + ["--seed", "1", "--trace"])
    let second = try LineProcess(try builtProduct("stasis-demo"), arguments + ["--seed", "2", "--trace"])
    _ = first.waitForLine { _ in false }
    _ = second.waitForLine { _ in false }
    first.process.waitUntilExit()
    second.process.waitUntilExit()
    #expect(first.process.terminationStatus == 0 && second.process.terminationStatus == 0)
    let autosaves = (first.lines + second.lines).filter { $0.hasPrefix("save: autosave ") }
    #expect(autosaves.count == 2 * 200, "each run autosaved every 3 steps (written, or overtaken while waiting)")
    let reported = autosaves.filter { $0.hasPrefix("save: autosave generation") }
      .compactMap { Int($0.split(separator: " ")[3]) }
    #expect(reported.count >= 2)
    #expect(Set(reported).count == reported.count, "no generation number was given twice")
    let store = SaveStore(directory: saves)
    for generation in try store.generations(of: "autosave") {
      _ = try store.readDocument(at: store.path(of: "autosave", generation: generation))  // whole, or it throws
    }
  }
}
