// A headless asteroids game on a small ECS (TinyECS), saved by entity: it plays, goes to the
// background and is killed there, resumes on the next launch exactly where it stopped, records
// every run as a replay and verifies one by stepping its world in place.
//
//   stasis-example-ecs --headless --saves DIR [--seed N] [--frames N] [--print-digest]
//                      [--background-at N [--terminate-in-background]] [--resume]
//                      [--verify-replay FILE [--desync-at TICK]] [--fresh-ids] [--print-ids] [--reseed N]
import ArgumentParser
import Foundation
import Stasis
import StasisReplay
import StasisTinyECS

extension AsteroidsGame: SaveableGame {
  func snapshot() -> AsteroidsState { state }
  func restore(_ saved: AsteroidsState) throws { try load(saved) }
  func summary(of state: AsteroidsState) throws -> SaveSummary {
    SaveSummary(frame: state.tick, playTime: Double(state.tick) / 60)
  }
}

let asteroidsCodec = SaveCodec<AsteroidsState>(game: GameIdentity(name: "asteroids-ecs", build: "1.0"))
/// What a replay's digests cover: the whole state, world included.
let asteroidsScope = DigestScope<AsteroidsState>.sections()

struct ExampleECS: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stasis-example-ecs",
    abstract: "An asteroids game on a small ECS, saved by entity (every run is headless).")

  @Flag(help: "Run without a window (the only way this example runs).")
  var headless = false
  @Option(help: "The save folder.")
  var saves = "Saves"
  @Option(help: "The autopilot's seed.")
  var seed: UInt64 = 1
  @Option(help: "Stop after this step, print a summary and exit.")
  var frames: Int64 = 600
  @Flag(name: .customLong("print-digest"), help: "End with the line `digest: <64 hex digits>`.")
  var printDigest = false
  @Option(name: .customLong("background-at"), help: "At this step: enter the background and save.")
  var backgroundAt: Int64?
  @Flag(
    name: .customLong("terminate-in-background"),
    help: "Once the background save is durable, exit, as the OS kills a suspended app.")
  var terminateInBackground = false
  @Flag(help: "Cold start from the slot's newest valid save (its seed included).")
  var resume = false
  @Option(name: .customLong("verify-replay"), help: "Play a replay through the game and compare every digest.")
  var verifyReplay: String?
  @Option(name: .customLong("desync-at"), help: "With --verify-replay: drift the ship's x by one ulp at this tick.")
  var desyncAt: Int64?
  @Flag(
    name: .customLong("fresh-ids"),
    help: "Before a --resume, spawn and despawn 1000 entities, so every restored entity gets an ECS id it never had.")
  var freshIDs = false
  @Option(help: "After a --resume, play on with this seed: another player, on another device, from the same save.")
  var reseed: UInt64?
  @Flag(
    name: .customLong("print-ids"), help: "Print the live entities' ECS ids at the background save and after a restore."
  )
  var printIDs = false

  func validate() throws {
    if terminateInBackground, backgroundAt == nil {
      throw ValidationError("--terminate-in-background needs --background-at")
    }
    if desyncAt != nil, verifyReplay == nil { throw ValidationError("--desync-at needs --verify-replay") }
    if reseed != nil, !resume { throw ValidationError("--reseed needs --resume") }
  }

  func run() throws {
    let status = MainActor.assumeIsolated { verifyReplay.map(verify) ?? play() }
    if status != 0 { throw ExitCode(status) }
  }

  @MainActor
  private func ids(_ game: AsteroidsGame) -> String {
    game.world.entityIDs().sorted().map(String.init).joined(separator: " ")
  }

  // MARK: Play

  @MainActor
  private func play() -> Int32 {
    let game = AsteroidsGame(seed: seed)
    if freshIDs { for _ in 0..<1000 { game.world.createEntity() } }
    let store = SaveStore(directory: saves)
    let coordinator = SaveCoordinator(game: game, store: store, codec: asteroidsCodec, slot: "asteroids")
    coordinator.autosaveInterval = 300
    coordinator.onEvent = { print($0) }
    let app = Application(delegate: coordinator)
    app.launch(options: resume ? LaunchOptions(restoreSlot: "asteroids") : .none)
    if let failure = coordinator.restoreFailure {
      print("cannot restore: \(failure.error)")
      return 1
    }
    if resume, printIDs { print("ids after restore: \(ids(game))") }
    if let reseed { game.reseed(reseed) }

    // Every run is recorded; a --resume goes on with the replay where it ends.
    var recorder: ReplayRecorder<AsteroidsState, ShipInput>?
    do {
      if resume,
        let existing = try ReplayRecorder<AsteroidsState, ShipInput>(
          continuing: "asteroids", store: store, codec: asteroidsCodec, digest: asteroidsScope, state: game.state,
          tick: game.tick)
      {
        recorder = existing
      } else {
        recorder = try ReplayRecorder(
          resume ? "asteroids-from-\(game.tick)" : "asteroids", store: store, codec: asteroidsCodec,
          start: game.state, startTick: game.tick, seed: game.seed, digest: asteroidsScope)
      }
    } catch {
      print("no replay of this run: \(error)")
    }
    if let recorder { recorder.flushWhenLeaving(app) { [game] in game.state } }

    while game.tick < frames {
      if game.tick == backgroundAt, app.state == .active {
        app.enterBackground()
        while app.hasBackgroundEpisode { app.waitForBackgroundWork() }  // the save there is durable
        if printIDs { print("ids at the background save: \(ids(game))") }
        if terminateInBackground {
          print("killed in the background at frame \(game.tick)")
          return 0  // the OS kills a suspended app: no willTerminate, no more steps
        }
        app.enterForeground()
      }
      if !game.isPaused {
        let input = ShipInput.autopilot(seed: game.seed, tick: game.tick)
        game.step(input)
        recorder?.record(input, reaching: game.state)
        coordinator.didStep(frame: game.tick)
      }
      app.update()
    }
    app.quit()
    coordinator.waitForSaves()
    try? recorder?.waitUntilWritten()
    print("frame \(game.tick), \(game.world.entities.count) entities, score \(game.score)")
    if printDigest { print("digest: \((try? StateDigest.sha256(game.state)) ?? "unencodable")") }
    return 0
  }

  // MARK: Verify

  @MainActor
  private func verify(_ path: String) -> Int32 {
    do {
      let game = AsteroidsGame(seed: 0)
      game.desyncAt = desyncAt
      let replay = try ReplayFile(contentsOf: path)
      let verifier = ReplayVerifier(
        codec: asteroidsCodec, digest: asteroidsScope, restore: { try game.load($0) }, snapshot: { game.state },
        step: { game.step($0) })
      let result = try verifier.verify(replay)
      guard let bundle = result.divergence else {
        print(
          "replay verified: \(result.ticks) ticks from \(replay.manifest.startTick), \(result.digestsCompared) digests "
            + "and \(replay.keyframes.count) keyframes, every one equal")
        return 0
      }
      print(bundle.report.summary)
      for line in bundle.report.differences { print(line) }
      print("desync bundle: \(try bundle.write(besides: path))")
      return 1
    } catch {
      print("error: \(error)")
      return 1
    }
  }
}

ExampleECS.main()
