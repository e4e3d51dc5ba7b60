import Logging
import Stasis
import StasisReplay

/// The engine as the save coordinator sees it: a state to snapshot and restore, and a pause.
@MainActor
public final class EngineHost: SaveableGame {
  /// The engine: the state and the rules.
  public var engine: Engine
  /// The slot the summaries name.
  let slot: SaveSlot

  init(engine: Engine, slot: SaveSlot) {
    self.engine = engine
    self.slot = slot
  }

  public var isPaused: Bool {
    get { engine.isPaused }
    set { engine.isPaused = newValue }
  }
  public func snapshot() -> GameState { engine.snapshot() }
  public func restore(_ state: GameState) throws {
    try engine.restore(state)
    restores += 1
  }
  /// How many times the coordinator restored a state (a load, a return, another device's save).
  public private(set) var restores = 0
  public func summary(of state: GameState) throws -> SaveSummary { try state.summary() }
}

/// The demo game: the engine, its loop, and the save recipe — which is the library's
/// ``SaveCoordinator``. The app's delegate is ``coordinator``: sent away, it pauses the
/// engine and saves its snapshot inside the background budget; brought back, it restores
/// and the engine resumes on the next step; it autosaves every N steps of game time with
/// only the snapshot on the main thread.
@MainActor
public final class Game {
  /// The engine and the coordinator's view of it.
  public let host: EngineHost
  /// The save recipe, and the application's delegate.
  public let coordinator: SaveCoordinator<EngineHost>
  /// When true the autopilot plays.
  public var autopilot = true
  /// The last states before each step, for rolling back (the rollback netcode's window).
  public private(set) var rollback = RollbackRing()
  /// The run's replay while one is recorded (``recordReplay(named:seed:continuing:application:)``): each
  /// step's input goes to it.
  public private(set) var replay: ReplayRecorder<GameState, ReplayInput>?
  private var replayName = ""
  private var replaySeed: UInt64 = 0
  private var replayDigestInterval = 1
  /// The host's restores the replay has been checked against.
  private var restoresSeen = 0
  private let logger: Logger
  private var replayObservers: [ObserverToken] = []

  /// Creates the game around an engine and a store. The codec checks every loaded state
  /// against its level.
  public init(engine: Engine, store: SaveStore, slot: SaveSlot, logger: Logger = Logger(label: "stasis.demo")) {
    self.logger = logger
    host = EngineHost(engine: engine, slot: slot)
    coordinator = SaveCoordinator(
      game: host, store: store, codec: DemoSaveFormat.codec(levels: engine.library), slot: slot, logger: logger)
    coordinator.autosaveInterval = 30 * 60
  }

  /// The engine: the state and the rules.
  public var engine: Engine { host.engine }
  /// One loop iteration: steps the engine once when the app is active and not paused, then
  /// lets the coordinator autosave when one is due.
  public func tick(_ application: Application, input: Input = Input()) {
    guard application.state == .active, !host.engine.isPaused else {
      coordinator.collectFinishedSaves()
      return
    }
    rollback.record(host.engine.snapshot())
    if let replay, replay.tick != host.engine.state.level.runFrame || restoredSinceStep(replay) {
      // A restore moved the game (a load, another device's save, even one at the same tick):
      // one replay is one line of steps, so the run goes on in a replay of its own from here.
      replay.flush()
      startReplay(named: "\(replayName)-from-\(host.engine.state.level.runFrame)")
    }
    let step = autopilot ? host.engine.autopilotInput() : input
    // A power-up due is part of this step's input, applied in the order a replay applies it.
    let powerUp = powerUpDue
    if powerUp {
      host.engine.applyPowerUp()
      powerUpDue = false
    }
    if host.engine.step(step) {
      replay?.record(ReplayInput(step, autopilot: autopilot, powerUp: powerUp), reaching: host.engine.state)
    }
    coordinator.didStep(frame: host.engine.state.level.runFrame)
  }

  /// Whether the coordinator restored a state other than the one the replay's last step
  /// reached (a return that restores the state it left keeps the replay going): checked by
  /// digest only after a restore, so a step costs no second digest.
  private func restoredSinceStep(_ replay: ReplayRecorder<GameState, ReplayInput>) -> Bool {
    guard host.restores != restoresSeen else { return false }
    restoresSeen = host.restores
    return !replay.continues(from: host.engine.state)
  }

