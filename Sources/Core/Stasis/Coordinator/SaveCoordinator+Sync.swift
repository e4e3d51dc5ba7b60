/// The coordinator's side of a ``SaveSyncing``: holding the game while the slot catches up,
/// and restoring what the sync wrote before the next step.
extension SaveCoordinator {
  /// Blocks the game's thread until ``sync`` has caught up or ``syncPatience`` has passed, then
  /// restores what arrived. For headless loops with nothing to draw meanwhile (as
  /// ``Application/waitForBackgroundWork()`` is); a window keeps drawing and lets
  /// ``Application/update()`` see to it. Returns true when the catch-up ended.
  @discardableResult
  public func waitForCatchUp() -> Bool {
    guard let application else { return !isCatchingUp }
    if catchUpPhase.isWanted { waitForSaves() }
    application.runPendingDeliveries()
    update()
    guard let (progress, since) = catchUpPhase.running else { return !isCatchingUp }
    application.counts.count(OperationCounts.gameThreadWaits)
    let left = syncPatience - (application.configuration.clock.now() - since)
    _ = progress.wait(timeout: max(.zero, left))
    application.runPendingDeliveries()
    update()
    if catchUpPhase.running != nil, !settleCatchUp() {
      // Out of patience while the sync writes: its outcome follows the write, bounded by the budget.
      _ = progress.wait(timeout: application.configuration.backgroundBudget)
      application.runPendingDeliveries()
      update()
    }
    return !isCatchingUp
  }

  /// Called by the application at every ``Application/update()``: records finished saves,
  /// begins a catch-up that waited (for the save of the state, or for the write of the one
  /// before), and ends a hold whose patience ran out. Nothing here waits. A catch-up's outcome
  /// comes as a delivery of its own (``caughtUp(_:)``), after what the sync told before it.
  func update() {
    collectFinishedSaves()
    defer { sayHold() }
    guard let application else { return }
    if catchUpPhase.isWanted, !hasPendingSaves, application.state == .active || application.state == .inactive {
      catchUpPhase.dropWanted()
      beginCatchUp(application)
    }
    guard let (progress, since) = catchUpPhase.running, progress.outcome == nil else { return }
    if application.configuration.clock.now() - since >= syncPatience, progress.stopWaiting() {
      logger.notice("sync did not catch up within \(syncPatience); playing on from the local save")
      finishCatchUp(.unchanged, application)
    }
  }

  /// A catch-up's outcome, delivered on the game's thread: restores what it wrote, if it is still
  /// the catch-up in progress.
  func caughtUp(_ progress: CatchUp) {
    guard let application, let current = catchUpPhase.running?.progress, current === progress,
      let outcome = progress.outcome
    else { return }
    finishCatchUp(outcome, application, written: progress.written, unreadable: progress.unreadable)
  }

  /// Ends a catch-up in progress now — before a save, or another catch-up — so nothing the
  /// sync writes lands under a state the game has moved on from: true when it is over (it had
  /// finished, or the sync had not begun to write and never will). False when the sync's write
  /// is under way: nothing waits for it on the game's thread; its outcome is restored at the
  /// next ``Application/update()``, and the game, held since the catch-up began, has nothing
  /// newer to save meanwhile.
  @discardableResult
  func settleCatchUp() -> Bool {
    guard let (progress, _) = catchUpPhase.running, let application else { return true }
    if progress.outcome == nil, progress.stopWaiting() {
      finishCatchUp(.unchanged, application)
    } else if let outcome = progress.outcome {  // given before, or while, the coordinator stopped waiting
      finishCatchUp(outcome, application, written: progress.written, unreadable: progress.unreadable)
    } else {
      return false
    }
    return true
  }

  /// Holds the game and asks ``sync`` to catch up, when the state is a generation it may
  /// write on top of (never over unsaved progress); otherwise only lets waiting uploads go.
  /// While a save of the state is still being written (or the write of a catch-up before it),
  /// the game is held and the catch-up begins at the ``Application/update()`` after it ends.
  func beginCatchUp(_ application: Application) {
    guard let sync else { return }
    // The one whose write is under way is restored first, and the state's own save ends first:
    // this one begins at the update() after.
    guard settleCatchUp(), !hasPendingSaves else {
      catchUpPhase.want()
      game.isPaused = true
      return
    }
    guard let generation = stateGeneration else {
      store.dropHandedOver()
      sync.resumeUploads(application: application)
      return
    }
    let progress = sync.catchUp(stateGeneration: generation, application: application)
    catchUpPhase = .running(progress, since: application.configuration.clock.now(), another: catchUpPhase.isWanted)
    // The outcome reaches the game's thread as a delivery: after the sync's own events of it.
    progress.whenFinished { [weak self, weak progress] in
      application.deliverOnUpdate { if let progress { self?.caughtUp(progress) } }
    }
    game.isPaused = true
    if let outcome = progress.outcome {
      finishCatchUp(outcome, application, written: progress.written, unreadable: progress.unreadable)
    }
  }

