import Dispatch
import Foundation
import Stasis
import StasisTesting
import Synchronization
import Testing

/// A disk whose `fsync` takes a millisecond: a busy machine's disk, for the pile-up test.
/// The pause is the point of the fake, not synchronisation.
private struct SlowDisk: FileSystemWrapper {
  let wrapped: any FileSystem = PosixFileSystem()
  func fsync(_ descriptor: Int32, path: String) throws(FileSystemError) {
    usleep(1_000)
    try wrapped.fsync(descriptor, path: path)
  }
}

/// A state whose encoding takes longer the bigger `bodies` is.
private func state(frame: Int, bodies: Int) -> TestGameState {
  var state = TestGameState.sample(bodies: bodies, seed: UInt32(frame))
  state.level.progress = Double(frame)
  return state
}

@Suite("One writer per slot: snapshot order, one in flight and one waiting, nothing written twice")
struct SlotWriterTests {
  @Test("generations follow the order the snapshots were taken, whatever each costs to encode")
  func generationsInSnapshotOrder() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    // Earlier snapshots are bigger, so they take longer to encode: a writer that numbers
    // generations when encoding finishes puts older states above newer ones.
    let handles = (0..<40).map { index in
      store.save(state(frame: index, bodies: (40 - index) * 400), codec: testCodec, slot: "autosave")
    }
    var written: [(sequence: UInt64, generation: Int)] = []
    for handle in handles {
      let receipt = try handle.wait()
      if receipt.outcome == .written { written.append((handle.sequence, receipt.generation)) }
    }
    #expect(written.count >= 2)
    for (earlier, later) in zip(written, written.dropFirst()) {
      #expect(earlier.sequence < later.sequence)
      #expect(earlier.generation < later.generation, "snapshot \(later.sequence) got an older generation")
    }
    let newest = try store.load(codec: testCodec, slot: "autosave")
    #expect(newest.state.level.progress == 39, "the newest generation holds the last snapshot")
  }

  @Test("an autosave still writing when the background save starts: the background save is the newer generation")
  func autosaveWritingWhenBackgroundStarts() throws {
    let disk = FaultInjectingFileSystem()
    let store = SaveStore(directory: makeTemporaryDirectory(), fileSystem: disk)
    disk.closeGate()
    let autosave = store.save(state(frame: 300, bodies: 2000), codec: testCodec, slot: "autosave")
    disk.reachedGate.wait()  // the autosave is mid-write
    let background = store.save(state(frame: 450, bodies: 4), codec: testCodec, slot: "autosave")
    #expect(store.heldSnapshots(of: "autosave") == 2)
    #expect(background.result == nil, "the background save waits for the autosave in flight")
    disk.openGate()
    let first = try autosave.wait()
    let second = try background.wait()
    #expect((first.generation, second.generation) == (1, 2))
    #expect(try store.load(codec: testCodec, slot: "autosave").state.level.progress == 450)
  }

  @Test("a waiting save that a newer snapshot supersedes is dropped; its handle says by which save")
  func supersededWhileWaiting() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let first = store.save(
      state(frame: 1, bodies: 4), codec: testCodec, slot: "autosave",
      drawThumbnail: { _ in
        entered.signal()
        release.wait()
        return nil
      })
    entered.wait()  // in flight, held on its worker
    let second = store.save(state(frame: 2, bodies: 4), codec: testCodec, slot: "autosave")
    let third = store.save(state(frame: 3, bodies: 4), codec: testCodec, slot: "autosave")
    #expect(store.heldSnapshots(of: "autosave") == 2, "one in flight, one waiting")
    release.signal()
    #expect(try first.wait().generation == 1)
    let newest = try third.wait()
    #expect(newest.generation == 2 && newest.outcome == .written)
    let dropped = try second.wait()
    #expect(dropped.outcome == .superseded(by: third.sequence))
    #expect(dropped.generation == 2)
    #expect(try store.generations(of: "autosave") == [2, 1])
  }

  @Test("10,000 saves on a slow disk: none fails, at most two snapshots are held, the last state is the newest")
  func pileUpOnASlowDisk() throws {
    // A short lock timeout: a writer whose own saves queue on the file lock fails fast here.
    let store = SaveStore(
      directory: makeTemporaryDirectory(), lockTimeout: .milliseconds(200), fileSystem: SlowDisk())
    var handles: [SaveHandle] = []
    var mostHeld = 0
    for frame in 0..<10_000 {
      handles.append(store.save(state(frame: frame, bodies: 8), codec: testCodec, slot: "autosave"))
      mostHeld = max(mostHeld, store.heldSnapshots(of: "autosave"))
    }
    var written = 0
    for handle in handles {
      let receipt = try handle.wait()  // throws on any failure
      if receipt.outcome == .written { written += 1 }
    }
    #expect(mostHeld <= 2)
    #expect(written < 10_000, "waiting snapshots were superseded, not all written")
    // The figures for docs/RELIABILITY.md.
    print(
      "pile-up: 10000 saves, 0 failed, \(written) written, \(10_000 - written) superseded, at most \(mostHeld) held")
    #expect(try store.load(codec: testCodec, slot: "autosave").state.level.progress == 9_999)
  }

  @Test("a save of the state the newest generation already holds writes nothing and reports that generation")
  func unchangedStateWritesNothing() throws {
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder)
    let saved = state(frame: 900, bodies: 16)
    #expect(try store.save(saved, codec: testCodec, slot: "autosave").wait().generation == 1)
    let again = try store.save(saved, codec: testCodec, slot: "autosave").wait()
    #expect(again.outcome == .unchanged && again.generation == 1)
    #expect(try store.generations(of: "autosave") == [1])

    // A new process that restored generation 1 and saves it unchanged writes nothing either.
    let restarted = SaveStore(directory: folder)
    _ = try restarted.load(codec: testCodec, slot: "autosave")
    let afterRestore = try restarted.save(saved, codec: testCodec, slot: "autosave").wait()
    #expect(afterRestore.outcome == .unchanged && afterRestore.generation == 1)
    var changed = saved
    changed.score.points += 1
    #expect(try restarted.save(changed, codec: testCodec, slot: "autosave").wait().generation == 2)
  }

  @Test(
    "another process holding the slot's file lock is what a save waits for; this process's own saves never fail on it")
  func ownSavesNeverHitTheLockTimeout() throws {
    let store = SaveStore(directory: makeTemporaryDirectory(), lockTimeout: .milliseconds(1))
    // Records and saves from several threads at once: each waits its turn inside the process.
    let handles = (0..<50).map { store.save(state(frame: $0, bodies: 64), codec: testCodec, slot: "autosave") }
    DispatchQueue.concurrentPerform(iterations: 20) { index in
      #expect(throws: Never.self) { try store.writeSlotFile(Array("\(index)".utf8), named: "note", slot: "autosave") }
    }
    for handle in handles { _ = try handle.wait() }
  }
}

