import Foundation
import Stasis
import StasisTesting
import Testing

/// The test game's state as another build wrote it: `score.points` renamed to `score.total`
/// with no migration (the roguelike's forgotten `hp` → `health`).
private struct RenamedScore: Codable {
  var total: Int64 = 4242
  var combo: Double = 1
  var best: Int64 = 0
}

private struct OtherBuildState: Codable, Sendable {
  var score = RenamedScore()
  var level = TestLevel(index: 3, progress: 77, checkpoints: [])
  var camera = TestCamera()
  var physics = TestPhysics()
}

private let otherBuildCodec = SaveCodec<OtherBuildState>(game: testGame)

/// The test game's codec with a validation: a negative score is refused.
private let refusingNegativePoints = {
  var codec = testCodec
  codec.validator = { state throws(InvalidStateError) in
    guard state.score.points >= 0 else {
      throw InvalidStateError(field: "score.points", value: "\(state.score.points)", reason: "must not be negative")
    }
  }
  return codec
}()

@MainActor
@Suite("A save this build cannot read is kept, stops the restore, and is never pruned")
struct UnreadableGenerationTests {
  /// One run of the game: launch restoring the slot, answer a failed restore with
  /// `choice`, play a little, quit; returns the coordinator.
  private func run(
    folder: String, choice: RestoreChoice?, steps: Int = 5
  ) -> (CountingGame, SaveCoordinator<CountingGame>) {
    let game = CountingGame()
    let coordinator = SaveCoordinator(
      game: game, store: SaveStore(directory: folder), codec: testCodec, slot: "autosave")
    let app = Application(delegate: coordinator, configuration: .init(clock: ManualClock()))
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    if let choice, coordinator.restoreFailure != nil { try? coordinator.resolveRestoreFailure(choice) }
    for _ in 0..<steps where !game.isPaused {
      game.step()
      coordinator.didStep(frame: Int64(game.state.level.progress))
      coordinator.saveNow()
    }
    app.terminate()
    coordinator.waitForSaves()
    return (game, coordinator)
  }

  @Test("a renamed field stops the load with the typed error naming the generation, and the file is kept")
  func renamedFieldStopsTheLoad() throws {
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder)
    _ = try store.save(TestGameState.sample(), codec: testCodec, slot: "autosave").wait()
    _ = try store.save(OtherBuildState(), codec: otherBuildCodec, slot: "autosave").wait()

