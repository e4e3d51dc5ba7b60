import Logging

/// The iOS save recipe for any game, as the application's delegate: pause on resign, snapshot
/// on background and save as a background task cancelled on expiry, restore on foreground (or
/// keep memory when that save did not finish), restore on a cold start with fallback,
/// autosave every N steps with only the snapshot on the main thread, save on quit.
///
/// ```swift
/// let coordinator = SaveCoordinator(game: tanks, store: store, codec: codec, slot: "autosave")
/// coordinator.autosaveInterval = 30 * 60
/// let app = Application(delegate: coordinator)
/// app.launch(options: LaunchOptions(restoreSlot: "autosave"))
/// while running {
///   if app.state == .active, !tanks.isPaused { tanks.step(); coordinator.didStep(frame: tanks.frame) }
///   app.update()
/// }
/// ```
///
/// Encoding, checksumming, drawing the thumbnail and writing all happen on a worker; the
/// coordinator reports each outcome as a ``SaveEvent`` and logs save failures once.
@MainActor
public final class SaveCoordinator<Game: SaveableGame>: ApplicationDelegate {
  /// The game.
  public let game: Game
  /// Where saves go.
  public let store: SaveStore
  /// How the state becomes a file and back.
  public let codec: SaveCodec<Game.State>
  /// The slot this coordinator saves to and restores from.
  public let slot: SaveSlot
  /// Steps between autosaves (0: never): an autosave starts when `didStep(frame:)` reports a
  /// multiple of it (see ``autosaveOverlap`` for one that falls due while a save is written).
  public var autosaveInterval: Int64 = 0
  /// What an autosave does when it falls due while an earlier save of this coordinator is
  /// still being written: handed over to wait behind it (the default), or skipped
  /// (``AutosaveOverlap/skip``), so a game that autosaves a large state often holds at most one
  /// snapshot besides its state.
  public var autosaveOverlap: AutosaveOverlap = .wait
  /// Draws a thumbnail (PNG bytes) from a snapshot, on the save's worker, never the main thread.
  public var thumbnail: (@Sendable (Game.State) -> [UInt8]?)?
  /// How far a restore may fall back (``LoadFallback/pastDamaged`` by default).
  public var loadFallback: LoadFallback = .pastDamaged
  /// What happened to saves, oldest first: the newest ``eventHistoryLimit`` events, so a game
  /// that autosaves for hours keeps a bounded history (``onEvent`` sees every one).
  public private(set) var events: [SaveEvent] = []
  /// How many events ``events`` keeps (default 1,000).
  public var eventHistoryLimit = 1_000
  /// Called for each event as it happens (a HUD, a trace).
  public var onEvent: ((SaveEvent) -> Void)?
  /// Told every lifecycle moment after the coordinator has done its part (the game's own
  /// handling: music, network, ...).
  public weak var delegate: (any ApplicationDelegate)?
  /// Keeps the slot in step with a cloud save server (`StasisCloud`'s `CloudSync`) or a
  /// game's own service: told of every save, asked to catch up on launch and on return.
  public var sync: (any SaveSyncing)?
  /// How long the game is held, on launch and on return, for ``sync`` to catch up before it
  /// plays on from what it has; frames go on meanwhile, only the steps wait.
  public var syncPatience: Duration = .seconds(5)
  /// True while the game is held for ``sync`` to catch up (or for the save it catches up from).
  public var isCatchingUp: Bool { catchUpPhase.holds }
  /// True while the game is held: paused, its steps waiting, nothing saved into the slot. A
  /// loop that steps only while `!game.isPaused` waits; ``heldReason`` says what ends it.
  public var isHeld: Bool { heldReason != nil }
  /// Why the game is held, or nil: a ``restoreFailure`` the game must answer, or a catch-up.
  public var heldReason: HoldReason? {
    if let restoreFailure { return .restoreFailure(restoreFailure.error) }
    return isCatchingUp ? .catchingUp : nil
  }
  /// How often a hold that lasts is said again, as a ``SaveEvent/held(_:for:)`` event and a
  /// notice log (10 seconds by default, on the application's clock).
  public var holdNoticeInterval: Duration = .seconds(10)
  /// The hold said last: its reason, when it began and when it was last said.
  private var holdNotice: (reason: HoldReason, began: Duration, said: Duration)?
  /// The restore that failed on launch over saves that exist, until the game answers it with
  /// ``resolveRestoreFailure(_:)``. Meanwhile the game stays paused and nothing is saved into
  /// the slot: a game that ignores it cannot play over, or prune, the save it could not read.
  public internal(set) var restoreFailure: RestoreFailure?
  /// After the game chose to play on past unreadable generations, saves go alongside them.
  private var unreadableNewest: UnreadableNewest = .refuse

