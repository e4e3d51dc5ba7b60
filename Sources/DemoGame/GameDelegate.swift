import Logging
import Stasis

/// The app delegate is the game, as in the iOS recipe: it pauses the engine when sent
/// away and resumes it when brought back.
@MainActor
public final class GameDelegate: ApplicationDelegate {
  /// The engine the delegate drives.
  public private(set) var engine = Engine()
  private let logger = Logger(label: "stasis.demo")

  /// Creates the game.
  public init() {}

  /// Steps the engine once when the application is active.
  public func step(_ application: Application) {
    guard application.state == .active else { return }
    engine.step()
  }

  public func applicationWillResignActive(_ application: Application) {
    engine.isPaused = true
  }

  public func applicationDidEnterBackground(_ application: Application) {
    engine.isPaused = true
    let task = application.beginBackgroundTask(named: "save") {
      self.logger.warning("save cut by the background budget")
    }
    // The save itself arrives with the store; until then the task ends at once.
    application.endBackgroundTask(task)
  }

  public func applicationDidBecomeActive(_ application: Application) {
    engine.isPaused = false
  }
}
