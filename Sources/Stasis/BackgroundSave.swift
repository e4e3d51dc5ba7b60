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
    let taskID = Mutex(BackgroundTaskID.invalid)
    let started = Mutex<SaveHandle?>(nil)
    let id = beginBackgroundTask(named: name) { [weak self] in
      started.withLock { $0 }?.cancel()
      self?.endBackgroundTask(taskID.withLock { $0 })
    }
    taskID.withLock { $0 = id }
    let handle = start()
    started.withLock { $0 = handle }
    handle.onCompletion { [weak self] _ in self?.endBackgroundTask(id) }
    return handle
  }
}