@MainActor
@Suite("The coordinator writes each state once")
struct CoordinatorWritesOnceTests {
  private func make(folder: String) -> (CountingGame, SaveCoordinator<CountingGame>, Application) {
    let game = CountingGame()
    let coordinator = SaveCoordinator(
      game: game, store: SaveStore(directory: folder), codec: testCodec, slot: "autosave")
    let app = Application(delegate: coordinator, configuration: .init(clock: ManualClock()))
    return (game, coordinator, app)
  }

  @Test(
    "with .skip, an autosave due while a save is being written is skipped: one snapshot is held, then the next due is taken"
  )
  func skipWhileWriting() throws {
    let disk = FaultInjectingFileSystem()
    let store = SaveStore(directory: makeTemporaryDirectory(), fileSystem: disk)
    let game = CountingGame()
    let coordinator = SaveCoordinator(game: game, store: store, codec: testCodec, slot: "autosave")
    coordinator.autosaveInterval = 1
    coordinator.autosaveOverlap = .skip
    disk.closeGate()
    game.step()
    coordinator.didStep(frame: 1)
    disk.reachedGate.wait()  // the first autosave is mid-write
    for frame in Int64(2)...10 {
      game.step()
      coordinator.didStep(frame: frame)
      #expect(store.heldSnapshots(of: "autosave") == 1, "frame \(frame): only the snapshot being written")
    }
    #expect(coordinator.skippedAutosaves == 9)
    disk.openGate()
    coordinator.waitForSaves()
    game.step()
    coordinator.didStep(frame: 11)  // the writer is free: this one is taken
    coordinator.waitForSaves()
    let frames = coordinator.events.compactMap { event -> Int64? in
      if case .saved(.autosave, _, let summary) = event { return summary.frame }
      return nil
    }
    #expect(frames == [1, 11])
    #expect(try store.load(codec: testCodec, slot: "autosave").state.level.progress == game.state.level.progress)

    // The default waits: the same run holds the one being written and one waiting.
    let waiting = FaultInjectingFileSystem()
    let other = SaveStore(directory: makeTemporaryDirectory(), fileSystem: waiting)
    let second = SaveCoordinator(game: CountingGame(), store: other, codec: testCodec, slot: "autosave")
    second.autosaveInterval = 1
    waiting.closeGate()
    second.didStep(frame: 1)
    waiting.reachedGate.wait()
    for frame in Int64(2)...10 { second.didStep(frame: frame) }
    #expect(other.heldSnapshots(of: "autosave") == 2 && second.skippedAutosaves == 0)
    waiting.openGate()
    second.waitForSaves()
  }

  @Test("a quit right after an autosave writes nothing new: the ring keeps distinct states")
  func quitAfterAutosave() throws {
    let folder = makeTemporaryDirectory()
    let (game, coordinator, app) = make(folder: folder)
    coordinator.autosaveInterval = 10
    app.launch()
    for _ in 0..<30 {
      game.step()
      coordinator.didStep(frame: Int64(game.state.level.progress))
    }
    coordinator.waitForSaves()  // the autosave at frame 30 is durable
    app.terminate()
    coordinator.waitForSaves()
    let saved = coordinator.events.compactMap { event -> (SaveReason, SaveReceipt)? in
      if case .saved(let reason, let receipt, _) = event { return (reason, receipt) }
      return nil
    }
    let quit = try #require(saved.last { $0.0 == .terminate })
    #expect(quit.1.outcome == .unchanged)
    let autosave = try #require(saved.last { $0.0 == .autosave })
    #expect(quit.1.generation == autosave.1.generation)
    #expect(try coordinator.store.generations(of: "autosave").first == autosave.1.generation)
  }

  @Test("a quit right after a restore writes nothing new")
  func quitAfterRestore() throws {
    let folder = makeTemporaryDirectory()
    let (game, coordinator, app) = make(folder: folder)
    app.launch()
    game.step()
    app.terminate()
    coordinator.waitForSaves()
    let (_, again, relaunched) = make(folder: folder)
    relaunched.launch(options: LaunchOptions(restoreSlot: "autosave"))
    relaunched.terminate()
    again.waitForSaves()
    guard case .saved(.terminate, let receipt, _)? = again.events.last else {
      Issue.record("no save event: \(again.events)")
      return
    }
    #expect(receipt.outcome == .unchanged && receipt.generation == 1)
    #expect(try again.store.generations(of: "autosave") == [1])
  }
}
