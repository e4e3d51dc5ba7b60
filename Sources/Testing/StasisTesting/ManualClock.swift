import Foundation
import Stasis
import Synchronization

/// A clock that moves only when told to: tests advance it instead of sleeping.
///
/// ```swift
/// let clock = ManualClock()
/// clock.advance(by: .seconds(11))  // the 10-second budget has now run out
/// ```
public final class ManualClock: MonotonicClock {
  private let current: Mutex<Duration>

  /// Creates a clock that reads `start`.
  public init(start: Duration = .zero) {
    current = Mutex(start)
  }

  /// The time the clock was last set to.
  public func now() -> Duration {
    current.withLock { $0 }
  }

  /// Moves the clock forward; a negative amount is ignored, so time never goes back.
  public func advance(by amount: Duration) {
    guard amount > .zero else { return }
    current.withLock { $0 += amount }
  }
}

/// A wall clock that moves only when told to, and may be set back or jumped forward as a
/// player's device clock can: tests of timers and settings inject it beside a `ManualClock`.
///
/// ```swift
/// let wall = ManualWallClock(start: Date(timeIntervalSince1970: 1_800_000_000))
/// let store = SaveStore(directory: dir, wallClock: wall)
/// wall.advance(by: .seconds(60))     // a minute of real time
/// wall.set(to: wall.now() - 3600)    // the player moved the clock back an hour
/// ```
public final class ManualWallClock: WallClock {
  private let current: Mutex<Date>

  /// Creates a clock that reads `start` (default: 2027-01-15 08:00 UTC, a fixed date).
  public init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
    current = Mutex(start)
  }

  /// Creates a clock that reads `milliseconds` since the Unix epoch, exactly (a golden file's
  /// `createdAt`).
  public convenience init(unixMilliseconds milliseconds: Int64) {
    self.init(start: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    exact.withLock { $0 = milliseconds }
  }

  /// The milliseconds the clock was made or last set to, while nothing moved it: read back
  /// exactly (a `Double` of seconds does not hold every millisecond exactly).
  private let exact = Mutex<Int64?>(nil)

  /// The clock in whole milliseconds since the Unix epoch.
  public func unixMilliseconds() -> Int64 {
    exact.withLock { $0 } ?? now().unixMilliseconds
  }

  /// The date the clock was last set to.
  public func now() -> Date {
    current.withLock { $0 }
  }

  /// Moves the clock by `amount`, forward or (a negative amount) back.
  public func advance(by amount: Duration) {
    exact.withLock { $0 = nil }
    current.withLock { $0 = $0.addingTimeInterval(amount.inSeconds) }
  }

  /// Sets the clock to `date`: a jump either way.
  public func set(to date: Date) {
    exact.withLock { $0 = nil }
    current.withLock { $0 = date }
  }

  /// The clock as milliseconds since the Unix epoch, as a function.
  @available(*, deprecated, message: "pass the clock itself: SaveStore(directory:wallClock:) takes a WallClock")
  public var milliseconds: @Sendable () -> Int64 {
    { [self] in self.now().unixMilliseconds }
  }
}
