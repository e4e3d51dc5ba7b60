import Synchronization

extension Application {
  /// Runs a save as a background task: the task ends when the save is durable (or fails),
  /// and if the budget runs out first the expiration handler cancels the save, so the
  /// previous generation stays the newest.
  ///
  /// ```swift
  /// func applicationDidEnterBackground(_ application: Application) {
  ///   let snapshot = engine.snapshot()
  ///   application.saveInBackground(named: "save autosave") {
  ///     store.save(snapshot, codec: codec, slot: "autosave", summary: snapshot.summary)
  ///   }
  /// }
  /// ```
  @discardableResult
  public func saveInBackground(named name: String, _ start: () -> SaveHandle) -> SaveHandle {
    let started = Mutex<SaveHandle?>(nil)
    let id = beginCancellableBackgroundTask(named: name, cancel: { started.withLock { $0 }?.cancel() })
    let handle = start()
    started.withLock { $0 = handle }
    handle.onCompletion { [weak self] _ in self?.endBackgroundTask(id) }
    return handle
  }

  /// Begins a background task for work that `cancel` stops: when the budget runs out first,
  /// the expiration handler calls `cancel` and ends the task, so the watchdog never has a
  /// reason to act. End it with ``endBackgroundTask(_:)`` when the work is done.
  ///
  /// ```swift
  /// let id = application.beginCancellableBackgroundTask(named: "upload") { upload.cancel() }
  /// upload.onCompletion { application.endBackgroundTask(id) }
  /// ```
  public func beginCancellableBackgroundTask(
    named name: String, cancel: @escaping @MainActor @Sendable () -> Void
  ) -> BackgroundTaskID {
    let taskID = Mutex(BackgroundTaskID.invalid)
    let id = beginBackgroundTask(
      named: name,
      expirationHandler: { [weak self] in
        cancel()
        self?.endBackgroundTask(taskID.withLock { $0 })
      })
    taskID.withLock { $0 = id }
    return id
  }
}
