import Logging
import Stasis

/// What the game did with its saves, for the HUD, the trace and the headless summary.
public enum GameEvent: Sendable, Equatable, CustomStringConvertible {
  /// Why a save was made.
  public enum SaveKind: String, Sendable {
    case autosave, background, terminate, manual
  }

  /// A save became durable.
  case saved(kind: SaveKind, generation: Int, frame: Int64, bytes: Int, milliseconds: Double)
  /// A save failed or was cancelled.
  case saveFailed(kind: SaveKind, frame: Int64, error: SaveFileError)
  /// A save was restored; `skipped` are the newer generations passed over, with why, and
  /// `report` what happened on the way into the current types.
  case restored(generation: Int, frame: Int64, skipped: [String], report: LoadReport?)
  /// Coming back, the game kept its in-memory state instead of loading (and why).
  case keptMemory(reason: String)
  /// Nothing could be loaded.
  case loadFailed(error: SaveFileError)

  public var description: String {
    switch self {
    case .saved(let kind, let generation, let frame, let bytes, let ms):
      return
        "save: \(kind.rawValue) generation \(generation) at frame \(frame), \(bytes) bytes, durable in \(Int(ms.rounded())) ms"
    case .saveFailed(let kind, let frame, let error):
      return "save: \(kind.rawValue) at frame \(frame) failed: \(error)"
    case .restored(let generation, let frame, let skipped, let report):
      let fallback = skipped.isEmpty ? "" : "; \(skipped.joined(separator: "; "))"
      let notes = report?.lines ?? []
      return "load: restored generation \(generation) at frame \(frame)\(fallback)"
        + (notes.isEmpty ? "" : " [\(notes.joined(separator: "; "))]")
    case .keptMemory(let reason): return "load: kept the in-memory state: \(reason)"
    case .loadFailed(let error): return "load: nothing restored: \(error)"
    }
  }
}

/// The app delegate is the game, as in the iOS recipe: sent away, it pauses the engine and
/// saves its snapshot inside the background budget; brought back, it loads and resumes on
/// the next step. It also autosaves every N seconds of game time without a hitch: only the
/// snapshot copy happens here, between steps; encoding and writing happen on a worker.
@MainActor
public final class Game: ApplicationDelegate {
  /// The engine: the state and the rules.
  public private(set) var engine: Engine
  /// Where saves go.
  public let store: SaveStore
  /// The slot this game saves to.
  public let slot: String
  /// Steps between autosaves (0: never). 30 s of game time by default.
  public var autosaveInterval: Int64 = 30 * 60
  /// Everything the game did with saves, oldest first.
  public private(set) var events: [GameEvent] = []
  /// Called for each event as it happens (traces, the HUD).
  public var onEvent: ((GameEvent) -> Void)?
  /// When true the autopilot plays.
  public var autopilot = true
  /// Called on the main thread as a save starts: PNG bytes for the `thumbnail` section (the
  /// window captures its frame), or nil for none.
  public var thumbnailProvider: (() -> [UInt8]?)?

  /// The last 9 states before each step, newest last: an 8-step rollback window, as
  /// rollback netcode keeps. Copies are cheap: the arrays are shared until written.
  public private(set) var rollbackRing: [GameState] = []
  public static let rollbackCapacity = 9

  private var pending: [(kind: GameEvent.SaveKind, frame: Int64, handle: SaveHandle)] = []
  private var backgroundSave: SaveHandle?
  private let logger = Logger(label: "stasis.demo")

  /// Creates the game around an engine and a store.
  public init(engine: Engine, store: SaveStore, slot: String) {
    self.engine = engine
    self.store = store
    self.slot = slot
  }

  // MARK: The loop's side

  /// One loop iteration: steps the engine once when the app is active and not paused,
  /// collects finished saves, and starts an autosave when one is due.
  public func tick(_ application: Application, input: Input = Input()) {
    collectFinishedSaves()
    guard application.state == .active, !engine.isPaused else { return }
    rollbackRing.append(engine.snapshot())
    if rollbackRing.count > Self.rollbackCapacity { rollbackRing.removeFirst() }
    let step = autopilot ? engine.autopilotInput() : input
    engine.step(step)
    if autosaveInterval > 0, engine.state.level.runFrame % autosaveInterval == 0 {
      startSave(.autosave)
    }
  }

  /// Goes back `steps` steps (1...8) using the rollback ring; false when the ring is shorter.
  @discardableResult
  public func rollBack(steps: Int) -> Bool {
    guard steps >= 1, steps <= rollbackRing.count else { return false }
    let target = rollbackRing[rollbackRing.count - steps]
    guard (try? engine.restore(target)) != nil else { return false }
    rollbackRing.removeLast(steps)
    return true
  }

  /// True while some save has not finished.
  public var hasPendingSaves: Bool { pending.contains { $0.handle.result == nil } }

  /// Blocks until every save started so far has finished, then records them.
  public func waitForSaves() {
    for entry in pending { entry.handle.wait() }
    collectFinishedSaves()
  }

  /// Saves now (F5, or a tool), on a worker.
  @discardableResult
  public func saveNow(_ kind: GameEvent.SaveKind = .manual) -> SaveHandle { startSave(kind) }

  /// Restores a state loaded by a tool (the slot picker), recording it like a load.
  public func restore(_ loaded: LoadedSave<GameState>) throws {
    try engine.restore(loaded.state)
    record(
      .restored(
        generation: loaded.generation, frame: loaded.state.level.runFrame, skipped: loaded.skippedDescriptions,
        report: loaded.report))
  }

