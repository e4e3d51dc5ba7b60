/// Where the application is in its life, as UIKit's `UIApplication.State` plus the two
/// states a process sees from outside (`notRunning`, `suspended`).
public enum ApplicationState: String, Sendable, CaseIterable {
  /// Not launched yet, or terminated.
  case notRunning
  /// In the foreground but not receiving events (launching, an overlay, focus lost).
  case inactive
  /// In the foreground and receiving events: the game runs.
  case active
  /// Off screen, running background tasks against the budget.
  case background
  /// Off screen with no time to run: every background task ended or the budget ran out.
  case suspended

  /// True for `background` and `suspended`: the states in which environment changes are held.
  public var isInBackground: Bool { self == .background || self == .suspended }
}

/// One moment of the lifecycle: a delegate callback and the notification posted after it.
public enum LifecycleEvent: String, Sendable, CaseIterable {
  /// `applicationDidFinishLaunching(_:options:)`.
  case didFinishLaunching
  /// `applicationDidBecomeActive(_:)`.
  case didBecomeActive
  /// `applicationWillResignActive(_:)`.
  case willResignActive
  /// `applicationDidEnterBackground(_:)`.
  case didEnterBackground
  /// `applicationWillEnterForeground(_:)`.
  case willEnterForeground
  /// `applicationWillTerminate(_:)`.
  case willTerminate
  /// `applicationDidReceiveMemoryWarning(_:)`.
  case didReceiveMemoryWarning
}

/// What the application was launched with: the cold-start path after a kill while suspended.
public struct LaunchOptions: Sendable, Equatable {
  /// The save slot to restore before the first step, when the process is relaunched
  /// after it was killed while suspended.
  public var restoreSlot: SaveSlot?

  /// Creates launch options; the default is a fresh start.
  public init(restoreSlot: SaveSlot? = nil) {
    self.restoreSlot = restoreSlot
  }

  /// A fresh launch with nothing to restore.
  public static let none = LaunchOptions()
}