  var pending: [(reason: SaveReason, summary: SaveSummary, handle: SaveHandle, step: UInt64)] = []
  /// How the state in play reached this schema (migrations, defaults, declared drops), carried
  /// into every later save of it as a `load-report` section, for `stasis inspect`.
  private var lineage: LoadReport?
  private var backgroundSave: SaveHandle?
  let logger: Logger
  /// The generation the game's state is: the one restored, or the one a save of an unstepped
  /// snapshot wrote; 0 for a fresh game over an empty slot; nil once the game has stepped past
  /// every generation (unsaved progress). A sync writes on top of exactly this one.
  var stateGeneration: Int?
  /// The other side's unreadable newest the player answered (its ``SaveFileError/Context/file``):
  /// not asked about again in this process, as a slot's own is not until the next launch.
  var answeredNewerInCloud: String?
  /// Steps and restores so far: a save's snapshot is the state only while none came after it.
  var steps: UInt64 = 0
  /// Where the slot's catch-up is (``CatchUpPhase``): with ``restoreFailure``, what holds the game.
  var catchUpPhase = CatchUpPhase.none
  /// A cold start's failed restore, held back while the sync catches up: what the catch-up
  /// restores is the launch's one load outcome, and only when it restores nothing is this one.
  var launchLoadFailure: SaveFileError?
  /// The causes of failed saves already logged since the last save that succeeded: a cause is
  /// logged once, not on every autosave it fails (each failure is still an event).
  private var loggedSaveFailures: Set<String> = []
  weak var application: Application?
  private var updateObserver: ObserverToken?

  /// Creates a coordinator for `game`'s saves in `slot` of `store`.
  public init(
    game: Game, store: SaveStore, codec: SaveCodec<Game.State>, slot: SaveSlot,
    logger: Logger = Logger(label: "stasis.coordinator")
  ) {
    self.game = game
    self.store = store
    self.codec = codec
    self.slot = slot
    self.logger = logger
  }

  // MARK: The loop's side

  /// Call after each engine step with the step's number: collects finished saves, and starts
  /// an autosave when `frame` is a multiple of ``autosaveInterval``.
  public func didStep(frame: Int64) {
    steps &+= 1
    stateGeneration = nil
    collectFinishedSaves()
    if autosaveInterval > 0, frame % autosaveInterval == 0, restoreFailure == nil {
      if autosaveOverlap == .skip, hasPendingSaves {
        skippedAutosaves &+= 1
      } else {
        startSave(.autosave)
      }
    }
  }

  /// Autosaves that fell due while an earlier save was still being written, and were skipped
  /// (``AutosaveOverlap/skip``).
  public private(set) var skippedAutosaves = 0

  /// Saves now on a worker (a save key, a checkpoint).
  @discardableResult
  public func saveNow(_ reason: SaveReason = .manual) -> SaveHandle {
    guard settleCatchUp() else {
      // Held since the catch-up began: nothing newer than what the sync writes on top of.
      let handle = heldSave(.catchingUp, because: "the sync is writing the slot; save again once it is restored")
      if case .failure(let error)? = handle.result { record(.saveFailed(reason, error, summary: SaveSummary())) }
      return handle
    }
    return startSave(reason)
  }

  /// True while some save has not finished.
  public var hasPendingSaves: Bool { pending.contains { $0.handle.result == nil } }