  /// Pauses or resumes the engine (the pause overlay).
  public func setPaused(_ paused: Bool) { engine.isPaused = paused }

  /// Loads the slot's newest valid generation (falling back past broken ones) and restores it.
  @discardableResult
  public func loadSlot() -> Bool {
    do {
      let loaded = try store.load(DemoSaveFormat.codec, slot: slot)
      try engine.restore(loaded.state)
      record(
        .restored(
          generation: loaded.generation, frame: loaded.state.level.runFrame, skipped: loaded.skippedDescriptions,
          report: loaded.report))
      return true
    } catch let error as SaveFileError {
      record(.loadFailed(error: error))
    } catch {
      record(.loadFailed(error: SaveFileError(.typeMismatch, "the save's level cannot be loaded: \(error)")))
    }
    return false
  }

  // MARK: The delegate's side

  public func applicationDidFinishLaunching(_ application: Application, options: LaunchOptions) {
    if options.restoreSlot != nil { loadSlot() }  // the cold start, before the first step
  }

  public func applicationWillResignActive(_ application: Application) {
    engine.isPaused = true
  }

  public func applicationDidEnterBackground(_ application: Application) {
    engine.isPaused = true
    let snapshot = engine.snapshot()
    backgroundSave = application.saveInBackground(named: "save \(slot)") {
      startSave(.background, snapshot: snapshot)
    }
  }

  public func applicationWillEnterForeground(_ application: Application) {
    collectFinishedSaves()
    guard let handle = backgroundSave else { return }
    backgroundSave = nil
    guard case .success(let receipt)? = handle.result else {
      // The background save did not finish (cancelled by the budget, or failed): the state in
      // memory is newer than anything on disk, so loading would go back in time.
      record(.keptMemory(reason: "the background save did not complete"))
      return
    }
    do {
      let loaded = try store.load(DemoSaveFormat.codec, slot: slot)
      guard loaded.generation == receipt.generation else {
        let why = loaded.skipped.first.map { "\($0.error)" } ?? "a newer generation appeared"
        record(.keptMemory(reason: "generation \(receipt.generation) did not load back: \(why)"))
        return
      }
      try engine.restore(loaded.state)
      record(
        .restored(generation: loaded.generation, frame: loaded.state.level.runFrame, skipped: [], report: loaded.report)
      )
    } catch {
      record(.keptMemory(reason: "the save did not load back: \(error)"))
    }
  }

  public func applicationDidBecomeActive(_ application: Application) {
    engine.isPaused = false
  }

  public func applicationWillTerminate(_ application: Application) {
    engine.isPaused = true
    let snapshot = engine.snapshot()
    application.saveInBackground(named: "save \(slot) before quitting") {
      startSave(.terminate, snapshot: snapshot)
    }
  }

  public func applicationDidReceiveMemoryWarning(_ application: Application) {
    logger.notice("memory warning: nothing cached to drop")
  }

  // MARK: Private

  @discardableResult
  private func startSave(_ kind: GameEvent.SaveKind, snapshot: GameState? = nil) -> SaveHandle {
    let state = snapshot ?? engine.snapshot()
    let handle = store.save(
      state, codec: DemoSaveFormat.codec, slot: slot, summary: state.summary(slot: slot),
      thumbnail: thumbnailProvider?())
    pending.append((kind, state.level.runFrame, handle))
    return handle
  }

  private func collectFinishedSaves() {
    var still: [(kind: GameEvent.SaveKind, frame: Int64, handle: SaveHandle)] = []
    for entry in pending {
      switch entry.handle.result {
      case nil: still.append(entry)
      case .success(let receipt)?:
        record(
          .saved(
            kind: entry.kind, generation: receipt.generation, frame: entry.frame, bytes: receipt.bytes,
            milliseconds: (receipt.encodeDuration + receipt.writeDuration).inMilliseconds))
      case .failure(let error)?:
        record(.saveFailed(kind: entry.kind, frame: entry.frame, error: error))
      }
    }
    pending = still
  }

  /// The one place a save problem or a fallback is logged: the store returns errors, it does
  /// not log them. A load failure is the asker's to report (the runner's one line, the HUD).
  private func record(_ event: GameEvent) {
    events.append(event)
    switch event {
    case .saveFailed: logger.warning("\(event.description)")
    case .restored(_, _, let skipped, _) where !skipped.isEmpty: logger.warning("\(event.description)")
    default: break
    }
    onEvent?(event)
  }
}

extension Game {
  /// The sync test of rollback netcode: restores `snapshot`, replays `steps` steps with the
  /// autopilot, and compares the digest with the state the game reached the first time.
  /// Returns a description of the difference, or nil when they match. The game ends where
  /// it was.
  public func replayMatches(from snapshot: GameState, steps: Int) -> String? {
    let reached = engine.snapshot()
    var replay = engine
    do {
      try replay.restore(snapshot)
    } catch {
      return "the snapshot's level cannot be loaded: \(error)"
    }
    replay.isPaused = false
    for _ in 0..<steps { replay.step(replay.autopilotInput()) }
    let expected = reached.digest
    let replayed = replay.state.digest
    return expected == replayed ? nil : "after rolling back \(steps) steps: \(replayed) instead of \(expected)"
  }
}
