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