  /// Records the run from here into `SAVES/replays/NAME.stasis` (keyframes every 10 s of game
  /// time, a digest every `digestInterval` steps: every step by default, so a divergence is
  /// found at its exact step; every 60, ten minutes take 7 KB apart from keyframes, and a
  /// divergence is bounded to 60 steps), or, with `continuing`, goes on with that replay when it ends
  /// at this state's tick (a `--resume` after a kill), and when it does not, leaves it as it is
  /// and records into `NAME-from-TICK.stasis`.
  /// Its batches are written on the way to the background and at quit, inside background tasks
  /// of `application`. A replay that cannot be written is logged, and the game plays on.
  public func recordReplay(
    named name: String, seed: UInt64, continuing: Bool, digestInterval: Int = 1, application: Application
  ) {
    replayDigestInterval = max(1, digestInterval)
    if replayObservers.isEmpty {
      replayObservers = ReplayRecorder<GameState, ReplayInput>.flushWhenLeaving(application) { [weak self] in
        guard let self, let replay else { return nil }
        // The state is the replay's end only while no restore or rollback moved the game.
        let state = host.engine.state
        return (replay, state.level.runFrame == replay.tick ? state : nil)
      }
    }
    replayName = name
    replaySeed = seed
    if continuing {
      do {
        if let existing = try ReplayRecorder<GameState, ReplayInput>(
          continuing: name, store: coordinator.store, codec: coordinator.codec, digest: GameState.replayScope,
          state: host.engine.state, tick: host.engine.state.level.runFrame)
        {
          replay = existing
          return
        }
      } catch {
        logger.warning("the replay '\(name)' cannot go on (\(error)); a new one starts")
      }
      // The recorded run stays as it is: the game goes on in a replay of its own from here.
      return startReplay(named: "\(name)-from-\(host.engine.state.level.runFrame)")
    }
    startReplay(named: name)
  }

  private func startReplay(named name: String) {
    let state = host.engine.state
    restoresSeen = host.restores
    do {
      replay = try ReplayRecorder(
        name, store: coordinator.store, codec: coordinator.codec, start: state, startTick: state.level.runFrame,
        seed: replaySeed, digest: GameState.replayScope, keyframeInterval: 600,
        digestInterval: replayDigestInterval)
    } catch {
      replay = nil
      logger.warning("no replay of this run: \(error)")
    }
  }

  /// Goes back `steps` steps (1...8) using the rollback ring; false when the ring is shorter.
  @discardableResult
  public func rollBack(steps: Int) -> Bool {
    guard let target = rollback.state(stepsBack: steps), (try? host.engine.restore(target)) != nil else {
      return false
    }
    rollback.drop(steps)
    return true
  }

  /// Pauses or resumes the engine (the pause overlay).
  public func setPaused(_ paused: Bool) { host.engine.isPaused = paused }

  /// The regenerating power-up (a wall-clock timer fired), applied before the next step and
  /// recorded as part of its input (``ReplayInput/powerUp``), so the run's replay plays back: see
  /// ``Engine/applyPowerUp()``.
  public func applyPowerUp() { powerUpDue = true }
  /// A power-up that fired, applied before the next step.
  private var powerUpDue = false

  /// The sync test of rollback netcode: restores `snapshot`, replays `steps` steps with the
  /// autopilot, and compares the digest with the state the game reached the first time.
  /// Returns a description of the difference, or nil when they match. The game ends where
  /// it was.
  public func replayMatches(from snapshot: GameState, steps: Int) -> String? {
    let reached = host.engine.snapshot()
    var replay = host.engine
    do {
      try replay.restore(snapshot)
    } catch {
      return "the snapshot cannot be restored: \(error)"
    }
    replay.isPaused = false
    for _ in 0..<steps { replay.step(replay.autopilotInput()) }
    let expected = reached.digest
    let replayed = replay.state.digest
    return expected == replayed ? nil : "after rolling back \(steps) steps: \(replayed) instead of \(expected)"
  }
}