  /// Blocks the game's thread until every save started so far has finished, then records them.
  /// An explicit wait, for tools and headless runners: a game loop hears of its saves at
  /// ``Application/update()`` (``onEvent``).
  public func waitForSaves() {
    if hasPendingSaves { application?.counts.count(OperationCounts.gameThreadWaits) }
    for entry in pending { _ = entry.handle.waitForResult() }
    collectFinishedSaves()
  }

  /// Loads the slot's newest generation that loads (past damaged ones) and restores it;
  /// false, with a ``SaveEvent/loadFailed(_:)`` event, when nothing could be restored.
  ///
  /// A failure leaves the game's state as it was. On a cold start (``LaunchOptions/restoreSlot``)
  /// a failure over saves that exist also holds the game: see ``restoreFailure``.
  @discardableResult
  public func restoreSlot() -> Bool {
    guard let failure = restoreSlotFailure() else { return true }
    record(.loadFailed(failure))
    return false
  }

  /// Restores the slot; the error when nothing was restored.
  private func restoreSlotFailure() -> SaveFileError? {
    let failure: SaveFileError
    // What the load could not make a state of is kept now, durably: the load itself writes nothing.
    defer { keepWhatTheLoadCouldNotRead() }
    if sync != nil { store.handOverNextRead(of: slot) }  // the catch-up after it takes what this reads
    let loaded: LoadedSave<Game.State>
    do {
      loaded = try store.load(codec: codec, slot: slot, fallback: loadFallback)
    } catch {
      return error
    }
    do {
      try restore(loaded)
      return nil
    } catch let error as SaveFileError {
      failure = error
    } catch {
      // The file it names is the one refused: the generation offered instead is an older one.
      failure = SaveFileError(
        .refusedByGame, "the game refused generation \(loaded.generation): \(error)",
        context: .init(file: loaded.path), underlyingError: error)
    }
    return failure
  }

  /// The explicit, durable keep of the generations a load of this coordinator's store could not
  /// make a state of; logged when it cannot be written (nothing is pruned meanwhile by this
  /// store, whose own writes keep them first).
  private func keepWhatTheLoadCouldNotRead() {
    do {
      try store.keepNoted(slot: slot)
    } catch {
      logger.warning("slot '\(slot)': the generations this build cannot read could not be marked kept: \(error)")
    }
  }

  /// The cold start's restore: a failure over saves that exist holds the game until it answers.
  /// The failure is returned, not recorded: a catch-up may still restore the slot.
  private func restoreOnLaunch() -> SaveFileError? {
    if let branch = keptNewerBranch() {
      // A newer build's save that an older build played beside: the player chooses which.
      restoreFailure = branch
      game.isPaused = true
      return branch.error
    }
    guard let failure = restoreSlotFailure() else { return nil }
    if failure.kind != .notFound {
      restoreFailure = RestoreFailure(error: failure, olderGeneration: newestLoadable(below: failure))
      game.isPaused = true
    }
    return failure
  }

