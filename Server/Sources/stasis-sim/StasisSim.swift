import ArgumentParser
import Foundation
import StasisSimulation

/// `stasis-sim`: devices, a server, disks, clocks and faults from a seed; the invariants
/// checked after every operation. A failure prints its seed and trace; `--seed N --trace`
/// replays it.
@main
struct StasisSim: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stasis-sim",
    abstract: "Runs Stasis's devices and server under faults from seeds, checking every invariant.")

  @Option(help: "Run this one seed (replays a failure exactly).")
  var seed: UInt64?

  @Option(help: "Run fresh seeds for this many seconds.")
  var seconds: Double?

  @Option(
    help: ArgumentHelp(
      "Run this fixed range of seeds, such as 1-500: the same range gives the same verdict on every run (what CI runs).",
      valueName: "first-last"))
  var seeds: String?

  @Option(help: "Operations per seed.")
  var operations: Int = 150

  @Option(
    help: ArgumentHelp(
      "End the run with exit 1, naming the seed, when one seed runs this long (a hang is a failure, never a stalled run).",
      valueName: "seconds"))
  var seedTimeout: Double = 300

  @Flag(help: "Print every operation as it runs.")
  var trace = false

  @Option(
    help: ArgumentHelp(
      "How the games' loops wait for their syncs: never-yields (blocks its own thread, never awaits; the default) or awaits.",
      valueName: "loop"))
  var loop: String = GameLoop.neverYields.rawValue

  @Option(help: "Plant a known bug (\(PlantedBug.allCases.map(\.rawValue).joined(separator: ", "))) to see it found.")
  var plant: String?

  @Option(
    help: ArgumentHelp(
      "Run the server on PostgreSQL, in a database of each seed's own made on this server (its role needs CREATEDB), instead of SQLite.",
      valueName: "postgres://user:password@host:port/database"))
  var postgres: String?

  func validate() throws {
    let modes = [seed != nil, seconds != nil, seeds != nil].filter { $0 }.count
    if modes != 1 { throw ValidationError("give one of --seed N, --seeds FIRST-LAST or --seconds N") }
    if let seeds, Self.range(seeds) == nil {
      throw ValidationError("--seeds wants FIRST-LAST with FIRST <= LAST, such as 1-500; got '\(seeds)'")
    }
    if let plant, PlantedBug(rawValue: plant) == nil { throw ValidationError("no planted bug named '\(plant)'") }
    if plant != nil, !Simulation.canPlant {
      throw ValidationError(
        "this stasis-sim was built without the SimulationSeams trait: build it with --traits SimulationSeams")
    }
    if GameLoop(rawValue: loop) == nil {
      throw ValidationError(
        "--loop is one of \(GameLoop.allCases.map(\.rawValue).joined(separator: ", ")); got '\(loop)'")
    }
    if operations < 1 { throw ValidationError("--operations must be at least 1") }
    if !(seedTimeout > 0 && seedTimeout <= 86_400) {
      throw ValidationError("--seed-timeout must be more than 0 seconds and at most a day (86400)")
    }
  }

  func run() async throws {
    let bug = plant.flatMap(PlantedBug.init(rawValue:))
    let watchdog = Watchdog(limit: seedTimeout)
    if let seed {
      watchdog.watch(seed: seed, replay: replayCommand(seed: seed))
      let result = await Simulation.run(
        seed: seed, operations: operations, planting: bug, loop: gameLoop, database: database, echo: trace)
      print(Self.summary([result], seconds: nil))
      if let failure = result.failure {
        report(result, failure)
        throw ExitCode(1)
      }
      return
    }
    let start = Date()
    if let seeds, let range = Self.range(seeds) {
      try await runEach(of: range, planting: bug, watchdog: watchdog, since: start) { _ in true }
    } else {
      let budget = seconds ?? 60
      let fresh = UInt64(start.timeIntervalSince1970 * 1000) & 0xFFFF_FFFF
      try await runEach(of: fresh..., planting: bug, watchdog: watchdog, since: start) { _ in
        Date().timeIntervalSince(start) < budget
      }
    }
  }

  /// Runs seeds in order while `more` says so; the first broken one ends the run with exit 1.
  private func runEach(
    of seeds: some Sequence<UInt64>, planting bug: PlantedBug?, watchdog: Watchdog, since start: Date,
    while more: (UInt64) -> Bool
  ) async throws {
    var results: [SimulationResult] = []
    for next in seeds {
      guard more(next) else { break }
      watchdog.watch(seed: next, replay: replayCommand(seed: next))
      let result = await Simulation.run(
        seed: next, operations: operations, planting: bug, loop: gameLoop, database: database)
      results.append(result)
      if let failure = result.failure {
        print(Self.summary(results, seconds: Date().timeIntervalSince(start)))
        report(result, failure)
        throw ExitCode(1)
      }
    }
    print(Self.summary(results, seconds: Date().timeIntervalSince(start)))
  }

  private var gameLoop: GameLoop { GameLoop(rawValue: loop) ?? .neverYields }

  private var database: SimulatedDatabase { postgres.map { .postgres(url: $0) } ?? .sqlite }

  /// `FIRST-LAST`, both included.
  static func range(_ text: String) -> ClosedRange<UInt64>? {
    let parts = text.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, let first = UInt64(parts[0]), let last = UInt64(parts[1]), first <= last else {
      return nil
    }
    return first...last
  }

  private func report(_ result: SimulationResult, _ failure: String) {
    print("FAILED seed \(result.seed): \(failure)")
    print("trace:")
    for line in result.trace { print("  \(line)") }
    print("replay: " + replayCommand(seed: result.seed))
  }

  private func replayCommand(seed: UInt64) -> String {
    "stasis-sim --seed \(seed) --operations \(operations) --trace"
      + (gameLoop == .neverYields ? "" : " --loop \(loop)") + (plant.map { " --plant \($0)" } ?? "")
      + (postgres.map { " --postgres \($0)" } ?? "")
  }

  static func summary(_ results: [SimulationResult], seconds: Double?) -> String {
    let sum = { (key: KeyPath<SimulationResult, Int>) in results.reduce(0) { $0 + $1[keyPath: key] } }
    let failed = results.filter { $0.failure != nil }.count
    return "stasis-sim: \(results.count) seeds, \(sum(\.operations)) operations, \(sum(\.kills)) kills, "
      + "\(sum(\.faults)) faults, \(sum(\.conflicts)) conflicts (\(sum(\.merges)) merged, "
      + "\(sum(\.unrelated)) across unrelated histories), \(sum(\.deltaUploads)) delta uploads, "
      + "\(sum(\.parts)) parts (\(sum(\.resumptions)) resumed), \(sum(\.replaysVerified)) replays played back "
      + "(\(sum(\.replayedTicks)) frames), \(sum(\.checks)) invariant checks, "
      + "\(sum(\.skippedChecks)) skipped, \(failed) broken" + (seconds.map { String(format: " in %.0f s", $0) } ?? "")
  }
}
