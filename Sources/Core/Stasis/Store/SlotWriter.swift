import Dispatch
import Foundation
import Synchronization

/// One writer per slot: a store's writes to a slot run one at a time, in the order their
/// snapshots were handed over, so a generation's number always follows its snapshot's order.
///
/// At most one write is in flight and one snapshot waits per slot: a newer snapshot
/// supersedes the waiting one, whose handle then reports the newer save's receipt
/// (``SaveOutcome/superseded(by:)``). Writes that are not snapshots — a cloud download, a
/// tool's rewrite — are never dropped; they wait their turn in order.
///
/// The writer also remembers, per slot, the section table of the newest generation it wrote or
/// loaded, so a save of the same state writes nothing (``SaveOutcome/unchanged``).
final class SlotWriters: Sendable {
  /// A write waiting for its slot.
  struct Job: Sendable {
    /// The handle the job finishes.
    let handle: SaveHandle
    /// True for a game's snapshot, which a newer snapshot of the same slot may replace.
    let isSnapshot: Bool
    /// Encodes and writes; finishes `handle`.
    let run: @Sendable () -> Void
    /// The handles of the snapshots this one replaced, transitively: finished with this job's
    /// receipt once it has run. One flat list, not a chain of callbacks: a chain as long as the
    /// saves a slow write let pile up (10,000 in a test) overflowed a worker's stack.
    var dropped: [SaveHandle] = []
  }

  private struct Queue {
    var waiting: [Job] = []
  }

  /// What the slot's newest generation holds, as this process last wrote or read it: its
  /// header's section table, not its sections. A save whose table matches is compared with the
  /// file's bytes on disk before it counts as the same state, so the writer never holds a
  /// second copy of a large state to compare against (issue 28: a 16 MB city held one).
  struct NewestState: Sendable {
    var generation: Int
    var path: String
    var size: Int
    var game: GameIdentity
    /// The header's table: each section's name, encoding, length and checksum.
    var sections: [SectionEntry]
    /// Signed with the store's current key: a save of the same state in a store that signs is
    /// written again when not (re-signing a retired key's or an unsigned save), never otherwise.
    var signedWithCurrentKey: Bool
  }

  /// Slots with a write in flight, and what waits behind it. A slot leaves when idle.
  private let queues = Mutex<[String: Queue]>([:])
  private let newest = Mutex<[String: NewestState]>([:])
  private let gates = Mutex<[String: SlotGate]>([:])
  private let nextSequence = Atomic<UInt64>(1)
  /// False only where the simulation varies the rule (``StoreRules/writesInSnapshotOrder``).
  private let inSnapshotOrder: Bool

  init(inSnapshotOrder: Bool = true) {
    self.inSnapshotOrder = inSnapshotOrder
  }

  /// Snapshots go in the order they were handed over, and a waiting one is superseded; the
  /// newest waiting snapshot goes first, and none is superseded, only where the simulation
  /// varies the rule.
  private var newestFirst: Bool { !inSnapshotOrder }

  /// The next snapshot's number: taken on the thread that hands the snapshot over.
  func takeSequence() -> UInt64 { nextSequence.wrappingAdd(1, ordering: .relaxed).oldValue }

  /// Runs `job` after every write of `slot` handed over before it; a snapshot replaces the
  /// snapshot that was waiting, if any.
  func enqueue(_ job: Job, slot: String) {
    var job = job
    let startNow = queues.withLock { queues -> Bool in
      guard var queue = queues[slot] else {
        queues[slot] = Queue()
        return true
      }
      if job.isSnapshot, !newestFirst {
        // Only the superseded handles wait for the newer job: their jobs, and the states those
        // hold, go now. (Holding the jobs kept every superseded state alive until the write in
        // flight ended: a game that autosaves every tick held one state per tick.)
        // The list moves from job to job, never copied: a pile-up of n saves costs O(n).
        while let index = queue.waiting.firstIndex(where: \.isSnapshot) {
          var old = queue.waiting.remove(at: index)
          if job.dropped.isEmpty { swap(&job.dropped, &old.dropped) } else { job.dropped += old.dropped }
          job.dropped.append(old.handle)
        }
      }
      queue.waiting.append(job)
      queues[slot] = queue
      return false
    }
    if startNow {
      let first = job
      DispatchQueue.global(qos: .userInitiated).async { self.drain(slot: slot, first: first) }
    }
  }

  /// Runs the slot's jobs one after another on this worker until none waits.
  private func drain(slot: String, first: Job) {
    var job = first
    while true {
      job.run()
      if !job.dropped.isEmpty { finishDropped(by: job) }
      let next = queues.withLock { queues -> Job? in
        guard var queue = queues[slot], !queue.waiting.isEmpty else {
          queues[slot] = nil
          return nil
        }
        let next = newestFirst ? queue.waiting.removeLast() : queue.waiting.removeFirst()
        queues[slot] = queue
        return next
      }
      guard let next else { return }
      job = next
    }
  }

  /// Finishes the handles `job` replaced with its receipt, saying it was by `job`.
  private func finishDropped(by job: Job) {
    let sequence = job.handle.sequence
    let dropped = job.dropped
    job.handle.onCompletion { result in
      let receipt = result.map { receipt in
        var receipt = receipt
        receipt.outcome = .superseded(by: sequence)
        return receipt
      }
      for handle in dropped { handle.finish(receipt) }
    }
  }

  /// How many snapshots of `slot` are held right now (in flight or waiting), for tests and
  /// the benchmark: never more than two.
  func heldSnapshots(slot: String) -> Int {
    queues.withLock { queues in
      guard let queue = queues[slot] else { return 0 }
      return 1 + queue.waiting.count(where: \.isSnapshot)
    }
  }

  // MARK: The newest state

  /// What the slot's newest generation holds, when this process wrote or read it last.
  func newestState(slot: String) -> NewestState? { newest.withLock { $0[slot] } }

  /// Records what generation `state.generation` of the slot holds.
  func setNewest(_ state: NewestState?, slot: String) { newest.withLock { $0[slot] = state } }

  // MARK: The in-process lock

  /// The slot's lock inside this process: taken before the slot's file lock, so this
  /// process's own writers wait for each other without a timeout, and the file lock's
  /// timeout is only ever spent on another process.
  func gate(slot: String) -> SlotGate {
    gates.withLock { gates in
      if let gate = gates[slot] { return gate }
      let gate = SlotGate()
      gates[slot] = gate
      return gate
    }
  }
}

/// A slot's lock inside one process.
final class SlotGate: Sendable {
  private let lock = NSLock()

  /// Runs `body` holding the lock.
  func withLock<T>(_ body: () throws(SaveFileError) -> T) throws(SaveFileError) -> T {
    lock.lock()
    defer { lock.unlock() }
    return try body()
  }
}
