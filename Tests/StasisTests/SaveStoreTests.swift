import Foundation
import Stasis
import StasisTesting
import Synchronization
import Testing

@Suite("Save store")
struct SaveStoreTests {
  private func save(_ store: SaveStore, _ state: TestGameState, slot: SaveSlot = "autosave") throws -> SaveReceipt {
    try store.save(state, codec: testCodec, slot: slot, summary: state.summary).wait()
  }

  /// A state no earlier save of a test holds: a save of an unchanged state writes nothing.
  private func distinct(_ points: Int64) -> TestGameState {
    var state = TestGameState.sample()
    state.score.points = points
    return state
  }

  private func files(in folder: String) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: folder).sorted()) ?? []
  }

  @Test("a save asked to keep its file hands over exactly the bytes and sections on disk, once")
  func keptWrittenFile() throws {
    let disk = FaultInjectingFileSystem()
    let store = SaveStore(directory: makeTemporaryDirectory(), fileSystem: disk)
    disk.closeGate()  // the write waits, so the keep is asked before it ends
    let kept = store.save(distinct(41), codec: testCodec, slot: "autosave")
    kept.keepWrittenFile()
    disk.openGate()
    let receipt = try kept.wait()
    let file = try #require(kept.takeWrittenFile())
    #expect(file.generation == receipt.generation)
    #expect(file.bytes == (try store.readBytes(at: receipt.path)))
    #expect(file.document.sections == (try store.readDocument(at: receipt.path)).sections)
    #expect(kept.takeWrittenFile() == nil, "handed over once, then let go")
    // Not asked, or nothing written (the same state again): nothing is kept.
    let unasked = store.save(distinct(42), codec: testCodec, slot: "autosave")
    _ = try unasked.wait()
    #expect(unasked.takeWrittenFile() == nil)
    disk.closeGate()
    let unchanged = store.save(distinct(42), codec: testCodec, slot: "autosave")
    unchanged.keepWrittenFile()
    disk.openGate()
    #expect(try unchanged.wait().outcome == .unchanged)
    #expect(unchanged.takeWrittenFile() == nil)
  }

  @Test("case 7: a failed save cannot be dropped without a word: wait() throws it, waitForResult() returns it")
  func waitThrows() throws {
    let disk = FaultInjectingFileSystem()
    let store = SaveStore(directory: makeTemporaryDirectory(), fileSystem: disk)
    disk.fail(.write, times: 4, with: .noSpace)
    let handle = store.save(distinct(7), codec: testCodec, slot: "autosave")
    let error = try #require(throws: SaveFileError.self) { try handle.wait() }
    #expect(error.kind == .io)
    guard case .failure(let same) = handle.waitForResult() else {
      Issue.record("waitForResult() returned a success for a failed save")
      return
    }
    #expect(same == error)
    // A save that succeeds returns its receipt from the same call.
    let receipt = try SaveStore(directory: makeTemporaryDirectory()).save(
      distinct(8), codec: testCodec, slot: "autosave"
    )
    .wait()
    #expect(receipt.outcome == .written)
  }

  @Test("generations rotate: the last three are kept and the newest loads")
  func rotation() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    let pruned = DispatchSemaphore(value: 0)
    for score in 1...5 {
      var state = TestGameState.sample()
      state.score.points = Int64(score)
      let handle = store.save(state, codec: testCodec, slot: "autosave", summary: state.summary)
      handle.onCompletion { _ in pruned.signal() }  // after the save's pruning
      let receipt = try handle.wait()
      #expect(receipt.generation == score)
    }
    #expect(try store.generations(of: "autosave") == [5, 4, 3])
    for _ in 1...5 { pruned.wait() }
    let loaded = try store.load(codec: testCodec, slot: "autosave")
    #expect(loaded.state.score.points == 5)
    #expect(loaded.generation == 5)
    #expect(!loaded.fellBack)
    #expect(
      files(in: store.folder(of: "autosave")) == [
        ".lock", "0000000003.stasis", "0000000004.stasis", "0000000005.stasis",
      ])
  }

  @Test(
    "a save is answered once durable: wait() returns while its pruning is held, the store's listings leave the pruned generation out, onCompletion runs after"
  )
  func answeredBeforePruning() throws {
    let disk = UnlinkGate()
    let store = SaveStore(directory: makeTemporaryDirectory(), generationsToKeep: 2, fileSystem: disk)
    for points: Int64 in 1...2 { _ = try save(store, distinct(points)) }
    disk.close()
    let handle = store.save(distinct(3), codec: testCodec, slot: "autosave")
    let completed = DispatchSemaphore(value: 0)
    handle.onCompletion { _ in completed.signal() }
    disk.reached.wait()  // the pruning is under way, held
    let answered = handle.result
    #expect(try answered?.get().generation == 3, "answered while generation 1's unlink waits")
    #expect(try store.generations(of: "autosave") == [3, 2])
    #expect(try store.listGenerations(of: "autosave").map(\.generation) == [3, 2])
    #expect(files(in: store.folder(of: "autosave")).contains("0000000001.stasis"), "still on disk, being pruned")
    #expect(completed.wait(timeout: .now()) == .timedOut, "the callbacks wait for the pruning")
    disk.open()
    completed.wait()
    #expect(try handle.wait().generation == 3)
    #expect(files(in: store.folder(of: "autosave")) == [".lock", "0000000002.stasis", "0000000003.stasis"])
    #expect(try store.generations(of: "autosave") == [3, 2])
  }

  @Test("a corrupt newest generation falls back to the previous one and says so; load changes no file")
  func fallback() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    var state = TestGameState.sample()
    _ = try save(store, state)
    state.score.points = 2
    let newest = try save(store, state)
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: newest.path)))
    bytes[bytes.count / 2] ^= 0x01
    try Data(bytes).write(to: URL(fileURLWithPath: newest.path))
    let before = try files(in: store.folder(of: "autosave")).map {
      try Data(contentsOf: URL(fileURLWithPath: store.folder(of: "autosave") + "/" + $0))
    }

    let loaded = try store.load(codec: testCodec, slot: "autosave")
    #expect(loaded.generation == 1)
    #expect(loaded.state.score.points == 1234)
    #expect(loaded.skipped.map(\.generation) == [2])
    #expect(loaded.skipped.first?.error.kind == .checksumMismatch)
    #expect(loaded.skipped.first?.error.context.file == newest.path)

    let after = try files(in: store.folder(of: "autosave")).map {
      try Data(contentsOf: URL(fileURLWithPath: store.folder(of: "autosave") + "/" + $0))
    }
    #expect(before == after)
  }

  @Test("when no generation loads, the error names the newest file and what failed")
  func nothingLoads() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    let receipt = try save(store, .sample())
    try Data([0x89, 0x53]).write(to: URL(fileURLWithPath: receipt.path))
    do {
      _ = try store.load(codec: testCodec, slot: "autosave")
      Issue.record("loaded a two-byte file")
    } catch {
      #expect(error.kind == .truncated)
      #expect(error.context.file == receipt.path)
    }
    #expect(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: "never-saved") }
  }

  @Test("bad slot names are refused and nothing is written outside the save folder")
  func badSlotNames() throws {
    let root = makeTemporaryDirectory()
    let store = SaveStore(directory: root + "/Saves")
    let names = [
      "", "..", "../escape", "a/b", "/etc", ".hidden", "nul\u{0}byte", "tab\there",
      String(repeating: "x", count: 10_000), "émoji🎮",
    ]
    for name in names {
      // A slot is checked once, when it is made: no store call can be handed a bad one.
      let error = #expect(throws: SaveFileError.self, "\(name.debugDescription)") { try SaveSlot(name) }
      #expect(error?.kind == .invalidSlotName)
      #expect(error?.description.contains("\u{0}") == false)
    }
    #expect(files(in: root) == [])
    #expect(try save(store, .sample(), slot: "Slot_1.backup-2").generation == 1)
  }

  @Test("two concurrent saves to one slot never interleave")
  func noInterleaving() async throws {
    let fileSystem = FaultInjectingFileSystem()
    let store = SaveStore(directory: makeTemporaryDirectory(), generationsToKeep: 20, fileSystem: fileSystem)
    let states = (0..<8).map { index -> TestGameState in
      var state = TestGameState.sample(bodies: 2000, seed: UInt32(index))
      state.score.points = Int64(index)
      return state
    }
    let handles = states.map { store.save($0, codec: testCodec, slot: "shared", summary: $0.summary) }
    var written: [Int] = []
    for handle in handles {
      let receipt = try await handle.value.get()
      if receipt.outcome == .written { written.append(receipt.generation) }
    }
    // One at a time, in order; a snapshot overtaken while it waited is not written at all.
    #expect(written == Array(1...written.count))
    #expect(try store.generations(of: "shared").sorted() == written)
    #expect(try store.load(codec: testCodec, slot: "shared").state == states.last)
    for generation in written {
      let document = try store.readDocument(at: store.path(of: "shared", generation: generation))
      let state = try testCodec.state(from: document)
      #expect(states.contains(state), "generation \(generation) is one whole state")
    }
    // Each save's open ... rename happens with no other save's open in between.
    let log = fileSystem.log.withLock { $0 }.filter { $0.hasPrefix("open ") || $0.hasPrefix("rename ") }
    for index in stride(from: 0, to: log.count, by: 2) {
      #expect(log[index].hasPrefix("open "))
      #expect(log[index + 1].hasPrefix("rename "))
    }
  }

  @Test("a cancelled save leaves the previous generation intact and no temporary file")
  func cancelled() throws {
    let fileSystem = FaultInjectingFileSystem()
    let store = SaveStore(directory: makeTemporaryDirectory(), fileSystem: fileSystem)
    _ = try save(store, .sample())
    fileSystem.closeGate()
    var changed = TestGameState.sample()
    changed.score.points = 77
    let handle = store.save(changed, codec: testCodec, slot: "autosave", summary: changed.summary)
    fileSystem.reachedGate.wait()  // the save is writing its temporary file
    handle.cancel()
    fileSystem.openGate()
    let result = handle.waitForResult()
    guard case .failure(let error) = result else {
      Issue.record("a cancelled save succeeded")
      return
    }
    #expect(error.kind == .cancelled)
    #expect(try store.generations(of: "autosave") == [1])
    #expect(try store.load(codec: testCodec, slot: "autosave").state.score.points == 1234)
    #expect(files(in: store.folder(of: "autosave")) == [".lock", "0000000001.stasis"])
  }

  @MainActor
  @Test("an expired background budget cancels its save; the previous save stays the newest")
  func budgetCancelsSave() throws {
    let fileSystem = FaultInjectingFileSystem()
    let store = SaveStore(directory: makeTemporaryDirectory(), fileSystem: fileSystem)
    _ = try save(store, .sample())
    let clock = ManualClock()
    let app = Application(configuration: .init(backgroundBudget: .seconds(1), clock: clock))
    var handle: SaveHandle?
    app.addObserver(for: .didEnterBackground) { app in
      var state = TestGameState.sample()
      state.score.points = 5
      handle = app.saveInBackground(named: "save autosave") {
        store.save(state, codec: testCodec, slot: "autosave", summary: state.summary)
      }
    }
    fileSystem.closeGate()
    app.launch()
    app.enterBackground()
    fileSystem.reachedGate.wait()
    clock.advance(by: .seconds(1))
    app.update()
    #expect(app.state == .suspended)
    #expect(app.backgroundEpisodes.last?.outcome == .expired(cutTasks: ["save autosave"]))
    #expect(app.backgroundEpisodes.last?.watchdogViolations == [])
    fileSystem.openGate()
    guard case .failure(let error) = handle!.waitForResult() else {
      Issue.record("the save finished after its budget expired")
      return
    }
    #expect(error.kind == .cancelled)
    #expect(try store.load(codec: testCodec, slot: "autosave").generation == 1)
  }

  @MainActor
  @Test("a background save that finishes in time ends its task and the app is suspended")
  func backgroundSaveCompletes() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    let app = Application(configuration: .init(backgroundBudget: .seconds(30)))
    app.addObserver(for: .didEnterBackground) { app in
      app.saveInBackground(named: "save") {
        store.save(TestGameState.sample(), codec: testCodec, slot: "bg", summary: SaveSummary())
      }
    }
    app.launch()
    app.enterBackground()
    while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
    #expect(app.state == .suspended)
    #expect(app.backgroundEpisodes.last?.outcome == .completed)
    #expect(try store.generations(of: "bg") == [1])
  }

  @Test("a failed fsync is redone from the snapshot into a new file, never retried on the same one")
  func fsyncRedo() throws {
    let fileSystem = FaultInjectingFileSystem()
    let store = SaveStore(directory: makeTemporaryDirectory(), fileSystem: fileSystem)
    fileSystem.fail("fsync", times: 1, with: .ioError)
    let receipt = try save(store, .sample())
    #expect(receipt.generation == 1)
    let opens = fileSystem.log.withLock { $0 }.filter { $0.hasPrefix("open ") }
    #expect(opens.count == 2, "a second temporary file was written")
    #expect(files(in: store.folder(of: "autosave")) == [".lock", "0000000001.stasis"])

    fileSystem.fail("fsync", times: 2, with: .ioError)
    let result = store.save(distinct(2), codec: testCodec, slot: "autosave", summary: SaveSummary()).waitForResult()
    guard case .failure(let error) = result else {
      Issue.record("a save whose fsync always fails succeeded")
      return
    }
    #expect(error.kind == .io)
    #expect(error.cause?.errno == .ioError && error.cause?.operation == .fsync)
    #expect(try store.generations(of: "autosave") == [1])
    #expect(files(in: store.folder(of: "autosave")) == [".lock", "0000000001.stasis"])
  }

  @Test("disk full while writing: a typed error, the previous generation kept, no temporary file left")
  func diskFull() throws {
    let fileSystem = FaultInjectingFileSystem()
    let store = SaveStore(directory: makeTemporaryDirectory(), fileSystem: fileSystem)
    _ = try save(store, .sample())
    fileSystem.fail("write", times: 1, with: .noSpace)
    let result = store.save(distinct(2), codec: testCodec, slot: "autosave", summary: SaveSummary()).waitForResult()
    guard case .failure(let error) = result else {
      Issue.record("a save on a full disk succeeded")
      return
    }
    #expect(error.kind == .io)
    #expect(error.cause?.errno == .noSpace)
    #expect(files(in: store.folder(of: "autosave")) == [".lock", "0000000001.stasis"])
  }

  @Test("listing reads headers only: slots, generations, the game's summary, play time, progress, device, thumbnail")
  func listing() throws {
    let store = SaveStore(
      directory: makeTemporaryDirectory(), wallClock: ManualWallClock(unixMilliseconds: 1_700_000_000_000),
      device: "test-device")
    let state = TestGameState.sample()
    _ = try save(store, state, slot: "alpha")
    _ = try store.save(state, codec: testCodec, slot: "beta", summary: state.summary, thumbnail: [1, 2, 3]).wait()
    _ = try save(store, state, slot: "beta")
    let fileSystem = FaultInjectingFileSystem()
    let listing = try SaveStore(directory: store.directory, fileSystem: fileSystem).listSlots()
    #expect(listing.map(\.name) == ["alpha", "beta"])
    #expect(listing[1].generations.map(\.generation) == [2, 1])
    #expect(listing[1].generations.map(\.hasThumbnail) == [false, true])
    let header = try #require(listing[0].generations[0].header)
    #expect(
      header.summary
        == SaveSummary(
          frame: 720, playTime: 12.5, progress: 0.25, device: "test-device",
          details: .object(SaveObject([("level", .int64(2)), ("score", .int64(1234))])), slot: "alpha"))
    #expect(try header.summary.details(as: TestSummary.self) == TestSummary(level: 2, score: 1234))
    #expect(header.createdAt == 1_700_000_000_000)
    #expect(listing[0].generations[0].isValid)
  }

  @Test("a second writer waits for the slot's lock with a bound, then fails clearly")
  func lockTimeout() throws {
    let store = SaveStore(directory: makeTemporaryDirectory(), lockTimeout: .milliseconds(50))
    _ = try save(store, .sample())
    // The save is answered before its writer lets the lock go (it prunes first): wait for it.
    let held = try PosixFileSystem().lock(store.folder(of: "autosave") + "/.lock", timeout: .seconds(10))
    let result = store.save(distinct(2), codec: testCodec, slot: "autosave", summary: SaveSummary()).waitForResult()
    PosixFileSystem().unlock(held)
    guard case .failure(let error) = result else {
      Issue.record("saved while another writer held the lock")
      return
    }
    #expect(error.kind == .locked)
    #expect(try store.generations(of: "autosave") == [1])
    #expect(try save(store, distinct(3)).generation == 2, "the lock is free again")
  }

  @Test("a symbolic link planted where the temporary file goes is removed, never followed")
  func plantedTemporaryLink() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    _ = try save(store, .sample())
    let victim = makeTemporaryDirectory() + "/victim.txt"
    try Data("keep me".utf8).write(to: URL(fileURLWithPath: victim))
    // The next save's temporary name is predictable: plant a link there, and one for a retry.
    for attempt in 1...2 {
      try FileManager.default.createSymbolicLink(
        atPath: store.folder(of: "autosave") + "/.2.tmp-\(getpid())-\(attempt)", withDestinationPath: victim)
    }
    #expect(try save(store, distinct(2)).generation == 2)
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me")
    #expect(files(in: store.folder(of: "autosave")) == [".lock", "0000000001.stasis", "0000000002.stasis"])
  }

  @Test("a symbolic link planted where a generation goes is never read")
  func plantedLink() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    let receipt = try save(store, .sample())
    let outside = makeTemporaryDirectory() + "/target.stasis"
    try FileManager.default.copyItem(atPath: receipt.path, toPath: outside)
    try FileManager.default.createSymbolicLink(
      atPath: store.path(of: "autosave", generation: 2), withDestinationPath: outside)
    let loaded = try store.load(codec: testCodec, slot: "autosave")
    #expect(loaded.generation == 1)
    #expect(loaded.skipped.first?.error.message.contains("not a regular file") == true)
  }
}

/// The real file system, with unlinks held at a gate until the test opens it.
private final class UnlinkGate: FileSystemWrapper {
  let wrapped: any FileSystem = PosixFileSystem()
  private let gate = Mutex<DispatchSemaphore?>(nil)
  /// Signalled each time an unlink reaches the closed gate.
  let reached = DispatchSemaphore(value: 0)

  func close() { gate.withLock { $0 = DispatchSemaphore(value: 0) } }
  func open() { gate.withLock { $0 }?.signal() }

  func unlink(_ path: String) throws(FileSystemError) {
    if let waiting = gate.withLock({ $0 }) {
      reached.signal()
      waiting.wait()
      waiting.signal()
    }
    try wrapped.unlink(path)
  }
}
