import Dispatch
import Synchronization

/// Work that other threads hand the game's thread, run in the order it was handed over inside
/// ``Application/update()``: as Steamworks runs every callback in `SteamAPI_RunCallbacks()`.
/// A game loop that holds its thread, never pumps the main queue and never awaits still hears
/// everything on its next `update()`.
///
/// The same signal wakes the application's explicit waits (``Application/waitForBackgroundWork()``)
/// when a background task ends or a delivery arrives, so nothing polls.
final class DeliveryQueue: Sendable {
  typealias Delivery = @MainActor @Sendable () -> Void

  private let pending = Mutex<[Delivery]>([])
  /// Signalled on every delivery and every task's end.
  private let wakeup = DispatchSemaphore(value: 0)

  /// Hands `work` to the game's thread; any thread.
  func enqueue(_ work: @escaping Delivery) {
    pending.withLock { $0.append(work) }
    wake()
  }

  /// Wakes an explicit wait (a task ended).
  func wake() { wakeup.signal() }

  /// Takes what was handed over so far, in order.
  func take() -> [Delivery] {
    pending.withLock { pending in
      defer { pending.removeAll() }
      return pending
    }
  }

  /// True while something waits to be delivered.
  var isEmpty: Bool { pending.withLock { $0.isEmpty } }

  /// Blocks the calling thread until a delivery arrives, a task ends or `timeout` passes; true
  /// when woken. `ready` is asked after the signals of what was already handled are dropped: when
  /// it says there is work now, this returns at once. Only the application's waits that say so
  /// in their names call it.
  func waitForWakeup(timeout: Duration, unless ready: () -> Bool) -> Bool {
    // The semaphore counts every signal, most of them for work an update() has since handled:
    // dropped here, so a wait never returns early for them. A signal that comes after the drop
    // is for work `ready` may not have seen, and ends the wait at once.
    while wakeup.wait(timeout: .now()) == .success {}
    if ready() { return true }
    return wakeup.wait(timeout: timeout.deadlineFromNow) == .success
  }
}
