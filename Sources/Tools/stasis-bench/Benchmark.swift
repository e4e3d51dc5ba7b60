import ArgumentParser
import Foundation
import Stasis

#if canImport(Glibc)
  import Glibc
#endif

/// A physics body as the benchmark's synthetic game state holds it: 40 bytes.
struct BenchBody: BulkStorable, Equatable {
  var x: Float = 0
  var y: Float = 0
  var vx: Float = 0
  var vy: Float = 0
  var angle: Float = 0
  var angularVelocity: Float = 0
  var radius: Float = 0
  var mass: Float = 0
  var id: UInt32 = 0
  var flags: UInt32 = 0

  static let bulkLayout = BulkLayout(
    of: BenchBody.self,
    [
      .field("x", \.x), .field("y", \.y), .field("vx", \.vx), .field("vy", \.vy), .field("angle", \.angle),
      .field("angularVelocity", \.angularVelocity), .field("radius", \.radius), .field("mass", \.mass),
      .field("id", \.id), .field("flags", \.flags),
    ])
}

struct BenchScore: Codable {
  var points: Int64
  var combo: Double
}
struct BenchLevel: Codable {
  var index: Int
  var progress: Double
}
struct BenchCamera: Codable {
  var x: Double
  var y: Double
  var zoom: Double
}
struct BenchPhysics: Codable { var bodies: [BenchBody] }
struct BenchState: Codable, Sendable {
  var score: BenchScore
  var level: BenchLevel
  var camera: BenchCamera
  var physics: BenchPhysics

  init(bodies count: Int) {
    score = BenchScore(points: 1234, combo: 2)
    level = BenchLevel(index: 3, progress: 0.5)
    camera = BenchCamera(x: 1, y: 2, zoom: 1)
    var seed: UInt32 = 12345
    func next() -> Float {
      seed = seed &* 1_664_525 &+ 1_013_904_223
      return Float(seed >> 8) / Float(1 << 24) * 100
    }
    physics = BenchPhysics(
      bodies: (0..<count).map { index in
        BenchBody(
          x: next(), y: next(), vx: next(), vy: next(), angle: next(), angularVelocity: next(), radius: 0.5,
          mass: 1, id: UInt32(index), flags: UInt32(index % 4))
      })
  }
}

/// `stasis-bench`: the save path against its baselines, in one run, as ratios.
@main
struct StasisBench: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stasis-bench",
    abstract: "Measure Stasis's encode, decode, durable save and load against memcpy, write+fsync and Foundation.",
    discussion: """
      Build it in release mode: swift run -c release stasis-bench
      Read the ratios: they are measured in one run, so a noisy machine moves both sides.
      """
  )

  @Option(parsing: .upToNextOption, help: "Body counts to measure.")
  var bodies: [Int] = [1000, 10_000, 100_000, 1_000_000]

  @Option(help: "Largest body count at which Foundation's JSON and plist coders are measured (they are slow).")
  var foundationUpTo: Int = 100_000

  @Option(help: "Folder for the durable-save files (default: a temporary folder).")
  var directory: String?

  @Flag(help: "Print the figures and ratios as JSON.")
  var json = false

  @Flag(
    inversion: .prefixedNo,
    help: "Also measure the demo game (autosave, snapshot, background save, physics).")
  var game = true

  @Flag(help: "Measure only the memory of a city autosaved every tick against the same run without saves.")
  var autosaveMemory = false

  @Option(help: "Agents in the city (1,000,000: a 16 MB save).")
  var cityAgents = 1_000_000

  @Option(help: "Ticks the city runs for the memory measurement.")
  var cityTicks = 120

  @Option(help: .hidden)
  var cityRun: String?

  @Option(help: "Write the CLI benchmark's three 16 MB city saves (base, ours, theirs) to this folder, and stop.")
  var writeCitySaves: String?

  @Flag(help: "Measure only what replays cost: a tick's recording, and digests against memcpy.")
  var replays = false

  @Flag(help: "Measure only a padded struct's array (packed field by field) against the padding-free one.")
  var padding = false

  @Flag(help: "Measure only a 100,000-entity world saved by entity against the same data as plain bulk arrays.")
  var world = false

  func run() throws {
    if let writeCitySaves { return try writeCitySaveFiles(to: writeCitySaves) }
    let folder = directory ?? NSTemporaryDirectory() + "stasis-bench-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { if directory == nil { try? FileManager.default.removeItem(atPath: folder) } }
    if let cityRun { return try runCity(mode: cityRun, folder: folder) }
    if replays { return try measureReplays(folder: folder) }
    if padding { return try measurePadding(count: 100_000, folder: folder) }
    if world { return try measureWorld(count: 100_000, folder: folder) }
    if autosaveMemory {
      let (skip, wait, plain) = try measureAutosaveMemory(folder: folder)
      func ratio(_ kib: Int) -> String { String(format: "%.2f", Double(kib) / Double(plain)) + "×" }
      print("| a city of \(cityAgents) agents, \(cityTicks) ticks of 1% | max RSS | ratio | target |")
      print("| --- | ---: | ---: | ---: |")
      print("| without saves | \(plain / 1024) MB | 1.00× | |")
      print("| an autosave every tick, autosaveOverlap = .skip | \(skip / 1024) MB | \(ratio(skip)) | ≤ 2× |")
      print("| an autosave every tick, autosaveOverlap = .wait (the default) | \(wait / 1024) MB | \(ratio(wait)) | |")
      let threads = try measureCityThreads(folder: folder)
      func ms(_ value: Double) -> String { String(format: "%.3f ms", value) }
      print("")
      print("| the city's 16 MB save (medians) | measured | target |")
      print("| --- | ---: | ---: |")
      print(
        "| encoding it, on the worker | \(ms(threads.encode)): \(String(format: "%.2f", threads.encode / threads.memcpy))× a `memcpy` of the file (\(ms(threads.memcpy))) | ≤ 2× |"
      )
      print("| an autosave's main-thread part (snapshot and hand-off) | \(ms(threads.mainThread)) | < 0.05 ms |")
      print("| the game's next write, which copies the agents the snapshot holds | \(ms(threads.copy)) | reported |")
      return
    }
    var rows: [Row] = []
    for count in bodies {
      rows.append(try measure(count, folder: folder))
      if !json { FileHandle.standardError.write(Data("measured \(count) bodies\n".utf8)) }
    }
    let gameReport = game ? try MainActor.assumeIsolated { try measureGame(folder: folder) } : nil
    if json {
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
      let report = Report(
        machine: Machine.current, crc32cHardware: CRC32C.isHardwareAccelerated, rows: rows, game: gameReport)
      print(String(decoding: try encoder.encode(report), as: UTF8.self))
    } else {
      printTable(rows)
      if let gameReport { printGame(gameReport) }
    }
  }
}
