import Foundation

/// Ends the process when one seed runs longer than its limit, naming the seed and how to replay
/// it. A seed that hangs (a wait that is never answered, a loop that never ends) would otherwise
/// stall the run until CI's own deadline, with no seed printed. It reads the wall clock, as a
/// harness may: the simulation's own clocks are simulated, so a hang may never advance them.
///
/// A plain thread, not a task: a hang that holds the cooperative pool's threads must not hold
/// the watchdog too.
final class Watchdog: @unchecked Sendable {
  // @unchecked: every field below is read and written under `condition`.
  private let condition = NSCondition()
  private let limit: TimeInterval
  private var seed: UInt64?
  private var replay = ""
  /// Nil until `watch` names a seed. (Never `Date.distantFuture`: Foundation on Linux traps
  /// when it turns a date that far into a `timespec` for the wait.)
  private var deadline: Date?

  /// Starts the watchdog's thread; it waits until `watch` names a seed.
  init(limit: TimeInterval) {
    self.limit = limit
    Thread.detachNewThread { [self] in guardSeeds() }
  }

  /// From now, `seed` has `limit` seconds; the next call starts the next seed's.
  func watch(seed: UInt64, replay: String) {
    condition.withLock {
      self.seed = seed
      self.replay = replay
      deadline = Date().addingTimeInterval(limit)
      condition.signal()
    }
  }

  private func guardSeeds() {
    condition.lock()
    while true {
      guard let deadline else {
        condition.wait()  // until the first seed is named
        continue
      }
      if Date() >= deadline, let seed {
        print(
          "FAILED seed \(seed): still running after \(String(format: "%g", limit)) s (a hang: a wait nothing answers, or a loop that never ends)"
        )
        print("replay: \(replay)")
        exit(1)  // flushes what was printed
      }
      _ = condition.wait(until: deadline)
    }
  }
}