  /// Answers a ``restoreFailure``: restores the older generation, or starts over, and lets the
  /// game play. The generations that failed stay kept until discarded.
  public func resolveRestoreFailure(_ choice: RestoreChoice) throws(SaveFileError) {
    guard let failure = restoreFailure else { return }
    if failure.reason == .newerInCloud, let older = failure.olderGeneration, choice == .startOver {
      // The game holds a state it restored: a new game is a launch without restoreSlot.
      var refused = SaveFileError(
        .held, "the other side's newest save is one this build cannot read; the game holds generation \(older)",
        suggestion: "play on beside it with .loadGeneration(\(older)), or wait for the update")
      refused.hold = .restoreFailure(failure.error)
      throw refused
    }
    if failure.reason == .newerInCloud { answeredNewerInCloud = failure.error.context.file }
    switch choice {
    case .loadGeneration(let generation):
      let loaded = try store.load(codec: codec, slot: slot, generation: generation)
      if case .savedAlongside? = restoreFailure?.reason, store.newestGeneration(of: slot) != generation {
        // The branch not chosen stays until discarded, like the one chosen over it.
        try keepNewest(reason: "an older build's save beside generation \(generation), not chosen")
      }
      do {
        try giveToGame(loaded.state)
      } catch {
        throw SaveFileError(
          .refusedByGame, "the game refused generation \(generation): \(error)", context: .init(file: loaded.path),
          underlyingError: error)
      }
      restoreFailure = nil
      adopt(loaded, skipped: [])
    case .startOver:
      let failed = restoreFailure?.error
      switch failed?.kind {
      case .newerSchema? where restoreFailure?.reason != .newerInCloud,
        .newerFormat? where restoreFailure?.reason != .newerInCloud:
        break  // the header says so: the store keeps it, naming its schema, before the first save beside it
      case _? where failed!.isUnreadableByThisBuild && failed?.context.file == newestPath:
        try keepNewest(
          reason: "this build cannot read it (\(failed!.location): \(failed!.message))" + KeptGeneration.startOverSuffix
        )
      default:
        try keepNewest(reason: "the newest save before a start-over")
      }
      restoreFailure = nil
      stateGeneration = nil  // a new game over saves it did not come from: nothing to catch up
      if let application { sync?.beganNewHistory(application: application) }
    }
    unreadableNewest = .saveAlongside
    if application?.state == .active, !isCatchingUp { game.isPaused = false }
    sayHold()
  }

  private var newestPath: String? { store.newestGeneration(of: slot).map { store.path(of: slot, generation: $0) } }

  /// Keeps the slot's newest generation until discarded (a start-over or a new game goes on
  /// top of it): the one explicit, durable step, taken before the first save beside it.
  ///
  /// A generation already kept because a build could not read it is kept again with the
  /// start-over named: a build that reads it later (a tool re-signed it, the migration
  /// shipped) must not take the player's last game off the list (found by stasis-sim, seed 43).
  private func keepNewest(reason: String) throws(SaveFileError) {
    guard let newest = store.newestGeneration(of: slot) else { return }
    if let kept = store.keptGenerations(of: slot).first(where: { $0.generation == newest }) {
      guard kept.saysUnreadable else { return }
      try store.keep(generation: newest, slot: slot, reason: kept.reason + KeptGeneration.startOverSuffix)
      return
    }
    try store.keep(generation: newest, slot: slot, reason: reason)
  }

  /// On launch: a newer build's save (kept) below generations an older build wrote beside it,
  /// when this build reads both: the hold that offers the two (``RestoreFailure/Reason/savedAlongside(newer:)``).
  private func keptNewerBranch() -> RestoreFailure? {
    let kept = store.keptGenerations(of: slot)
    guard !kept.isEmpty, let listed = try? store.listGenerations(of: slot),
      let newest = listed.first(where: { $0.header?.game.name == codec.game.name }),
      let newestSchema = newest.header?.game.schemaVersion
    else { return nil }
    let branch = listed.first { info in
      guard info.generation < newest.generation, kept.contains(where: { $0.generation == info.generation }),
        let schema = info.header?.game.schemaVersion, info.header?.game.name == codec.game.name
      else { return false }
      return schema > newestSchema && schema <= codec.game.schemaVersion
    }
    guard let branch, let branchSchema = branch.header?.game.schemaVersion else { return nil }
    let error = SaveFileError(
      .savedAlongside,
      "generation \(newest.generation) (schema \(newestSchema)) was saved beside generation \(branch.generation) "
        + "(schema \(branchSchema)) by an older build; both are kept",
      context: .init(file: newest.path),
      suggestion:
        "choose: resolveRestoreFailure(.loadGeneration(\(newest.generation))) plays on from the older build's save, "
        + ".loadGeneration(\(branch.generation)) from this build's; the other stays kept until discarded")
    return RestoreFailure(
      error: error, olderGeneration: newest.generation, reason: .savedAlongside(newer: branch.generation))
  }

