import Foundation
import Stasis
import StasisDemoGame
import StasisTestSupport
import Testing

#if Records
  import StasisDemoRecords
  import StasisRecords
#endif

/// Runs a command to completion and returns its standard output.
@discardableResult
private func shell(_ arguments: [String], environment: [String: String] = [:]) throws -> String {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
  process.arguments = ["60"] + arguments  // a stuck tool fails the test instead of hanging it
  process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
  let pipe = Pipe()
  process.standardOutput = pipe
  try launch(process)
  let data = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

@Suite("The demo in a real window, under Xvfb", .serialized)
struct WindowTests {
  @Test("play, minimise, a save within the budget, the engine stops, restore, resume, screenshot; its replay seeks")
  func minimiseAndRestore() throws {
    // Xvfb tells its display number on stdout once it accepts connections: no guessing, no waiting.
    let xvfb = try LineProcess(
      URL(fileURLWithPath: "/usr/bin/Xvfb"), ["-displayfd", "1", "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
    defer {
      kill(xvfb.process.processIdentifier, SIGKILL)  // our private server; it may sit out a SIGTERM
      xvfb.process.waitUntilExit()
    }
    let number = try #require(xvfb.waitForLine { !$0.isEmpty })
    // A real X11 window, whatever SDL_VIDEODRIVER the rest of the suite runs under (dummy).
    let display = ["DISPLAY": ":\(number)", "SDL_VIDEODRIVER": "x11"]

    let saves = try temporaryFolder().path
    let demo = try LineProcess(
      try builtProduct("stasis-demo", withDefaultTraits: true),
      ["--level", "2", "--saves", saves, "--trace", "--json", "--autosave", "1"], environment: display)
    defer { if demo.process.isRunning { demo.process.terminate() } }
    let window = try shell(["xdotool", "search", "--sync", "--name", "Stasis demo"], environment: display)
    #expect(!window.isEmpty)

    // It plays: the heartbeat passes frame 120.
    #expect(demo.waitForLine { $0 == "engine: frame 120" } != nil)
    // Minimise. Xvfb has no window manager to iconify, so unmap, as a window manager does.
    try shell(["xdotool", "windowunmap", window], environment: display)
    // Written as a new generation, or — when the pause came right after the autosave of the
    // same frame — found unchanged in that autosave's generation.
    let saved = try #require(demo.waitForLine { $0.hasPrefix("save: background ") })
    // The episode ends after the save and the slot index's records write it starts.
    let episode = try #require(demo.waitForLine { $0.hasPrefix("episode: background episode") })
    #expect(episode.contains("completed"), "saved within the budget: \(episode)")
    let generation = try #require(saved.firstMatch(of: /generation (\d+)/).flatMap { Int($0.1) }, "\(saved)")
    let frame = try #require(saved.firstMatch(of: /at frame (\d+)/).flatMap { Int($0.1) }, "\(saved)")
    let loaded = try SaveStore(directory: saves).load(codec: DemoSaveFormat.codec, slot: "autosave")
    #expect(loaded.generation == generation, "the background save is the newest valid one")
    #expect(loaded.state.level.runFrame == Int64(frame))

    // Away for half a second of wall time (the scenario, not a wait for something to happen).
    Thread.sleep(forTimeInterval: 0.5)
    try shell(["xdotool", "windowmap", window], environment: display)
    let restored = try #require(demo.waitForLine { $0.hasPrefix("load: restored generation") })
    #expect(restored == "load: restored generation \(generation) at frame \(frame)")
    let savedIndex = try #require(demo.lines.firstIndex(of: saved))
    let restoredIndex = try #require(demo.lines.firstIndex(of: restored))
    #expect(
      !demo.lines[savedIndex..<restoredIndex].contains {
        $0.hasPrefix("engine: frame") || $0.hasPrefix("save: autosave")
      },
      "the engine did not step while away")
    let next = ((frame / 60) + 1) * 60
    #expect(demo.waitForLine { $0 == "engine: frame \(next)" } != nil, "it resumed from frame \(frame)")

    // A screenshot of the running game is not blank.
    let shot = try temporaryFolder().appendingPathComponent("shot.png").path
    try shell(["import", "-window", "root", shot], environment: display)
    let colours = Int(try shell(["identify", "-format", "%k", shot])) ?? 0
    #expect(colours > 8, "\(colours) colours")

    // Esc quits, saving first; the summary says where it resumed from.
    try shell(["xdotool", "key", "--window", window, "Escape"], environment: display)
    let summaryLine = try #require(demo.waitForLine { $0.hasPrefix("{") })
    demo.process.waitUntilExit()
    #expect(demo.process.terminationStatus == 0)
    let summary = try #require(try JSONSerialization.jsonObject(with: Data(summaryLine.utf8)) as? [String: Any])
    let from = summary["restoredFrom"] as? [String: Any]
    #expect(from?["generation"] as? Int == generation)
    #expect(from?["frame"] as? Int == frame)
    #expect((summary["saves"] as? [[String: Any]])?.contains { $0["kind"] as? String == "terminate" } == true)
    #if Records
      // The quit waited for the high-score table too (a records write, inside the budget), and
      // the slot picker's index has the slot's newest save.
      let records = try DatabaseQueue(path: saves + "/" + RecordStore.fileName)
      let (scores, slots) = try records.read { db in (try DemoHighScore.fetchAll(db), try DemoSlotEntry.fetchAll(db)) }
      let score = try #require(summary["score"] as? Int)
      #expect(scores.map(\.points) == (score > 0 ? [Int64(score)] : []), "one row: the game's score at the quit")
      #expect(slots.map(\.slot) == ["autosave"])
      let newest = try SaveStore(directory: saves).listGenerations(of: "autosave").first?.generation
      #expect(slots.first?.generation == newest, "the index has the quit's save")
    #endif

    // The run's replay, played back in the window: it plays, → scrubs 5 s on from the keyframe
    // at or before the tick, and Esc quits. Nothing of the player's saves is touched.
    let generations = try SaveStore(directory: saves).listGenerations(of: "autosave").map(\.generation)
    let player = try LineProcess(
      try builtProduct("stasis-demo", withDefaultTraits: true),
      ["--replay", saves + "/replays/autosave.stasis", "--saves", saves, "--trace"], environment: display)
    defer { if player.process.isRunning { player.process.terminate() } }
    let playing = try #require(player.waitForLine { $0.hasPrefix("replay: playing ticks ") })
    let end = try #require(playing.firstMatch(of: /to (\d+) \(keyframes/).flatMap { Int64($0.1) }, "\(playing)")
    let playerWindow = try shell(["xdotool", "search", "--sync", "--name", "Stasis demo"], environment: display)
    try shell(["xdotool", "key", "--window", playerWindow, "Right"], environment: display)
    let sought = try #require(player.waitForLine { $0.hasPrefix("replay: seek to tick ") })
    let match = try #require(
      sought.firstMatch(of: /seek to tick (\d+) \(from the keyframe at (\d+), (\d+) steps\): frame (\d+)/), "\(sought)")
    let (tick, keyframe, steps, reached) = (Int64(match.1)!, Int64(match.2)!, Int64(match.3)!, Int64(match.4)!)
    #expect(tick <= end && keyframe <= tick && tick - keyframe == steps, "\(sought)")
    #expect(steps <= 600, "at most a keyframe interval of steps: \(sought)")
    #expect(reached == tick, "the engine is at the tick sought: \(sought)")
    try shell(["xdotool", "key", "--window", playerWindow, "Escape"], environment: display)
    player.process.waitUntilExit()
    #expect(player.process.terminationStatus == 0)
    #expect(
      try SaveStore(directory: saves).listGenerations(of: "autosave").map(\.generation) == generations,
      "a playback writes no save of the player's")
  }
}
