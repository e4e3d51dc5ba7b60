/// Quitting a headless game or a tool, where no platform keeps the process up for the budget.
extension Application {
  /// Quits and waits for the quit's work: ``terminate()`` (the delegate's `willTerminate`:
  /// a ``SaveCoordinator`` saves, and a cloud sync begins the quit upload as a background task
  /// of its own), then blocks the main thread until every background task has ended or the
  /// budget has run out. Returns what happened: the termination's ``BackgroundEpisode``, whose
  /// outcome is `completed` when the save and its upload both ended inside the budget, or
  /// `expired(cutTasks:)` naming what was cut (a cut upload goes on the next launch). Nil
  /// when the application was not running.
  ///
  /// ```swift
  /// let episode = app.quit()   // then exit: nothing of the quit is still in flight
  /// ```
  ///
  /// Waiting for one task (``waitForBackgroundWork()``) or for the saves alone is not enough:
  /// the quit upload starts when the save ends, and a process that exits then cuts it. On a
  /// `ManualClock` (tests) advance the clock and call ``update()`` instead: this waits in
  /// real time.
  @discardableResult
  public func quit() -> BackgroundEpisode? {
    guard state != .notRunning else { return nil }
    terminate()
    while hasBackgroundEpisode { waitForBackgroundWork() }
    return backgroundEpisodes.last  // the termination's: nothing else can start once it has
  }
}