  /// The newest generation older than the one that failed that loads, for the game to offer.
  private func newestLoadable(below error: SaveFileError) -> Int? {
    let all = (try? store.generations(of: slot)) ?? []
    let failed = error.context.file.flatMap { path in all.first { store.path(of: slot, generation: $0) == path } }
    return all.first { generation in
      guard failed.map({ generation < $0 }) ?? true else { return false }
      return (try? store.load(codec: codec, slot: slot, generation: generation)) != nil
    }
  }

  /// Restores a state loaded elsewhere (a slot picker), recording it like a load.
  public func restore(_ loaded: LoadedSave<Game.State>) throws {
    try giveToGame(loaded.state)
    adopt(loaded, skipped: loaded.skippedDescriptions)
  }

  /// Makes a restored save the game's state: its lineage, its generation (a save started
  /// before it no longer is the state), and the event.
  private func adopt(_ loaded: LoadedSave<Game.State>, skipped: [String]) {
    if let newest = store.newestGeneration(of: slot), loaded.generation < newest, let application {
      // Played on from an older generation than the slot's newest: what it saves next is a
      // branch from there, which may not continue what the slot synced.
      sync?.restoredOlderGeneration(loaded.generation, application: application)
    }
    remember(loaded)
    steps &+= 1
    stateGeneration = loaded.generation
    record(
      .restored(
        generation: loaded.generation, summary: (try? game.summary(of: loaded.state)) ?? loaded.document.summary,
        skipped: skipped, report: loaded.report))
  }

  /// A new game over a slot that has saves: they are not this game's past, so its saves go
  /// beside them (a newer build's save among them is never in the way), and the newest is
  /// kept until discarded. A keep that cannot be written holds the game, loudly.
  private func beginNewGame() {
    guard store.newestGeneration(of: slot) != nil else { return }
    unreadableNewest = .saveAlongside
    do {
      try keepNewest(reason: "the newest save before a new game")
    } catch {
      hold(error)
    }
  }

  /// Holds the game: paused, saving nothing into the slot, until ``resolveRestoreFailure(_:)``.
  private func hold(_ error: SaveFileError) {
    guard restoreFailure == nil else { return }
    restoreFailure = RestoreFailure(error: error, olderGeneration: nil)
    game.isPaused = true
    sayHold()
  }

  /// Says a hold when it begins (or its reason changes), and again every
  /// ``holdNoticeInterval`` while it lasts: an event and a notice log each time.
  func sayHold() {
    guard let reason = heldReason else {
      holdNotice = nil
      return
    }
    let now = application?.configuration.clock.now() ?? holdNotice?.said ?? .zero
    if let notice = holdNotice, notice.reason == reason {
      guard now - notice.said >= holdNoticeInterval else { return }
      holdNotice?.said = now
    } else {
      holdNotice = (reason, now, now)
    }
    let event = SaveEvent.held(reason, for: now - (holdNotice?.began ?? now))
    logger.notice("\(event.description)")
    record(event)
  }

  // MARK: The delegate's side

  public func applicationDidFinishLaunching(_ application: Application, options: LaunchOptions) {
    self.application = application
    if updateObserver == nil {
      updateObserver = application.addUpdateObserver { [weak self] _ in self?.update() }
    }
    if options.restoreSlot != nil {
      let failure = restoreOnLaunch()  // the cold start, before the first step
      if stateGeneration == nil, (try? store.generations(of: slot))?.isEmpty ?? true { stateGeneration = 0 }
      // One load outcome: while a catch-up may restore the slot, the local failure waits for it.
      launchLoadFailure = failure
      beginCatchUp(application)
      if catchUpPhase.running == nil, let failure = launchLoadFailure {
        launchLoadFailure = nil
        record(.loadFailed(failure))
      }
      sayHold()
    } else {
      beginNewGame()
      sync?.resumeUploads(application: application)  // a new game: what waited from the last one goes up
      sync?.beganNewHistory(application: application)  // then its own saves, as a history of their own
    }
    delegate?.applicationDidFinishLaunching(application, options: options)
  }

