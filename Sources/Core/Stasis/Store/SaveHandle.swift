import Dispatch
import Synchronization

/// What a durable save produced.
public struct SaveReceipt: Sendable, Equatable {
  /// The slot written.
  public var slot: SaveSlot
  /// The new generation's number (numbers only grow; the highest valid one is the newest).
  public var generation: Int
  /// The file written.
  public var path: String
  /// Its size in bytes.
  public var bytes: Int
  /// Time spent encoding and checksumming.
  public var encodeDuration: Duration
  /// Time spent writing, flushing, renaming and flushing the folder.
  public var writeDuration: Duration
  /// Whether this save wrote the generation, found it already there, or was superseded.
  public var outcome: SaveOutcome = .written
}

/// How a save's state reached the disk.
public enum SaveOutcome: Sendable, Equatable {
  /// This save wrote ``SaveReceipt/generation``.
  case written
  /// The state was the same as the slot's newest generation's, so nothing was written:
  /// ``SaveReceipt/generation`` is that generation.
  case unchanged
  /// A newer snapshot of the same slot was taken while this one waited to be written, so this
  /// one was dropped: the receipt is the newer save's (`by` is its ``SaveHandle/sequence``),
  /// whose state is newer than this one's.
  case superseded(by: UInt64)
}

/// A save in progress: await it, be called back when it ends, or cancel it. Any thread.
public final class SaveHandle: Sendable {
  /// The slot being saved.
  public let slot: SaveSlot
  /// The save's place in the store's order, taken when its snapshot was handed over: a slot's
  /// generations are written in this order, so a higher sequence never gets an older generation.
  public let sequence: UInt64
  private let cancelFlag = Atomic<Bool>(false)
  private let state = Mutex<State>(State())
  /// The file the durable write put on disk, kept only when asked before the write ended.
  private let kept = Mutex<(wanted: Bool, file: WrittenFile?)>((false, nil))
  /// Signalled by ``settle(_:)`` (or a ``finish(_:)`` that settles): the result is set.
  private let settledSignal = DispatchSemaphore(value: 0)
  /// Signalled by ``finish(_:)``: the write is over, pruning included.
  private let finishedSignal = DispatchSemaphore(value: 0)

  private struct State {
    var result: Result<SaveReceipt, SaveFileError>?
    /// True once ``finish(_:)`` has taken the callbacks to run.
    var hasEnded = false
    var callbacks: [Callback] = []
  }

  private typealias Callback = @Sendable (Result<SaveReceipt, SaveFileError>) -> Void

  init(slot: SaveSlot, sequence: UInt64 = 0) {
    self.slot = slot
    self.sequence = sequence
  }

  /// Asks the save to stop. A save not yet renamed into place stops at its next step and
  /// leaves the previous generation the newest; one already in place stays.
  public func cancel() { cancelFlag.store(true, ordering: .relaxed) }

  /// True once ``cancel()`` was called.
  public var isCancelled: Bool { cancelFlag.load(ordering: .relaxed) }

  /// The result, once the save has ended: set the moment the new generation is durable.
  public var result: Result<SaveReceipt, SaveFileError>? { state.withLock { $0.result } }

  /// Calls `body` once the save ends (at once if it has), on the worker's thread: after the
  /// writer has pruned the slot's oldest generations and let the slot's lock go, so `body` may
  /// use the slot.
  public func onCompletion(_ body: @escaping @Sendable (Result<SaveReceipt, SaveFileError>) -> Void) {
    let ready = state.withLock { state -> Result<SaveReceipt, SaveFileError>? in
      if state.result == nil { state.callbacks.append(body) }
      return state.result
    }
    if let ready { body(ready) }
  }

  /// Blocks the calling thread until the save ends and returns its receipt, or throws its
  /// failure: a failed save cannot be dropped without a word. For tools and tests, not the game
  /// loop (which hears of its saves at `update()`: ``SaveCoordinator/onEvent``).
  ///
  /// ```swift
  /// let receipt = try store.save(state, codec: codec, slot: "autosave").wait()
  /// ```
  @discardableResult
  public func wait() throws(SaveFileError) -> SaveReceipt {
    try waitForResult().get()
  }

