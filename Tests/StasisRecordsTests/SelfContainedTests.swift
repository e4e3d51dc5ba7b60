// Only with the `Records` trait, as the store itself.
#if Records
  import Foundation
  import Stasis
  import StasisRecords
  import Testing

  @MainActor
  @Suite("After a close, on the way to the background and at a quit, records.sqlite alone holds every row")
  struct SelfContainedTests {
    private func writeScores(_ store: RecordStore) async throws {
      try await store.write { db in
        try Score(id: 1, player: "ada", level: "a", points: 300).insert(db)
        try Score(id: 2, player: "bo", level: "a", points: 200).insert(db)
      }
    }

    /// The size of the store's `-wal`: the rows are there, not yet in the file, before the test acts.
    private func walSize(_ store: RecordStore) throws -> Int {
      let attributes = try FileManager.default.attributesOfItem(atPath: store.path + "-wal")
      return (attributes[.size] as? NSNumber)?.intValue ?? 0
    }

    @Test("close() folds the WAL into the file: a copy of records.sqlite alone has the rows")
    func close() async throws {
      let saves = try temporarySaves()
      let store = try RecordStore(directory: saves, migrations: [scoresV1])
      try await writeScores(store)
      #expect(try walSize(store) > 0, "the rows are in the WAL before the close")
      try store.close()
      try store.close()  // a second close is a no-op
      #expect(try await scoresInACopyOfTheFileAlone(from: saves) == ["ada", "bo"])
      let left = databaseFiles(in: saves)
      #expect(left["-wal"] == .some(nil) && left["-shm"] == .some(nil), "nothing beside the file")
    }

    @Test("on the way to the background: a checkpoint, a background task; a copy of records.sqlite alone has the rows")
    func background() async throws {
      let (app, _) = makeApplication()
      var tasks: [String] = []
      app.addBackgroundTaskObserver { tasks.append($0.description) }
      app.launch()
      let saves = try temporarySaves()
      let store = try RecordStore(directory: saves, migrations: [scoresV1], application: app)
      try await writeScores(store)
      #expect(try walSize(store) > 0, "the rows are in the WAL before the app leaves")
      app.enterBackground()
      // Until the checkpoint's task ended: each wait returns when a task ends (or one ended
      // before it), or after the budget's 10 s; a few are enough, and a broken one fails below.
      for _ in 0..<10 where app.state == .background { app.waitForBackgroundWork() }
      #expect(app.state == .suspended)
      #expect(tasks.contains { $0.hasPrefix("begin") && $0.hasSuffix("records checkpoint") }, "\(tasks)")
      #expect(try walSize(store) == 0, "the WAL was truncated")
      // The store is still open, as a suspended game's is: the file alone has every row.
      #expect(try await scoresInACopyOfTheFileAlone(from: saves) == ["ada", "bo"])
    }

    @Test("a write that ends in the background checkpoints after itself: its rows are in the file too")
    func writeInTheBackground() async throws {
      let (app, _) = makeApplication()
      app.launch()
      let saves = try temporarySaves()
      let store = try RecordStore(directory: saves, migrations: [scoresV1], application: app)
      let save = app.beginBackgroundTask(named: "save")  // the game's own save keeps the app in the background
      app.enterBackground()
      try await writeScores(store)
      app.endBackgroundTask(save)
      app.update()
      #expect(app.state == .suspended)
      #expect(try await scoresInACopyOfTheFileAlone(from: saves) == ["ada", "bo"])
    }

    @Test("at a quit (willTerminate): a copy of records.sqlite alone has the rows")
    func quit() async throws {
      let (app, _) = makeApplication()
      app.launch()
      let saves = try temporarySaves()
      let store = try RecordStore(directory: saves, migrations: [scoresV1], application: app)
      try await writeScores(store)
      #expect(try walSize(store) > 0)
      app.terminate()
      for _ in 0..<10 where app.hasBackgroundEpisode { app.waitForBackgroundWork() }
      #expect(app.backgroundEpisodes.last?.reason == .termination)
      #expect(app.backgroundEpisodes.last?.outcome == .completed)
      #expect(try await scoresInACopyOfTheFileAlone(from: saves) == ["ada", "bo"])
    }

    @Test("backup(to:) makes one self-contained file while the store stays open; it never overwrites")
    func backup() async throws {
      let saves = try temporarySaves()
      let store = try RecordStore(directory: saves, migrations: [scoresV1])
      try await writeScores(store)
      let folder = try temporarySaves()
      let target = (folder as NSString).appendingPathComponent(RecordStore.fileName)
      try await store.backup(to: target)
      #expect(try await scoresInACopyOfTheFileAlone(from: folder) == ["ada", "bo"])
      await #expect(throws: RecordStoreError.self) { try await store.backup(to: target) }
      try await store.write { db in _ = try Score.deleteAll(db) }
      #expect(try await store.read { db in try Score.fetchCount(db) } == 0, "the store went on")
    }
  }
#endif