  public func applicationWillResignActive(_ application: Application) {
    game.isPaused = true
    delegate?.applicationWillResignActive(application)
  }

  public func applicationDidEnterBackground(_ application: Application) {
    backgroundSave = pauseAndSave(.background, named: "save \(slot)", application)
    delegate?.applicationDidEnterBackground(application)
  }

  public func applicationWillEnterForeground(_ application: Application) {
    collectFinishedSaves()
    if let handle = backgroundSave {
      backgroundSave = nil
      restoreAfterBackground(handle)
    }
    beginCatchUp(application)
    sayHold()
    delegate?.applicationWillEnterForeground(application)
  }

  public func applicationDidBecomeActive(_ application: Application) {
    game.isPaused = isCatchingUp || restoreFailure != nil
    delegate?.applicationDidBecomeActive(application)
  }

  public func applicationWillTerminate(_ application: Application) {
    pauseAndSave(.terminate, named: "save \(slot) before quitting", application)
    delegate?.applicationWillTerminate(application)
  }

  public func applicationDidReceiveMemoryWarning(_ application: Application) {
    delegate?.applicationDidReceiveMemoryWarning(application)
  }

  public func application(_ application: Application, didChangeEnvironment change: EnvironmentChange) {
    delegate?.application(application, didChangeEnvironment: change)
  }

  // MARK: Private

  /// Pauses the game, snapshots it here on the main thread, and saves the snapshot as a
  /// background task that the budget's expiry cancels.
  ///
  /// While a catch-up's write is under way the game has been held since the catch-up began:
  /// its state is the generation the sync writes on top of, so nothing is saved (nil), and the
  /// catch-up's generation is restored at the next ``Application/update()``.
  @discardableResult
  private func pauseAndSave(_ reason: SaveReason, named name: String, _ application: Application) -> SaveHandle? {
    game.isPaused = true
    catchUpPhase.dropWanted()  // the return asks again
    // What a catch-up wrote is restored first: the save is of the state the game has.
    guard settleCatchUp() else { return nil }
    let snapshot = game.snapshot()
    return application.saveInBackground(named: name) { startSave(reason, snapshot: snapshot, application: application) }
  }

  /// Back from the background in the same process: restore the generation just written, or
  /// keep memory when it did not complete (loading an older one would go back in time).
  private func restoreAfterBackground(_ handle: SaveHandle) {
    guard case .success(let receipt)? = handle.result else {
      record(.keptMemory(reason: "the background save did not complete"))
      return
    }
    if sync != nil { store.handOverNextRead(of: slot) }  // the catch-up after it takes what this reads
    do {
      let loaded = try store.load(codec: codec, slot: slot)
      guard loaded.generation == receipt.generation else {
        let why = loaded.skipped.first.map { "\($0.error)" } ?? "a newer generation appeared"
        record(.keptMemory(reason: "generation \(receipt.generation) did not load back: \(why)"))
        return
      }
      try giveToGame(loaded.state)
      adopt(loaded, skipped: [])
    } catch {
      record(.keptMemory(reason: "the save did not load back: \(error)"))
    }
  }

  /// Keeps the lineage of a restored save: its own report when it was migrated or defaulted,
  /// else the one it carries.
  private func remember(_ loaded: LoadedSave<Game.State>) {
    if !loaded.report.isClean {
      lineage = loaded.report
    } else if case .raw(let bytes)? = loaded.document[section: LoadReport.sectionName]?.content {
      lineage = LoadReport(sectionBytes: bytes)
    } else {
      lineage = nil
    }
  }

  /// Gives `state` to the game (``SaveableGame/restore(_:)``), counted: every restore of the
  /// coordinator goes through here.
  private func giveToGame(_ state: Game.State) throws {
    store.counts.count(OperationCounts.restores)
    try game.restore(state)
  }

