/// The object the application tells about its life, named after UIKit's
/// `UIApplicationDelegate` so a game developer recognises it at once.
///
/// Every method has an empty default; implement the ones the game needs. The delegate is
/// called before any observer of the same moment.
///
/// ```swift
/// final class Game: ApplicationDelegate {
///   func applicationDidEnterBackground(_ application: Application) {
///     engine.isPaused = true
///     let snapshot = engine.snapshot()
///     application.saveInBackground(named: "save autosave") {
///       store.save(snapshot, codec: codec, slot: "autosave")
///     }
///   }
/// }
/// ```
@MainActor
public protocol ApplicationDelegate: AnyObject {
  /// The process has launched; `options` may ask to restore a slot (a cold start).
  func applicationDidFinishLaunching(_ application: Application, options: LaunchOptions)
  /// The game is in the foreground and receives events: run the engine.
  func applicationDidBecomeActive(_ application: Application)
  /// The game is about to stop receiving events (focus lost, or on its way to the background).
  func applicationWillResignActive(_ application: Application)
  /// The game is off screen: pause, snapshot and save inside the background budget.
  func applicationDidEnterBackground(_ application: Application)
  /// The game is coming back: load and restore before it becomes active.
  func applicationWillEnterForeground(_ application: Application)
  /// The process is about to end: save, with the same budget as the background.
  func applicationWillTerminate(_ application: Application)
  /// Memory is short: drop caches.
  func applicationDidReceiveMemoryWarning(_ application: Application)
  /// The environment changed (window size, display, settings); held while in the background.
  func application(_ application: Application, didChangeEnvironment change: EnvironmentChange)
}

extension ApplicationDelegate {
  public func applicationDidFinishLaunching(_ application: Application, options: LaunchOptions) {}
  public func applicationDidBecomeActive(_ application: Application) {}
  public func applicationWillResignActive(_ application: Application) {}
  public func applicationDidEnterBackground(_ application: Application) {}
  public func applicationWillEnterForeground(_ application: Application) {}
  public func applicationWillTerminate(_ application: Application) {}
  public func applicationDidReceiveMemoryWarning(_ application: Application) {}
  public func application(_ application: Application, didChangeEnvironment change: EnvironmentChange) {}
}
