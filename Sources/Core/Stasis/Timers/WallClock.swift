import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A source of wall-clock time: the date the player's device believes it is.
///
/// Unlike a ``MonotonicClock`` it may jump back or forward (a player changes the date, a
/// device syncs its clock). Timers (``TimerCenter``) are due at wall-clock dates and survive a
/// kill; tests inject `ManualWallClock` (from `StasisTesting`) beside the monotonic clock.
///
/// It is the one wall-clock type: a ``SaveStore`` stamps each save's `createdAt` by it, the
/// timers are due by it, and a test passes the same clock to both.
public protocol WallClock: Sendable {
  /// The current date.
  func now() -> Date
  /// The current date as whole milliseconds since the Unix epoch, rounded down: how saves,
  /// settings and timers record a date. The default reads ``now()``; a clock that counts in
  /// milliseconds returns its count, exactly.
  func unixMilliseconds() -> Int64
}

extension WallClock {
  /// ``now()`` in whole milliseconds since the Unix epoch, rounded down.
  public func unixMilliseconds() -> Int64 { now().unixMilliseconds }
}

/// The real wall clock (`CLOCK_REALTIME`).
public struct SystemWallClock: WallClock {
  /// Creates the system wall clock.
  public init() {}

  /// The current date, from `clock_gettime(CLOCK_REALTIME)`.
  public func now() -> Date {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Date(timeIntervalSince1970: Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9)
  }
}

/// What a timer that fell due while the game was in the background shows the player: the
/// desktop's notification, as iOS shows a local notification for a suspended app.
public struct TimerNotification: Sendable, Equatable {
  /// The timer's identifier: a newer notification for the same timer replaces the older one.
  public var identifier: String
  /// The notification's title (the game's name, by default).
  public var title: String
  /// Its text.
  public var body: String
  /// The date the timer fell due.
  public var date: Date

  /// Creates a notification.
  public init(identifier: String, title: String, body: String, date: Date) {
    self.identifier = identifier
    self.title = title
    self.body = body
    self.date = date
  }
}

/// Shows ``TimerNotification``s to the player while the game is in the background.
///
/// Stasis itself links no notification library. `StasisNotify`'s `DesktopNotifier` posts
/// freedesktop notifications over D-Bus through libnotify; a test records them.
public protocol TimerNotifier: Sendable {
  /// Posts `notification`. Throws when no notification service answers; the timer is still
  /// delivered to the game on its return.
  func post(_ notification: TimerNotification) throws
}