  /// Blocks the calling thread until the save ends, and returns its result (which must be used).
  public func waitForResult() -> Result<SaveReceipt, SaveFileError> {
    if let result { return result }
    settledSignal.wait()
    settledSignal.signal()  // let other waiters through too
    return result!
  }

  /// The result, blocking: the form before 0.11, whose failure a caller could drop unseen.
  @_disfavoredOverload
  @available(
    *, deprecated, renamed: "waitForResult()", message: "use `try wait()`, or `waitForResult()` for the Result"
  )
  public func wait() -> Result<SaveReceipt, SaveFileError> {
    waitForResult()
  }

  /// The result, awaited without blocking a thread.
  public var value: Result<SaveReceipt, SaveFileError> {
    get async {
      await withCheckedContinuation { continuation in
        onCompletion { continuation.resume(returning: $0) }
      }
    }
  }

  /// Asks the store to keep the file this save writes (its bytes and document) until
  /// ``takeWrittenFile()``: the cloud upload of the save then needs not list the slot and read
  /// and decode the file again. Asked after the write ended, nothing is kept.
  package func keepWrittenFile() { kept.withLock { $0.wanted = true } }

  /// Whether ``keepWrittenFile()`` was asked: the writer then encodes the file in one piece.
  var keepsWrittenFile: Bool { kept.withLock { $0.wanted } }

  /// The file this save wrote, once, if ``keepWrittenFile()`` was asked in time and the save
  /// wrote one (not for an unchanged or superseded save).
  package func takeWrittenFile() -> WrittenFile? {
    kept.withLock { kept in
      defer { kept.file = nil }
      return kept.file
    }
  }

  /// Called by the writer with the file it wrote, before ``finish(_:)``.
  func offerWrittenFile(_ file: () -> WrittenFile) {
    kept.withLock { if $0.wanted { $0.file = file() } }
  }

  /// Sets the result and wakes the threads in ``waitForResult()``, without running the callbacks: the
  /// writer settles a save the moment it is durable, while it still holds the slot's lock to
  /// prune, and runs the callbacks with ``finish(_:)`` once it has let the lock go (a callback may
  /// take the slot's lock itself). The first result set is the save's.
  func settle(_ result: Result<SaveReceipt, SaveFileError>) {
    let isFirst = state.withLock { state -> Bool in
      guard state.result == nil else { return false }
      state.result = result
      return true
    }
    if isFirst { settledSignal.signal() }
  }

  /// Settles the save with `result` (unless ``settle(_:)`` did already) and runs the callbacks
  /// once, with the save's result.
  func finish(_ result: Result<SaveReceipt, SaveFileError>) {
    let taken = state.withLock { state -> (settled: Result<SaveReceipt, SaveFileError>?, callbacks: [Callback])? in
      guard !state.hasEnded else { return nil }
      state.hasEnded = true
      let settled = state.result
      if settled == nil { state.result = result }
      defer { state.callbacks.removeAll() }
      return (settled, state.callbacks)
    }
    guard let taken else { return }
    if taken.settled == nil { settledSignal.signal() }
    for callback in taken.callbacks { callback(taken.settled ?? result) }
    finishedSignal.signal()
  }

  /// Blocks until the save has ended: settled, the slot's oldest generations pruned, and the
  /// callbacks run. For a tool that exits right after its save (``waitForResult()`` returns before the
  /// pruning, which an exit would cut short, leaving an old generation for the next save).
  package func waitUntilEnded() {
    finishedSignal.wait()
    finishedSignal.signal()  // let other waiters through too
  }
}

/// A generation as its save wrote it: what an upload sends, without reading it back.
package struct WrittenFile: Sendable {
  /// The generation written.
  package var generation: Int
  /// The file's bytes, exactly as on disk.
  package var bytes: [UInt8]
  /// The document they encode.
  package var document: SaveDocument
}
