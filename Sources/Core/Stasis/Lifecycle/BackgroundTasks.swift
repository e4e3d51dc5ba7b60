import Foundation
import Synchronization

/// Identifies a background task, as UIKit's `UIBackgroundTaskIdentifier`.
public struct BackgroundTaskID: Hashable, Sendable, CustomStringConvertible {
  /// The task's number; 0 is never a live task.
  public let rawValue: UInt64

  /// Creates an ID from its number.
  public init(rawValue: UInt64) { self.rawValue = rawValue }

  /// Returned when no task could be begun (the application is not running).
  public static let invalid = BackgroundTaskID(rawValue: 0)

  /// `#N`, for logs.
  public var description: String { "#\(rawValue)" }
}

/// Something that happened to a background task, for traces and tools.
public enum BackgroundTaskEvent: Sendable, Equatable, CustomStringConvertible {
  /// The task was begun.
  case began(BackgroundTaskID, name: String)
  /// The task was ended by its owner.
  case ended(BackgroundTaskID, name: String)
  /// The budget ran out and the task's expiration handler was run.
  case expired(BackgroundTaskID, name: String)
  /// The task was still running after its expiration handler returned: a watchdog violation.
  case watchdogViolation(BackgroundTaskID, name: String)

  /// What happened, without a category prefix (a trace adds its own, as the demo's `task: `):
  /// `begin #3 save autosave`, `end …`, `expire …`, `watchdog …`.
  public var description: String {
    switch self {
    case .began(let id, let name): return "begin \(id) \(name)"
    case .ended(let id, let name): return "end \(id) \(name)"
    case .expired(let id, let name): return "expire \(id) \(name)"
    case .watchdogViolation(let id, let name): return "watchdog \(id) \(name)"
    }
  }
}

/// The live background tasks. Tasks may be ended from any thread, so the list lives behind
/// a lock; everything else the application does stays on the main actor.
final class BackgroundTaskRegistry: Sendable {
  struct Task {
    let id: BackgroundTaskID
    let name: String
    let expirationHandler: (@MainActor @Sendable () -> Void)?
  }

  private struct State {
    var nextID: UInt64 = 1
    var live: [Task] = []  // in the order begun
    var unreported: [BackgroundTaskEvent] = []  // ends not yet seen by the main actor
  }

  private let state = Mutex(State())
  /// Woken on every end, so an explicit wait returns without polling.
  private let wakeup: DeliveryQueue

  init(wakeup: DeliveryQueue) { self.wakeup = wakeup }

  func begin(name: String, expirationHandler: (@MainActor @Sendable () -> Void)?) -> BackgroundTaskID {
    state.withLock { state in
      let id = BackgroundTaskID(rawValue: state.nextID)
      state.nextID += 1
      state.live.append(Task(id: id, name: name, expirationHandler: expirationHandler))
      return id
    }
  }

  /// Ends a live task; an unknown, invalid or already-ended ID is a no-op. Any thread.
  @discardableResult
  func end(_ id: BackgroundTaskID) -> Bool {
    let ended = state.withLock { state -> Bool in
      guard let index = state.live.firstIndex(where: { $0.id == id }) else { return false }
      let task = state.live.remove(at: index)
      state.unreported.append(.ended(task.id, name: task.name))
      return true
    }
    if ended { wakeup.wake() }
    return ended
  }

  var live: [Task] { state.withLock { $0.live } }

  /// Removes a task without an end event: the watchdog's verdict on a task that ignored
  /// its expiration.
  func remove(_ id: BackgroundTaskID) {
    state.withLock { $0.live.removeAll { $0.id == id } }
  }

  /// True when a task ended since the last ``takeUnreported()``.
  var hasUnreported: Bool { state.withLock { !$0.unreported.isEmpty } }

  /// The end events that happened since the last call, in order.
  func takeUnreported() -> [BackgroundTaskEvent] {
    state.withLock { state in
      defer { state.unreported.removeAll() }
      return state.unreported
    }
  }
}

/// One stay in the background (or one termination), from its start to the moment the app
/// was suspended: how long it took and how much budget was left, or which tasks were cut.
public struct BackgroundEpisode: Sendable, Equatable, CustomStringConvertible {
  /// Why the budget was started.
  public enum Reason: String, Sendable {
    /// Sent to the background (`didEnterBackground`).
    case background
    /// Quitting (`willTerminate`).
    case termination
  }

  /// How the episode ended.
  public enum Outcome: Sendable, Equatable {
    /// Every task ended inside the budget.
    case completed
    /// The budget ran out; these tasks had their expiration handlers run.
    case expired(cutTasks: [String])
    /// The application came back to the foreground with these tasks still running.
    case returnedToForeground(runningTasks: [String])

    /// A one-word name for summaries: `completed`, `expired`, `returnedToForeground`.
    public var name: String {
      switch self {
      case .completed: return "completed"
      case .expired: return "expired"
      case .returnedToForeground: return "returnedToForeground"
      }
    }
  }

  /// Why the budget was started.
  public var reason: Reason
  /// From the start of the budget to the end of the episode.
  public var duration: Duration
  /// The budget that was given.
  public var budget: Duration
  /// What was left of the budget at the end (zero when it expired).
  public var budgetLeft: Duration
  /// How it ended.
  public var outcome: Outcome
  /// Tasks still running after their expiration handler: each is a watchdog violation.
  public var watchdogViolations: [String]

  /// The one log line of the episode.
  public var description: String {
    let took = String(format: "%.1f ms", duration.inMilliseconds)
    let left = String(format: "%.3f s", budgetLeft.inSeconds)
    let budgetText = String(format: "%.3f s", budget.inSeconds)
    switch outcome {
    case .completed:
      return "\(reason.rawValue) episode completed in \(took), \(left) of \(budgetText) budget left"
    case .expired(let cut):
      var line = "\(reason.rawValue) episode expired after \(took): budget of \(budgetText) ran out; "
      line += "cut tasks: \(cut.joined(separator: ", "))"
      if !watchdogViolations.isEmpty {
        line += "; watchdog violations: \(watchdogViolations.joined(separator: ", "))"
      }
      return line
    case .returnedToForeground(let running):
      return "\(reason.rawValue) episode ended by a return to the foreground after \(took), "
        + "\(left) left; still running: \(running.joined(separator: ", "))"
    }
  }
}
