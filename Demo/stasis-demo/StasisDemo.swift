import ArgumentParser
import Foundation
import Stasis
import StasisDemoGame
import StasisMerge

/// `stasis-demo`: the demo game in a window, or headless for tests and scripts.
@main
struct StasisDemo: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stasis-demo",
    abstract: "The Stasis demo game: play, go to the background, come back exactly where you were.",
    discussion: """
      Examples (headless):
        stasis-demo --headless --frames 120 --background-at 60 --foreground-at 60 --trace
        stasis-demo --headless --level 2 --seed 7 --frames 600 --print-digest
        stasis-demo --headless --frames 300 --background-at 200 --terminate-in-background
        stasis-demo --headless --resume --frames 600 --json
        stasis-demo --render-thumbnail Saves/autosave/0000000003.stasis --output shot.png
        stasis-demo --headless --resume --frames 900 --cloud http://127.0.0.1:8080 --token-file alice.token --json
        stasis-demo --headless --resume --frames 400 --background-at 300 --terminate-in-background --budget 2 \\
          --cloud http://127.0.0.1:8080 --token-file alice.token --upload-rate 1000000 --json

      Exit codes: 0 success, 1 a save or a load failed or a sync test diverged, 64 bad flags.
      """
  )

  @Flag(help: "Run without a window: a scripted platform drives the lifecycle.")
  var headless = false

  @Option(help: "The save folder.")
  var saves: String = "Saves"

  @Option(help: "The save slot.")
  var slot: String = "autosave"

  /// The slot, checked: `validate()` has refused a bad name before anything runs.
  var saveSlot: SaveSlot { (try? SaveSlot(slot)) ?? "autosave" }

  @Option(help: "The level to start on (1, 2, 3: the stress level, or 4: the canvas, a 12.6 MB state).")
  var level: Int = 1

  @Option(help: "The autopilot's seed.")
  var seed: UInt64 = 1

  @Option(help: "Stop after this step, counted from the level's start, print a summary and exit.")
  var frames: Int64 = 600

  @Option(name: .customLong("background-at"), help: "At this step: resign active, enter the background, save.")
  var backgroundAt: Int64?

  @Option(name: .customLong("foreground-at"), help: "At this step (>= --background-at): come back, load, resume.")
  var foregroundAt: Int64?

  @Flag(
    name: .customLong("terminate-in-background"),
    help: "Once the background save is durable, exit, as the OS kills a suspended app.")
  var terminateInBackground = false

  @Flag(help: "Cold start from the slot's newest valid save (its level and seed included).")
  var resume = false

  @Option(help: "Seconds of game time between autosaves (0: none).")
  var autosave: Double = 30

  @Option(help: "The background-time budget, seconds.")
  var budget: Double = 10

  @Option(name: .customLong("io-throttle"), help: "Slow the store's writes to this many bytes per second.")
  var ioThrottle: Int?

  @Option(name: .customLong("sync-test"), help: "Every step, roll back up to N steps, replay and compare digests.")
  var syncTest: Int?

  @Flag(help: "Print one line per lifecycle callback, background-task event and save or load.")
  var trace = false

  @Flag(name: .customLong("print-digest"), help: "End with the line `digest: <64 hex digits>`.")
  var printDigest = false

  @Flag(help: "Print the summary as one JSON object.")
  var json = false

  @Flag(
    inversion: .prefixedNo,
    help: "Let the autopilot play (--no-autopilot: in the window you have the keys; headless, nobody plays).")
  var autopilot = true

  @Option(help: "The levels folder (default: Assets/levels, found from here or from the executable).")
  var levels: String?

  @Option(
    name: .customLong("render-thumbnail"),
    help: "Draw a demo save's state as a 320 × 180 PNG (with --output) instead of playing.")
  var renderThumbnail: String?

  @Option(help: "The PNG file --render-thumbnail writes.")
  var output: String?

  @Option(help: "A stasis-server URL: uploads every save, catches up on launch and return (with --resume).")
  var cloud: String?

  @Option(help: "A file holding the player's bearer token (default: $STASIS_TOKEN).")
  var tokenFile: String?

  @Option(help: "This device's name, in its saves and on the server (default: the host name).")
  var device: String?

  @Option(help: "How a cloud conflict is resolved: manual, recent, playtime, progress, last-known-good or merge.")
  var conflictPolicy = "merge"

  @Option(help: "Seconds the game waits, on launch and on return, for the cloud to catch up before it plays on.")
  var syncPatience: Double = 5

  @Option(
    name: .customLong("upload-rate"),
    help: "With --cloud: a slow link, each request's body taking its size at this many bytes per second.")
  var uploadRate: Int?

  @Flag(
    name: .customLong("whole-uploads"),
    help: "With --cloud: send and fetch whole files, never deltas (to compare what a sync sends).")
  var wholeUploads = false

  @Option(
    name: .customLong("verify-replay"),
    help: ArgumentHelp(
      "Play a replay through the game's step and compare every digest: exit 0 when all match; else exit 1, `first divergence at tick N` and the desync bundle's path.",
      valueName: "file"))
  var verifyReplay: String?

  @Option(
    name: .customLong("desync-at"),
    help: ArgumentHelp(
      "Plant a one-ulp drift in the player's x at this tick: in a run (its replay records it) or with --verify-replay (the verifier's steps drift).",
      valueName: "tick"))
  var desyncAt: Int64?

  @Option(
    help: ArgumentHelp(
      "Play a replay back: in the window where there is a display (left and right arrows seek 5 s, P pauses), else headless to its end or to --seek TICK, printing where it ended (with --print-digest, the digest).",
      valueName: "file"))
  var replay: String?

  @Option(
    help: ArgumentHelp(
      "With --replay: go to this tick, from the keyframe at or before it (at most a keyframe interval of steps).",
      valueName: "tick"))
  var seek: Int64?

  @Flag(
    name: .customLong("no-replay"),
    help: "Record no replay of this run (by default every run is recorded into SAVES/replays/SLOT.stasis).")
  var noReplay = false

  @Option(
    name: .customLong("replay-digest-every"),
    help: ArgumentHelp(
      "The run's replay takes a digest every N steps (default 1: a divergence is found at its exact step; 60: ten minutes take 7 KB apart from keyframes).",
      valueName: "n"))
  var replayDigestEvery = 1

  func validate() throws {
    if renderThumbnail != nil, output == nil { throw ValidationError("--render-thumbnail needs --output FILE.png") }
    if let desyncAt, desyncAt < 1 { throw ValidationError("--desync-at must be a tick of 1 or more") }
    if seek != nil, replay == nil { throw ValidationError("--seek goes with --replay FILE") }
    if replayDigestEvery < 1 { throw ValidationError("--replay-digest-every is 1 or more") }
    if replay != nil, verifyReplay != nil { throw ValidationError("--replay and --verify-replay exclude each other") }
    guard frames >= 0 else { throw ValidationError("--frames must be 0 or more") }
    guard (1...99).contains(level) else { throw ValidationError("--level must be between 1 and 99") }
    if let foregroundAt {
      guard let backgroundAt else { throw ValidationError("--foreground-at needs --background-at") }
      guard foregroundAt >= backgroundAt else {
        throw ValidationError(
          "--foreground-at (\(foregroundAt)) must not come before --background-at (\(backgroundAt))")
      }
    }
    if terminateInBackground {
      guard backgroundAt != nil else { throw ValidationError("--terminate-in-background needs --background-at") }
      guard foregroundAt == nil else {
        throw ValidationError("--terminate-in-background and --foreground-at exclude each other")
      }
    }
    guard autosave >= 0 else { throw ValidationError("--autosave must be 0 or more seconds") }
    guard budget > 0 else { throw ValidationError("--budget must be more than 0 seconds") }
    if let ioThrottle, ioThrottle <= 0 { throw ValidationError("--io-throttle must be more than 0 bytes per second") }
    if let syncTest, !(1...64).contains(syncTest) { throw ValidationError("--sync-test must be between 1 and 64") }
    do {
      try SaveSlot.validate(slot)
    } catch {
      throw ValidationError("--slot: \(error.message)")
    }
    guard DemoSaveFormat.conflictPolicy(named: conflictPolicy) != nil else {
      throw ValidationError("--conflict-policy is one of \(ConflictPolicy.names.joined(separator: ", "))")
    }
    #if !Cloud
      if cloud != nil { throw ValidationError("--cloud: this stasis-demo was built without the Cloud trait") }
    #endif
    if cloud == nil, tokenFile != nil { throw ValidationError("--token-file goes with --cloud URL") }
    if cloud != nil, tokenFile == nil, (ProcessInfo.processInfo.environment["STASIS_TOKEN"] ?? "").isEmpty {
      throw ValidationError("--cloud needs the player's token: --token-file FILE, or STASIS_TOKEN")
    }
    guard syncPatience > 0 else { throw ValidationError("--sync-patience must be more than 0 seconds") }
    if let uploadRate {
      guard uploadRate > 0 else { throw ValidationError("--upload-rate must be more than 0 bytes per second") }
      guard cloud != nil else { throw ValidationError("--upload-rate goes with --cloud URL") }
    }
    if wholeUploads, cloud == nil { throw ValidationError("--whole-uploads goes with --cloud URL") }
  }

  func run() throws {
    if let renderThumbnail, let output {
      let status = ThumbnailRenderer(file: renderThumbnail, output: output, levels: levels).run()
      if status != 0 { throw ExitCode(status) }
      return
    }
    // A replay plays back in the window where there is a display (`--headless` or
    // `--print-digest`: headless, printing where it ended).
    if let replay, headless || printDigest || !MainActor.assumeIsolated({ WindowRunner.displayAvailable() }) {
      let status = ReplayPlayback(file: replay, levels: levels, seek: seek, printDigest: printDigest).run()
      if status != 0 { throw ExitCode(status) }
      return
    }
    if let verifyReplay {
      let status = ReplayCheck(file: verifyReplay, levels: levels, desyncAt: desyncAt).run()
      if status != 0 { throw ExitCode(status) }
      return
    }
    let status = MainActor.assumeIsolated { () -> Int32 in
      if !headless {
        if WindowRunner.displayAvailable() { return WindowRunner(options: self).run() }
        FileHandle.standardError.write(Data("stasis-demo: no display; running the headless session\n".utf8))
      }
      return HeadlessRunner(options: self).run()
    }
    if status != 0 { throw ExitCode(status) }
  }
}