  /// Restores what the catch-up wrote: from `written` when the sync handed over what it wrote
  /// (no read back from disk, and no second decode when the sync's verification decoded its
  /// state), else from the file. `unreadable`: the other side's newest is a save this build
  /// cannot read, and the game is held as a slot whose newest it cannot read.
  func finishCatchUp(
    _ outcome: CatchUpOutcome, _ application: Application, written: VerifiedSave? = nil,
    unreadable: SaveFileError? = nil
  ) {
    catchUpPhase.end()
    store.dropHandedOver()  // what the restore read for the catch-up is not kept past it
    let launchFailure = launchLoadFailure
    launchLoadFailure = nil
    var restored = false
    if case .restore(let generation, let reason) = outcome {
      do throws(any Error) {
        let loaded: LoadedSave<Game.State>
        if let written {
          let path = store.path(of: slot, generation: generation)
          let document = written.document
          let decoded = try store.decode(written, codec: codec, slot: slot, generation: generation)
          loaded = LoadedSave(
            state: decoded.state, document: document, generation: generation, path: path, report: decoded.report,
            skipped: [])
        } else {
          store.counts.count(OperationCounts.readBacks)
          loaded = try store.load(codec: codec, slot: slot, generation: generation)
        }
        try restore(loaded)
        restored = true
      } catch {
        if launchFailure == nil {
          record(.keptMemory(reason: "\(reason), but generation \(generation) did not load: \(error)"))
        } else {
          logger.warning("\(reason), but generation \(generation) did not load: \(error)")
        }
      }
    }
    // A cold start whose local restore failed: the catch-up's restore is its one load outcome.
    if let launchFailure, !restored { record(.loadFailed(launchFailure)) }
    if restored, restoreFailure?.reason == .newerInCloud {
      // The other side moved on to a save this build reads, and the game restored it: the hold
      // on the one it could not read is over (its choices would now go back past this one).
      restoreFailure = nil
      sayHold()
    }
    if let unreadable, restoreFailure == nil, unreadable.context.file != answeredNewerInCloud {
      // As on one device whose newest generation is a newer build's: held, with the choices.
      // Once answered, the same save on the other side is not asked about again in this process.
      let generation = stateGeneration.flatMap { $0 > 0 ? $0 : nil }
      restoreFailure = RestoreFailure(error: unreadable, olderGeneration: generation, reason: .newerInCloud)
      sayHold()
    }
    if application.state == .active, restoreFailure == nil { game.isPaused = false }
  }
}

/// Where a coordinator's catch-up is, as one value: "held for the sync" is a phase, not a
/// formula of flags. With the coordinator's ``SaveCoordinator/restoreFailure``, it is all that
/// holds the game (``SaveCoordinator/heldReason``).
enum CatchUpPhase {
  /// No catch-up: the game plays, unless a restore failure holds it.
  case none
  /// A catch-up is wanted, and waits for the save of the state (or the write of the catch-up
  /// before it) to end: the ``Application/update()`` after begins it, in the foreground. The
  /// game is held meanwhile. A trip to the background drops it (the return asks again).
  case wanted
  /// The sync is catching up, asked at `since` on the application's clock; `another`: one more
  /// was wanted meanwhile, and is begun once this one ends.
  case running(CatchUp, since: Duration, another: Bool)

  /// True in every phase but ``none``: the game is held for the sync.
  var holds: Bool {
    if case .none = self { false } else { true }
  }

  /// The catch-up under way, and when it was asked for.
  var running: (progress: CatchUp, since: Duration)? {
    if case .running(let progress, let since, _) = self { (progress, since) } else { nil }
  }

  /// True when a catch-up waits to begin (alone, or after the one under way).
  var isWanted: Bool {
    switch self {
    case .none: false
    case .wanted: true
    case .running(_, _, let another): another
    }
  }

  /// Asks for a catch-up once what is under way ends.
  mutating func want() {
    switch self {
    case .none, .wanted: self = .wanted
    case .running(let progress, let since, _): self = .running(progress, since: since, another: true)
    }
  }

  /// Drops a catch-up that waits to begin; the one under way goes on.
  mutating func dropWanted() {
    switch self {
    case .none, .wanted: self = .none
    case .running(let progress, let since, _): self = .running(progress, since: since, another: false)
    }
  }

  /// The catch-up under way ended: the one wanted meanwhile waits for its update().
  mutating func end() {
    if case .running(_, _, let another) = self { self = another ? .wanted : .none }
  }
}
