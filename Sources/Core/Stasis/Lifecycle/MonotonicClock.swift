import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A source of monotonic time: never goes backwards, unaffected by wall-clock changes.
///
/// The lifecycle measures the background budget with it; tests inject `ManualClock` (from
/// `StasisTesting`) and drive time themselves instead of sleeping.
public protocol MonotonicClock: Sendable {
  /// Time since an arbitrary fixed origin.
  func now() -> Duration
}

/// The real monotonic clock (`CLOCK_MONOTONIC`).
public struct SystemClock: MonotonicClock {
  /// Creates the system clock.
  public init() {}

  /// Time since boot, from `clock_gettime(CLOCK_MONOTONIC)`.
  public func now() -> Duration {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return .seconds(Int64(spec.tv_sec)) + .nanoseconds(Int64(spec.tv_nsec))
  }
}

/// Durations as the numbers logs and summaries print.
extension Duration {
  /// The duration as floating-point seconds, for logs and summaries.
  public var inSeconds: Double {
    let parts = components
    return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
  }

  /// The duration as floating-point milliseconds, for logs and summaries.
  public var inMilliseconds: Double { inSeconds * 1000 }

  /// The moment this long from now, for a semaphore's wait: never negative, at most an hour.
  var deadlineFromNow: DispatchTime {
    .now() + .nanoseconds(Int(max(0, min(inSeconds, 3600)) * 1e9))
  }
}
