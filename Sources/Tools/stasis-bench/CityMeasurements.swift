import ArgumentParser
import Foundation
import Stasis
import StasisTesting

#if canImport(Glibc)
  import Glibc
#endif

/// A large state under frequent autosave (issue 28): a city of a million agents whose 1% move
/// each tick, autosaved every tick by a `SaveCoordinator` or never, each run in a process of its
/// own so that its peak resident memory is its own. The ratio is the target: autosaves every
/// tick cost at most 2× the memory of the same run without saves.
extension StasisBench {
  /// The three runs: without saves, and an autosave every tick that skips or waits while a
  /// save is being written (``AutosaveOverlap``). Peak resident memory of each, in KiB.
  func measureAutosaveMemory(folder: String) throws -> (skip: Int, wait: Int, plain: Int) {
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
    return (try child("skip"), try child("wait"), try child("plain"))
  }

  /// One child: the city, `cityTicks` ticks of 1%, an autosave every tick unless `mode` is
  /// `plain`, then a last save of the final state; prints its peak resident memory in KiB.
  func runCity(mode: String, folder: String) throws {
    try MainActor.assumeIsolated {
      let game = CityGame(SyntheticCity(agents: cityAgents, side: 512, ledger: 1000, seed: 1))
      let coordinator = SaveCoordinator(
        game: game, store: SaveStore(directory: folder, generationsToKeep: 3),
        codec: SaveCodec<SyntheticCity>(game: SyntheticCity.game), slot: "city")
      coordinator.autosaveInterval = mode == "plain" ? 0 : 1
      coordinator.autosaveOverlap = mode == "wait" ? .wait : .skip
      for tick in 0..<cityTicks {
        game.city.tick(moving: 0.01, seed: UInt64(tick + 2))
        coordinator.didStep(frame: Int64(tick + 1))
      }
      coordinator.waitForSaves()
      if mode != "plain" {
        // The final state is saved, as a quit would: nothing the run reached is left unsaved.
        _ = coordinator.saveNow(.terminate)
        coordinator.waitForSaves()
        let written = coordinator.events.contains {
          if case .saved(_, let receipt, _) = $0 { return receipt.outcome == .written }
          return false
        }
        guard written, !coordinator.events.contains(where: { if case .saveFailed = $0 { true } else { false } })
        else { throw ValidationError("the city's saves failed: \(coordinator.events)") }
      }
    }
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    print(usage.ru_maxrss)
  }

  /// The city's costs on each thread, measured in this process: encoding its 16 MB save on the
  /// worker against a `memcpy` of the file, the main thread's part of an autosave (the snapshot
  /// and the hand-off, in `didStep`), and the copy the game's next tick then makes of the agents
  /// the snapshot still holds. Medians in milliseconds.
  func measureCityThreads(folder: String) throws -> (encode: Double, memcpy: Double, mainThread: Double, copy: Double) {
    let codec = SaveCodec<SyntheticCity>(game: SyntheticCity.game)
    let city = SyntheticCity(agents: cityAgents, side: 512, ledger: 1000, seed: 1)
    let file = try city.file()
    var destination = [UInt8](repeating: 0, count: file.count)
    // Each side measured on its own, warm: run by turns, the encoding evicts the memcpy's
    // buffers and the memcpy comes out half as slow again, which would flatter the ratio.
    let memcpyMs = median(runs: 31) {
      file.withUnsafeBytes { source in destination.withUnsafeMutableBytes { $0.copyMemory(from: source) } }
      consume(destination)
    }
    // What the store's worker does: the tree, then the file, its bulk arrays checksummed where
    // they are and written from there (`SaveFileBytes`).
    var buffer: [UInt8] = []
    let encodeMs = try median(runs: 31) {
      let document = try codec.document(for: city, summary: SaveSummary(), createdAt: 0)
      let (file, _) = SaveFileFormat.encodeFile(document, reusing: &buffer)
      buffer = file.buffer
    }
    let (mainMs, copyMs) = MainActor.assumeIsolated { () -> (Double, Double) in
      let game = CityGame(city)
      let coordinator = SaveCoordinator(
        game: game, store: SaveStore(directory: folder + "/city-threads"), codec: codec, slot: "city")
      coordinator.autosaveInterval = 1
      coordinator.autosaveOverlap = .skip
      let clock = SystemClock()
      var main: [Double] = []
      var copies: [Double] = []
      for tick in 0..<15 {
        coordinator.waitForSaves()  // the writer is free: this tick's autosave is taken
        var start = clock.now()
        coordinator.didStep(frame: Int64(tick + 1))
        main.append((clock.now() - start).inMilliseconds)
        start = clock.now()
        game.city.agents[tick].mood &+= 1  // the first write after the snapshot copies the agents
        copies.append((clock.now() - start).inMilliseconds)
      }
      coordinator.waitForSaves()
      return (main.sorted()[main.count / 2], copies.sorted()[copies.count / 2])
    }
    return (encodeMs, memcpyMs, mainMs, copyMs)
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

/// The city as a game the coordinator saves: its state is the city's value.
@MainActor
final class CityGame: SaveableGame {
  var city: SyntheticCity
  var isPaused = false

  init(_ city: SyntheticCity) { self.city = city }

  func snapshot() -> SyntheticCity { city }
  func restore(_ state: SyntheticCity) throws { city = state }
}
