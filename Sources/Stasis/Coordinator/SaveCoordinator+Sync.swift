/// The coordinator's side of a ``SaveSyncing``: holding the game while the slot catches up,
/// and restoring what the sync wrote before the next step.
extension SaveCoordinator {
  /// Blocks the main thread until ``sync`` has caught up or ``syncPatience`` has passed, then
  /// restores what arrived. For headless loops with nothing to draw meanwhile (as
  /// ``Application/waitForBackgroundWork()`` is); a window keeps drawing and lets
  /// ``Application/update()`` see to it.
  public func waitForCatchUp() {
    guard let (progress, since) = catchUp, let application else { return }
    let left = syncPatience - (application.configuration.clock.now() - since)
    _ = progress.wait(timeout: max(.zero, left))
    update()
    if catchUp != nil { settleCatchUp() }  // out of patience: play on, unless a write is under way
  }

  /// Called by the application at every ``Application/update()``: records finished saves
  /// and, while the game is held, sees whether ``sync`` has caught up.
  func update() {
    collectFinishedSaves()
    defer { sayHold() }
    guard let (progress, since) = catchUp, let application else { return }
    if let outcome = progress.outcome {
      finishCatchUp(outcome, application)
    } else if application.configuration.clock.now() - since >= syncPatience, progress.stopWaiting() {
      logger.notice("sync did not catch up within \(syncPatience); playing on from the local save")
      finishCatchUp(.unchanged, application)
    }
  }

  /// Ends a catch-up in progress now — before a save, or another catch-up — so nothing the
  /// sync writes lands under a state the game has moved on from: either the sync has not
  /// begun to write (it never will), or its write is under way and is restored first.
  func settleCatchUp() {
    guard let (progress, _) = catchUp, let application else { return }
    if progress.outcome == nil, progress.stopWaiting() {
      finishCatchUp(.unchanged, application)
      return
    }
    // A local write: its outcome follows at once (the upload after it is not waited for).
    _ = progress.wait(timeout: .seconds(60))
    finishCatchUp(progress.outcome ?? .unchanged, application)
  }

  /// Holds the game and asks ``sync`` to catch up, when the state is a generation it may
  /// write on top of (never over unsaved progress); otherwise only lets waiting uploads go.
  func beginCatchUp(_ application: Application) {
    guard let sync else { return }
    settleCatchUp()
    if hasPendingSaves { waitForSaves() }  // the state's own generation first
    guard let generation = stateGeneration else {
      sync.resumeUploads(application: application)
      return
    }
    let progress = sync.catchUp(stateGeneration: generation, application: application)
    catchUp = (progress, application.configuration.clock.now())
    game.isPaused = true
    if let outcome = progress.outcome { finishCatchUp(outcome, application) }
  }

  func finishCatchUp(_ outcome: CatchUpOutcome, _ application: Application) {
    catchUp = nil
    let launchFailure = launchLoadFailure
    launchLoadFailure = nil
    var restored = false
    if case .restore(let generation, let reason) = outcome {
      do {
        let loaded = try store.load(codec: codec, slot: slot, generation: generation)
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
    if application.state == .active, restoreFailure == nil { game.isPaused = false }
  }
}