  /// A save that did not start because the game is held: its handle, failed at once.
  private func heldSave(
    _ hold: HoldReason, because why: String, context: SaveFileError.Context = .init(), suggestion: String? = nil
  ) -> SaveHandle {
    let handle = SaveHandle(slot: slot)
    var error = SaveFileError(.held, "nothing saved: \(why)", context: context, suggestion: suggestion)
    error.hold = hold
    handle.finish(.failure(error))
    return handle
  }

  @discardableResult
  func startSave(_ reason: SaveReason, snapshot: Game.State? = nil, application: Application? = nil)
    -> SaveHandle
  {
    if let restoreFailure {
      // Held since launch: no progress to save, and a save would go over what it could not read.
      return heldSave(
        .restoreFailure(restoreFailure.error), because: "the game is held until resolveRestoreFailure(_:) answers",
        context: restoreFailure.error.context,
        suggestion: "call resolveRestoreFailure(_:) with the player's choice")
    }
    let state = snapshot ?? game.snapshot()
    let summary: SaveSummary
    do {
      summary = try game.summary(of: state)
    } catch {
      logger.warning("the game's summary could not be made, so this save has none: \(error)")
      summary = SaveSummary()
    }
    let handle = store.save(
      state, codec: codec, slot: slot, summary: summary, drawThumbnail: thumbnail,
      rawSections: lineage.map { [(LoadReport.sectionName, $0.sectionBytes)] } ?? [],
      unreadableNewest: unreadableNewest,
      keepingWrittenFile: sync != nil)
    pending.append((reason, summary, handle, steps))
    if let sync, let application = application ?? self.application {
      sync.saveStarted(handle, reason: reason, application: application)
    }
    return handle
  }

  /// Records the saves that finished since the last call as events (``didStep(frame:)`` and
  /// the lifecycle callbacks call it; a loop that is not stepping may too).
  public func collectFinishedSaves() {
    var still: [(reason: SaveReason, summary: SaveSummary, handle: SaveHandle, step: UInt64)] = []
    for entry in pending {
      switch entry.handle.result {
      case nil: still.append(entry)
      case .success(let receipt)?:
        if entry.step == steps { stateGeneration = receipt.generation }  // no step since its snapshot
        record(.saved(entry.reason, receipt, summary: entry.summary))
      case .failure(let error)?:
        record(.saveFailed(entry.reason, error, summary: entry.summary))
        // Every later save would fail the same way: the game must not play on unsaved.
        if error.kind == .newerSaveInSlot { hold(error) }
      }
    }
    pending = still
  }

  /// The one place a save problem or a fallback is logged. A load failure is the asker's to
  /// report (a runner's one line, a HUD), so it is only recorded.
  func record(_ event: SaveEvent) {
    events.append(event, keepingNewest: eventHistoryLimit)
    switch event {
    case .saveFailed(_, let error, _):
      let cause = "\(error.kind.rawValue)|\(error.context.part ?? "")|\(error.message)"
      if loggedSaveFailures.insert(cause).inserted {
        logger.warning("\(event.description)")
      } else {
        logger.debug("save failed again, as logged before: \(error.kind.rawValue)")
      }
    case .saved: loggedSaveFailures.removeAll()
    case .restored(_, _, let skipped, _) where !skipped.isEmpty: logger.warning("\(event.description)")
    default: break
    }
    onEvent?(event)
  }
}

/// What an autosave that falls due while an earlier save is still being written does.
///
/// A snapshot that waits is a copy of the state: the game changes its own state on the next
/// step, and the waiting snapshot keeps the old one. For a large state saved often, that copy
/// is the memory autosaving costs (a 16 MB city autosaved every tick held 3.3× the memory of
/// the same run without saves when each waited).
public enum AutosaveOverlap: Sendable, Equatable {
  /// The autosave is handed over and waits behind the save being written; a newer one
  /// replaces it (``SaveOutcome/superseded(by:)``). At most two snapshots are held. The default.
  case wait
  /// The autosave is skipped, and the next one due is taken: at most one snapshot is held,
  /// the one being written. A state reached since the last save is saved by the next autosave
  /// due once the writer is free, or by the background or quit save. For a large state
  /// autosaved often.
  case skip
}
