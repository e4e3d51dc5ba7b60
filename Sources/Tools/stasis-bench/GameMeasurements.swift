import Foundation
import Stasis
import StasisDemoGame
import StasisSDL

// The demo's drawing protocol over SDL (as in stasis-demo): the method names already match.
extension SDLCanvas: Canvas {}

/// The demo game's figures: what an autosave costs the main thread, snapshot and restore,
/// the background save of each level, and the physics step.
struct GameReport: Codable {
  var autosaveMainThreadMs10k: Double
  var copyOnWriteAfterSnapshotMs10k: Double
  var snapshotRestoreMs10k: Double
  /// An autosave with a 320 × 180 thumbnail: drawing it on the main thread first (as the window
  /// did), and through the coordinator (drawn from the snapshot on the worker).
  var thumbnailOnMainThreadMs: Double
  var thumbnailOnWorkerMainThreadMs: Double
  var backgroundToDurableMs: [String: Double]
  var physicsStepMs: [String: Double]
  /// Peak RSS of `stasis-demo` over 60,000 frames of level 2, without saves and with an
  /// autosave every 6 frames (10,000 autosaves), in MB; nil when stasis-demo is not built.
  var rssWithoutSavesMB: Double?
  var rssWith10kAutosavesMB: Double?
}

/// The peak resident memory of a `stasis-demo --json` run, in MB, as the run reports it
/// (`peakResidentKB`, its own `VmHWM`).
func demoPeakRSS(_ executable: String, _ arguments: [String]) throws -> Double {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments + ["--json"]
  let output = Pipe()
  process.standardOutput = output
  process.standardError = FileHandle.nullDevice
  try process.run()
  let data = output.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  guard process.terminationStatus == 0,
    let summary = try JSONSerialization.jsonObject(with: data) as? [String: Any],
    let kilobytes = summary["peakResidentKB"] as? Int
  else {
    throw CocoaError(.executableLoad, userInfo: ["run": "\(executable) \(arguments) gave no peak"])
  }
  return Double(kilobytes) / 1024
}

extension StasisBench {
  /// A level folder holding `level1.json` with `count` bodies in a walled pit.
  func syntheticLevel(bodies count: Int) throws -> LevelLibrary {
    let folder = NSTemporaryDirectory() + "stasis-bench-level-\(count)-\(getpid())"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let columns = Int(Double(count).squareRoot().rounded(.up))
    let rows = (count + columns - 1) / columns
    let width = Double(columns) * 0.52 + 2
    let json = """
      {"name": "bench", "gravity": {"x": 0, "y": -20},
       "bounds": {"minX": -5, "minY": -5, "maxX": \(width + 10), "maxY": \(Double(rows) * 0.52 + 10)},
       "spawn": {"x": -3, "y": 0.5}, "goal": {"minX": -5, "minY": 50, "maxX": -4, "maxY": 51},
       "boxes": [{"minX": -5, "minY": -1, "maxX": \(width + 10), "maxY": 0},
                 {"minX": 0, "minY": 0, "maxX": 0.5, "maxY": \(Double(rows) * 0.52 + 5)},
                 {"minX": \(width), "minY": 0, "maxX": \(width + 0.5), "maxY": \(Double(rows) * 0.52 + 5)}],
       "segments": [], "collectibles": [], "checkpoints": [],
       "bodyGrids": [{"x": 0.8, "y": 0.3, "columns": \(columns), "rows": \(rows), "spacing": 0.52, "radius": 0.25}]}
      """
    try Data(json.utf8).write(to: URL(fileURLWithPath: folder + "/level1.json"))
    return LevelLibrary(folder: folder)
  }

