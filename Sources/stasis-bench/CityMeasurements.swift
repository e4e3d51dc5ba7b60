import ArgumentParser
import Foundation
import Stasis
import StasisTesting

#if canImport(Glibc)
  import Glibc
#endif

/// A large state under frequent autosave (issue 28): a city of a million agents whose 1% move
/// each tick, saved every tick or never, each in a process of its own so that its peak
/// resident memory is its own. The ratio is the target: saves every tick cost at most 2× the
/// memory of the same run without saves.
extension StasisBench {
  /// Runs the two children and prints the ratio.
  func measureAutosaveMemory(folder: String) throws -> (saving: Int, plain: Int) {
    func child(_ mode: String) throws -> Int {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
      process.arguments = [
        "--city-run", mode, "--city-agents", "\(cityAgents)", "--city-ticks", "\(cityTicks)", "--directory",
        folder + "/city-\(mode)",
      ]
      let output = Pipe()
      process.standardOutput = output
      try process.run()
      let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      guard process.terminationStatus == 0, let kib = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
        throw ValidationError("the \(mode) run failed: \(text)")
      }
      return kib
    }
    return (try child("saves"), try child("plain"))
  }

  /// One child: the city, `cityTicks` ticks of 1%, a save each tick when `saves`; prints its
  /// peak resident memory in KiB.
  func runCity(saves: Bool, folder: String) throws {
    var city = SyntheticCity(agents: cityAgents, side: 512, ledger: 1000, seed: 1)
    let store = SaveStore(directory: folder, generationsToKeep: 3)
    let codec = SaveCodec<SyntheticCity>(game: SyntheticCity.game)
    var last: SaveHandle?
    for tick in 0..<cityTicks {
      city.tick(moving: 0.01, seed: UInt64(tick + 2))
      // An autosave every tick: the snapshot is the state's value, handed to the slot's writer,
      // which writes the newest waiting one and drops those it superseded.
      if saves { last = store.save(city, codec: codec, slot: "city", summary: SaveSummary(frame: Int64(tick))) }
    }
    if let last { _ = last.wait() }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    print(usage.ru_maxrss)
  }

  /// Writes the CLI benchmark's three 16 MB saves (scripts/big-save-cli-bench.sh): a base, and
  /// ours and theirs, each 1% of the agents moved since it (and a few tiles built).
  func writeCitySaveFiles(to folder: String) throws {
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let base = SyntheticCity(agents: cityAgents, side: 512, ledger: 1000, seed: 1)
    var ours = base
    ours.tick(moving: 0.01, seed: 2)
    for tile in [5, 6, 7] { ours.grid[tile] = 200 }
    var theirs = base
    theirs.tick(moving: 0.01, seed: 3)
    theirs.grid[70_000] = 201
    for (name, city) in [("base", base), ("ours", ours), ("theirs", theirs)] {
      try Data(try city.file()).write(to: URL(fileURLWithPath: folder + "/\(name).stasis"))
    }
  }
}
