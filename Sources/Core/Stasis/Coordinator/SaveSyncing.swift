import Dispatch
import Synchronization

/// What catching up with the other side of a sync (a cloud save server) came to.
public enum CatchUpOutcome: Sendable, Equatable {
  /// Nothing to restore: the slot was in step, or the other side could not be reached.
  case unchanged
  /// A newer generation was written into the slot — a fast-forward, or the result of a
  /// resolved conflict — and the game must restore it before its next step.
  case restore(generation: Int, reason: String)
}

/// A catch-up in progress: the synchronizer works on its own threads and finishes it; the
/// coordinator polls it on the main thread and holds the game until it is finished, or
/// until its patience runs out.
///
/// The hand-over is exact: a synchronizer writes into the slot only after ``mayWrite()``
/// said yes, and once the coordinator has stopped waiting (``stopWaiting()`` returned true)
/// `mayWrite()` says no — so a late answer never writes under a game that has played on.
public final class CatchUp: Sendable {
  private struct State {
    var outcome: CatchUpOutcome?
    var writing = false
    var abandoned = false
    /// The generation written, as the synchronizer verified it, when it handed it over.
    var written: VerifiedSave?
    /// The other side's newest, when this build cannot read it.
    var unreadable: SaveFileError?
    /// Called once when the outcome is given: the coordinator's delivery to the game's thread.
    var onFinish: (@Sendable () -> Void)?
  }
  private let state = Mutex(State())
  private let finished = DispatchSemaphore(value: 0)

  /// Creates a catch-up in progress.
  public init() {}

  /// The synchronizer, before it writes a generation into the slot: true when the game is
  /// still held (the write may go ahead, and its outcome must follow at once), false when it
  /// has played on or an outcome was already given (write nothing).
  public func mayWrite() -> Bool {
    state.withLock { state in
      guard !state.abandoned, state.outcome == nil else { return false }  // one write per catch-up
      state.writing = true
      return true
    }
  }

  /// The synchronizer: the catch-up is over. The first outcome counts.
  public func finish(_ outcome: CatchUpOutcome) {
    finish(outcome, written: nil)
  }

  /// The synchronizer: the catch-up is over, and `written` is what it wrote as the generation
  /// to restore (verified, and decoded and validated by the game's codec): the coordinator
  /// restores it from memory instead of reading back and decoding the file just written. The
  /// first outcome counts.
  package func finish(_ outcome: CatchUpOutcome, written: VerifiedSave?) {
    give(outcome, written: written, unreadable: nil)
  }

  private func give(_ outcome: CatchUpOutcome, written: VerifiedSave?, unreadable: SaveFileError?) {
    let first = state.withLock { state -> (@Sendable () -> Void)?? in
      guard state.outcome == nil else { return nil }
      state.outcome = outcome
      state.written = written
      state.unreadable = unreadable
      defer { state.onFinish = nil }
      return .some(state.onFinish)
    }
    guard let first else { return }
    finished.signal()
    first?()
  }

  /// The synchronizer: the other side's newest save is one this build cannot read — a newer
  /// schema or format, from a newer build of the game on another device. Nothing was written.
  /// The coordinator holds the game as it holds one whose newest local generation is such a
  /// save (``SaveCoordinator/restoreFailure``, its reason ``RestoreFailure/Reason/newerInCloud``): the player
  /// plays on from the state the game holds, or waits for the update. The first outcome counts.
  public func finish(unreadable error: SaveFileError) {
    give(.unchanged, written: nil, unreadable: error)
  }

  /// Why the catch-up ended without anything to restore, when the other side's newest is a
  /// save this build cannot read (``finish(unreadable:)``).
  public var unreadable: SaveFileError? { state.withLock { $0.unreadable } }

  /// Calls `body` once the outcome is given (at once if it was), on the thread that gave it: the
  /// coordinator hands the outcome to the game's thread with it, so a loop that holds the thread
  /// and waits for deliveries wakes when the catch-up ends.
  package func whenFinished(_ body: @escaping @Sendable () -> Void) {
    let now = state.withLock { state -> Bool in
      guard state.outcome == nil else { return true }
      state.onFinish = body
      return false
    }
    if now { body() }
  }

  /// The generation to restore, as the synchronizer verified it, when it handed it over.
  package var written: VerifiedSave? { state.withLock { $0.written } }

  /// Blocks the calling thread until the catch-up finishes or `timeout` passes; true when it
  /// finished. For headless runners and tools, not a game loop that draws.
  public func wait(timeout: Duration) -> Bool {
    guard outcome == nil else { return true }
    guard finished.wait(timeout: timeout.deadlineFromNow) == .success else { return outcome != nil }
    finished.signal()  // let other waiters through too
    return true
  }

  /// The outcome, once finished.
  public var outcome: CatchUpOutcome? { state.withLock { $0.outcome } }

  /// The coordinator, out of patience: true when the game may play on (nothing will be
  /// written), false when a write has begun or an outcome was given, and it must be taken.
  public func stopWaiting() -> Bool {
    state.withLock { state in
      // An outcome already given (a write's, or the other side's unreadable newest) is the
      // catch-up's: the coordinator takes it, it does not play on past it.
      guard !state.writing, state.outcome == nil else { return false }
      state.abandoned = true
      return true
    }
  }
}

/// Keeps a slot in step with another place — a cloud save server (`StasisCloud`), or a
/// game's own service — through the ``SaveCoordinator``: told of every save as it starts,
/// asked to catch up on launch and on every return to the foreground.
///
/// Everything here is called on the main thread and must return at once: the work itself
/// runs on the synchronizer's own threads.
@MainActor
public protocol SaveSyncing: AnyObject {
  /// A save of the coordinator's slot has started; `handle` completes when it is durable.
  /// For ``SaveReason/background`` and ``SaveReason/terminate`` the application's budget
  /// is running: an upload should be a background task of its own, begun now, that starts
  /// only once the save is durable and is cancelled when the budget expires.
  func saveStarted(_ handle: SaveHandle, reason: SaveReason, application: Application)

  /// The game is about to play from the slot (launch, return to the foreground): catch up
  /// with the other side. `stateGeneration` is the generation the game's state is right
  /// now (0 when the slot has none and the game starts afresh); a synchronizer writes a
  /// newer generation for the game to restore only on top of exactly that one.
  func catchUp(stateGeneration: Int, application: Application) -> CatchUp

  /// The game cannot be caught up now (a new game, or a state newer than every generation):
  /// only let uploads that were waiting go.
  func resumeUploads(application: Application)

  /// The game's state no longer continues what the slot synced: a new game or a start-over.
  /// Its saves begin a history of their own, which the other side must never merge as if it
  /// had come from the old one. For a new game it is told after
  /// ``resumeUploads(application:)``, so that what waited from the old game goes up first, as
  /// part of the old history.
  func beganNewHistory(application: Application)

  /// The game restored `generation`, older than the slot's newest (the player plays on from
  /// there, or the newest could not be read): what it saves next is a branch from that
  /// generation. A synchronizer that knows which generation it last synced decides whether the
  /// branch still continues it; by default it is a new history.
  func restoredOlderGeneration(_ generation: Int, application: Application)
}

extension SaveSyncing {
  /// Nothing waits by default.
  public func resumeUploads(application: Application) {}

  /// Nothing to tell by default.
  public func beganNewHistory(application: Application) {}

  /// A new history by default.
  public func restoredOlderGeneration(_ generation: Int, application: Application) {
    beganNewHistory(application: application)
  }
}