  @MainActor
  func measureGame(folder: String) throws -> GameReport {
    let big = try syntheticLevel(bodies: 10_000)
    var engine = try Engine(library: big, level: 1, seed: 1)
    for _ in 0..<10 { engine.step(engine.autopilotInput()) }
    let store = SaveStore(directory: folder + "/game")
    let codec = DemoSaveFormat.codec

    // The autosave's main-thread part: the snapshot and handing it to the worker.
    var handles: [SaveHandle] = []
    let autosaveMs = try median(runs: 21) {
      let snapshot = engine.snapshot()
      handles.append(store.save(snapshot, codec: codec, slot: "bench", summary: try snapshot.summary()))
    }
    for handle in handles { _ = handle.waitForResult() }
    // The snapshot shares the body array; the engine's next write copies it, also on the main thread.
    let cowMs = median(runs: 21) {
      let snapshot = engine.snapshot()
      var copy = engine.state.physics.bodies
      copy[0].x += 0
      consume((snapshot, copy))
    }
    let snapshotRestoreMs = try median(runs: 51) {
      let snapshot = engine.snapshot()
      try engine.restore(snapshot)
    }

    // An autosave with a thumbnail, level 2 after 5 s: drawn on the main thread before the
    // save (the window's old way) against the coordinator drawing it on the worker.
    var thumbnailMain = 0.0
    var thumbnailWorker = 0.0
    if let shipped = LevelLibrary.locate() {
      let game = Game(
        engine: try Engine(library: shipped, level: 2, seed: 1), store: SaveStore(directory: folder + "/thumbs"),
        slot: "bench")
      game.coordinator.autosaveInterval = 0
      let app = Application(delegate: game.coordinator)
      app.launch()
      for _ in 0..<300 { game.tick(app) }
      let level = game.engine.level
      let draw: @Sendable (GameState) -> [UInt8]? = { state in
        try? OffscreenImage.png(width: 320, height: 180) { canvas in
          SceneDrawing(width: 320, height: 180).draw(state, level: level, camera: state.camera, on: &canvas)
        }
      }
      var handles: [SaveHandle] = []
      thumbnailMain = median(runs: 15) {
        let snapshot = game.engine.snapshot()
        let png = draw(snapshot)
        handles.append(
          game.coordinator.store.save(
            snapshot, codec: game.coordinator.codec, slot: "bench", summary: SaveSummary(), thumbnail: png))
      }
      for handle in handles { _ = handle.waitForResult() }
      game.coordinator.thumbnail = draw
      thumbnailWorker = median(runs: 15) { game.coordinator.saveNow(.autosave) }
      game.coordinator.waitForSaves()
    }

    // didEnterBackground to a durable save, for each shipped level after 5 s of play.
    var background: [String: Double] = [:]
    if let shipped = LevelLibrary.locate() {
      for index in 1...3 {
        var times: [Double] = []
        for run in 0..<5 {
          let game = Game(
            engine: try Engine(library: shipped, level: index, seed: 1),
            store: SaveStore(directory: folder + "/bg-\(index)-\(run)"), slot: "bench")
          game.coordinator.autosaveInterval = 0
          let app = Application(delegate: game.coordinator)
          app.launch()
          for _ in 0..<300 { game.tick(app) }
          app.enterBackground()
          while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
          if let episode = app.backgroundEpisodes.last { times.append(episode.duration.inMilliseconds) }
        }
        times.sort()
        background["level\(index)"] = times[times.count / 2]
      }
    }

    // The physics step with every body awake (the first steps, before anything sleeps).
    var physics: [String: Double] = [:]
    for count in [1000, 10_000] {
      var world = try Engine(library: try syntheticLevel(bodies: count), level: 1, seed: 1)
      for _ in 0..<5 { world.step(Input()) }
      physics["\(count)"] = median(runs: 31) { world.step(Input()) }
    }
    // Memory with 10,000 autosaves against none: the slot's writer holds at most two snapshots.
    var rssWithout: Double?
    var rssWith: Double?
    let demo = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
      "stasis-demo"
    ).path
    if FileManager.default.isExecutableFile(atPath: demo) {
      let run = ["--headless", "--level", "2", "--seed", "1", "--frames", "60000"]
      rssWithout = try demoPeakRSS(demo, run + ["--saves", folder + "/rss-none", "--autosave", "0"])
      rssWith = try demoPeakRSS(demo, run + ["--saves", folder + "/rss-10k", "--autosave", "0.1"])
    }
    return GameReport(
      autosaveMainThreadMs10k: autosaveMs, copyOnWriteAfterSnapshotMs10k: cowMs,
      snapshotRestoreMs10k: snapshotRestoreMs, thumbnailOnMainThreadMs: thumbnailMain,
      thumbnailOnWorkerMainThreadMs: thumbnailWorker, backgroundToDurableMs: background, physicsStepMs: physics,
      rssWithoutSavesMB: rssWithout, rssWith10kAutosavesMB: rssWith)
  }

  func printGame(_ report: GameReport) {
    func ms(_ value: Double) -> String { String(format: "%.3f ms", value) }
    print("")
    print("| demo game (medians) | measured | target |")
    print("| --- | ---: | ---: |")
    print(
      "| autosave, main-thread part (snapshot + hand-off), 10k bodies | \(ms(report.autosaveMainThreadMs10k)) | < 0.5 ms |"
    )
    print(
      "| copy-on-write of the bodies on the next step, 10k bodies | \(ms(report.copyOnWriteAfterSnapshotMs10k)) | (part of the above) |"
    )
    print(
      "| snapshot() + restore(_:) (restore validates), 10k bodies | \(ms(report.snapshotRestoreMs10k)) | < 0.2 ms |")
    print(
      "| autosave with a thumbnail drawn on the main thread first, level 2 | \(ms(report.thumbnailOnMainThreadMs)) | (the old way) |"
    )
    print(
      "| autosave with a thumbnail drawn on the worker (coordinator), main-thread part, level 2 | \(ms(report.thumbnailOnWorkerMainThreadMs)) | < 0.05 ms |"
    )
    for key in report.backgroundToDurableMs.keys.sorted() {
      let target = key == "level3" ? "< 500 ms" : "< 50 ms"
      print("| didEnterBackground → durable save, \(key) | \(ms(report.backgroundToDurableMs[key]!)) | \(target) |")
    }
    for key in report.physicsStepMs.keys.sorted(by: { Int($0)! < Int($1)! }) {
      print("| physics step, \(key) bodies all awake | \(ms(report.physicsStepMs[key]!)) | |")
    }
    if let without = report.rssWithoutSavesMB, let with = report.rssWith10kAutosavesMB {
      print(String(format: "| peak RSS, stasis-demo level 2, 60,000 frames, no saves | %.1f MB | |", without))
      print(
        String(
          format: "| peak RSS, the same with 10,000 autosaves | %.1f MB (+%.1f MB) | within 10 MB |", with,
          with - without))
    }
  }
}
