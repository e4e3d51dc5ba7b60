import ArgumentParser
import Foundation
import Stasis

/// What cloud sync costs the demo game's main thread, against a real server in this process
/// (`stasis-bench` measures the save path without a network; this needs the server's package).
@main
struct StasisSyncBench: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stasis-sync-bench",
    abstract: "Measure an autosave's main-thread part with and without its upload, and a trip to the background.",
    discussion: """
      Run it from the repository in release (it reads the demo's levels in Assets/levels):
        swift run -c release --package-path Server stasis-sync-bench
      The deltas' table (a city of --agents agents) says, per row, whether its target is met;
      the command exits 1 when one is not.
      """)

  @Option(help: "Folder for the saves and the server's database (default: a temporary folder).")
  var directory: String?

  @Option(help: "Agents in the city whose deltas are measured (1,000,000: a 16 MB save).")
  var agents = 1_000_000

  @Flag(help: "Measure only the deltas (cost follows change), not the demo's autosave and trips.")
  var deltasOnly = false

  @Option(help: "The HTTP transport: urlsession (the default, Foundation's) or asynchttpclient.")
  var transport: BenchTransport = .urlsession

  func run() throws {
    let folder = directory ?? NSTemporaryDirectory() + "stasis-sync-bench-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { if directory == nil { try? FileManager.default.removeItem(atPath: folder) } }
    if !deltasOnly {
      guard let report = try MainActor.assumeIsolated({ try measureCloud(folder: folder) }) else {
        throw ValidationError("run from the repository: Assets/levels holds the demo's levels")
      }
      printCloud(report)
    }
    print("transport: \(transport.rawValue)")
    let deltas = try measureDeltas(folder: folder, agents: agents)
    printDeltas(deltas)
    if deltas.rows.contains(where: { !$0.met }) { throw ExitCode(1) }
  }
}