    let error = try #require(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: "autosave") }
    #expect(error.kind == .missingField)
    #expect(error.isUnreadableByThisBuild)
    #expect(error.message.hasPrefix("generation 2:"))
    #expect(error.suggestion?.contains("stasis recover autosave --generation 1") == true)
    // A field this build cannot decode is a migration the developer forgot, not an update the
    // player missed: the decoder's own advice stays, and says to add the migration.
    #expect(error.suggestion?.contains("register the migration that renamed it") == true, "\(error)")
    #expect(error.suggestion?.contains("the game's developer adds or fixes it") == true)
    #expect(error.suggestion?.contains("update the game") == false)
    // A load changes no file; the next write keeps the generation, durably, before anything else.
    let files = try FileManager.default.contentsOfDirectory(atPath: store.folder(of: "autosave")).sorted()
    #expect(store.keptGenerations(of: "autosave").isEmpty, "load is pure")
    #expect(try FileManager.default.contentsOfDirectory(atPath: store.folder(of: "autosave")).sorted() == files)
    let refused = #expect(throws: SaveFileError.self) {
      try store.save(TestGameState.sample(), codec: testCodec, slot: "autosave").wait()
    }
    #expect(refused?.kind == .newerSaveInSlot, "a same-schema save this build cannot decode is not written over")
    let kept = store.keptGenerations(of: "autosave")
    #expect(kept.map(\.generation) == [2])
    #expect(kept.first?.reason.contains("this build cannot read it") == true)
  }

  @Test("a renamed field, then three later runs that start over in the slot: the unreadable save is still there")
  func threeRunsNeverPruneIt() throws {
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder)
    _ = try store.save(OtherBuildState(), codec: otherBuildCodec, slot: "autosave").wait()

    // A run that ignores the failure plays nothing and saves nothing.
    let (ignored, held) = run(folder: folder, choice: nil)
    #expect(ignored.isPaused && ignored.state.level.progress == TestGameState.sample().level.progress)
    #expect(held.restoreFailure?.error.kind == .missingField)
    #expect(held.restoreFailure?.olderGeneration == nil)
    #expect(try store.generations(of: "autosave") == [1])

    for _ in 0..<3 { _ = run(folder: folder, choice: .startOver) }
    let generations = try store.generations(of: "autosave")
    #expect((generations.first ?? 0) > 4, "each run saved several generations")
    #expect(generations.count == 4, "the newest 3 that load, and the kept one")
    #expect(generations.contains(1), "the save this build cannot read was never pruned")
    #expect(store.keptGenerations(of: "autosave").map(\.generation) == [1])
    let bytes = try store.readBytes(at: store.path(of: "autosave", generation: 1))
    #expect(bytes.withUnsafeBytes { SaveFileFormat.verify($0).error } == nil, "still whole")

    // Only the explicit discard removes it.
    try store.discard(generation: 1, slot: "autosave")
    #expect(try !store.generations(of: "autosave").contains(1))
    #expect(store.keptGenerations(of: "autosave").isEmpty)
  }

  // Found by stasis-sim (seed 43): a save this build could not read was kept at a start-over,
  // then read by a build that can (the one with the migration), whose next write took it off
  // the kept list as a stale "cannot read it" note, and pruned the player's last game.
  @Test("a save kept at a start-over stays kept when a build that reads it saves to the slot")
  func startOverKeepOutlivesAReadBack() throws {
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder)
    _ = try store.save(OtherBuildState(), codec: otherBuildCodec, slot: "autosave").wait()
    _ = run(folder: folder, choice: .startOver)
    let kept = try #require(store.keptGenerations(of: "autosave").first { $0.generation == 1 })
    #expect(kept.reason.hasPrefix("this build cannot read it"), "\(kept.reason)")
    #expect(kept.reason.hasSuffix("; kept at a start-over"), "\(kept.reason)")

    // The other build reads generation 1, then saves three times: generation 1 is not among
    // the newest three, and only the kept list holds it.
    let other = SaveStore(directory: folder, generationsToKeep: 3)
    _ = try other.load(codec: otherBuildCodec, slot: "autosave", generation: 1)
    for _ in 0..<3 { _ = try other.save(OtherBuildState(), codec: otherBuildCodec, slot: "autosave").wait() }
    #expect(other.keptGenerations(of: "autosave").map(\.generation) == [1])
    #expect(try other.generations(of: "autosave").contains(1), "the player's last game before the start-over")
  }

  @Test("the game may play on from the older generation the failure names")
  func playOnFromTheOlderGeneration() throws {
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder)
    var older = TestGameState.sample()
    older.level.progress = 41
    _ = try store.save(older, codec: testCodec, slot: "autosave").wait()
    _ = try store.save(OtherBuildState(), codec: otherBuildCodec, slot: "autosave").wait()
    let (game, coordinator) = run(folder: folder, choice: .loadGeneration(1), steps: 0)
    #expect(coordinator.restoreFailure == nil)
    #expect(game.state.level.progress == 41)
    #expect(store.keptGenerations(of: "autosave").map(\.generation) == [2])
  }

  @Test("a failed validation falls back, says what it skipped, and keeps the file")
  func invalidStateFallsBackAndIsKept() throws {
    let folder = makeTemporaryDirectory()
    let codec = refusingNegativePoints
    let store = SaveStore(directory: folder, generationsToKeep: 2)
    _ = try store.save(TestGameState.sample(), codec: codec, slot: "autosave").wait()
    var hostile = TestGameState.sample()
    hostile.score.points = -5
    _ = try store.save(hostile, codec: testCodec, slot: "autosave").wait()
    let loaded = try store.load(codec: codec, slot: "autosave")
    #expect(loaded.generation == 1)
    #expect(loaded.skipped.map(\.error.kind) == [.invalidState])
    #expect(store.keptGenerations(of: "autosave").isEmpty, "load is pure: the next save keeps it")
    for points in 1...3 {
      var next = TestGameState.sample()
      next.score.points = Int64(points)
      _ = try store.save(next, codec: codec, slot: "autosave").wait()
    }
    #expect(try store.generations(of: "autosave").contains(2), "kept past generationsToKeep")
    #expect(store.keptGenerations(of: "autosave").map(\.generation) == [2])
    #expect(store.keptGenerations(of: "autosave").first?.reason.hasPrefix("this build refused its state") == true)
  }

  @Test("a failed validation a load finds while a save is being written still keeps that generation")
  func invalidStateFoundDuringAWriteIsKept() throws {
    let disk = FaultInjectingFileSystem()
    let codec = refusingNegativePoints
    let store = SaveStore(directory: makeTemporaryDirectory(), generationsToKeep: 1, fileSystem: disk)
    var hostile = TestGameState.sample()
    hostile.score.points = -5
    _ = try store.save(hostile, codec: testCodec, slot: "autosave").wait()
    disk.closeGate()
    // The writer has classified generation 1 (loadable, as far as the files tell) and waits
    // in its first write.
    let save = store.save(TestGameState.sample(), codec: codec, slot: "autosave")
    disk.reachedGate.wait()
    #expect(throws: SaveFileError.self) { try store.load(codec: codec, slot: "autosave") }
    disk.openGate()
    #expect(try save.wait().generation == 2)
    #expect(try store.generations(of: "autosave").contains(1), "generation 1 is kept past generationsToKeep")
    // The next save keeps it durably, in the slot's kept list.
    var next = TestGameState.sample()
    next.score.points += 1
    _ = try store.save(next, codec: codec, slot: "autosave").wait()
    #expect(try store.generations(of: "autosave").contains(1))
    #expect(store.keptGenerations(of: "autosave").map(\.generation) == [1])
  }
}
