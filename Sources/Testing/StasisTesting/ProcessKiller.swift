import Stasis

extension Application {
  /// Replaces what `WatchdogPolicy.killProcess` does when a background task ignores its
  /// expiration: a test observes the kill instead of losing its process.
  ///
  /// ```swift
  /// var killed = false
  /// app.replaceProcessKiller { killed = true }
  /// ```
  public func replaceProcessKiller(_ killer: @escaping @MainActor () -> Void) {
    processKiller = killer
  }
}
