// Only with the `Records` trait, as the store itself.
#if Records
  import Foundation
  import Stasis
  import StasisRecords
  import Testing

  @MainActor
  @Suite("The store in the background: coalesced deliveries, writes inside the budget")
  struct BackgroundTests {
    @Test("changes made in the background are held, then delivered as one change set on willEnterForeground")
    func coalescedOnReturn() async throws {
      let (app, _) = makeApplication()
      var events: [String] = []
      app.addBackgroundTaskObserver { events.append($0.description) }
      app.launch()
      let store = try RecordStore(directory: try temporarySaves(), migrations: [scoresV1], application: app)
      try await store.write { db in
        try Score(id: 1, player: "ada", level: "a", points: 300).insert(db)
        try Score(id: 2, player: "bo", level: "a", points: 200).insert(db)
      }
      let controller = FetchedResultsController(
        store: store, request: RecordFetchRequest(Score.self, sortedBy: [Column("points").desc]))
      let deliveries = Deliveries(controller)
      var seenAtDelivery: [ApplicationState] = []
      controller.onChange = { changes in
        deliveries.changes.append(changes.description)
        seenAtDelivery.append(app.state)
      }
      try controller.start()

      let save = app.beginBackgroundTask(named: "save")  // the game's own save keeps the app in the background
      app.enterBackground()
      #expect(app.state == .background)
      try await store.write(observedBy: controller) { db in
        try Score(id: 3, player: "cy", level: "a", points: 250).insert(db)
      }
      #expect(controller.hasHeldChanges)
      try await store.write(observedBy: controller) { db in
        try db.execute(sql: "UPDATE score SET points = 100 WHERE id = 1")
      }
      try await store.write(observedBy: controller) { db in
        _ = try Score.deleteOne(db, key: 2)
      }
      app.endBackgroundTask(save)
      app.update()
      #expect(app.state == .suspended, "every write's background task ended")
      #expect(deliveries.changes.isEmpty, "nothing delivered in the background")
      #expect(controller.records.map(\.player) == ["ada", "bo"], "the results are still those last delivered")

      app.enterForeground()
      #expect(deliveries.changes == ["remove [0, 1]; insert [0, 0]; update [0, 0] now [0, 1]"])
      #expect(seenAtDelivery == [.inactive], "delivered during willEnterForeground, before didBecomeActive")
      #expect(controller.records.map(\.player) == ["cy", "ada"])
      #expect(!controller.hasHeldChanges)
      let writes = events.filter { $0.hasSuffix("records write") }
      #expect(writes.filter { $0.hasPrefix("begin") }.count == 4, "each write is a background task: \(writes)")
      #expect(writes.filter { $0.hasPrefix("end") }.count == 4)

      // Back in the foreground, a change is delivered as it happens.
      try await store.write(observedBy: controller) { db in
        try db.execute(sql: "UPDATE score SET player = 'cyd' WHERE id = 3")
      }
      #expect(deliveries.changes.last == "update [0, 0]")
    }

    @Test("a write cut by the budget is rolled back whole: the database keeps its old rows")
    func expiredWriteIsNotTorn() async throws {
      let (app, clock) = makeApplication(budget: .seconds(10))
      app.launch()
      let store = try RecordStore(directory: try temporarySaves(), migrations: [scoresV1], application: app)
      try await store.write { db in
        for id in 1...3 { try Score(id: Int64(id), player: "old\(id)", level: "a", points: id * 100).insert(db) }
      }
      let (started, signal) = AsyncStream.makeStream(of: Void.self)
      let write = Task { @MainActor in
        try await store.write { db in
          try db.execute(sql: "DELETE FROM score")
          try Score(id: 9, player: "new", level: "a", points: 1).insert(db)
          signal.yield()
          // Still in flight when the budget runs out: every statement from the cancellation on
          // throws. (Bounded, so a broken cancellation fails the test instead of hanging it.)
          let deadline = ContinuousClock.now + .seconds(60)
          while ContinuousClock.now < deadline { try db.execute(sql: "UPDATE score SET points = points + 1") }
        }
      }
      for await _ in started { break }
      app.enterBackground()  // the write's background task keeps the app in the background
      #expect(app.state == .background)
      clock.advance(by: .seconds(11))
      app.update()
      let result = await write.result
      #expect(throws: RecordStoreError.self) { try result.get() }
      if case .failure(let error as RecordStoreError) = result {
        #expect(error.kind == .expired)
      }
      #expect(app.backgroundEpisodes.last?.outcome == .expired(cutTasks: ["records write"]))
      #expect(app.backgroundEpisodes.last?.watchdogViolations == [])
      let rows = try await store.read { db in try Score.order(Column("id")).fetchAll(db) }
      #expect(rows.map(\.player) == ["old1", "old2", "old3"])
      #expect(rows.map(\.points) == [100, 200, 300])
    }

    @Test("durable: WAL, synchronous=FULL, on the writer and the readers")
    func durability() async throws {
      let store = try RecordStore(directory: try temporarySaves(), migrations: [scoresV1])
      let (mode, writer) = try await store.write { db in
        (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
      }
      let reader = try await store.read { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") }
      #expect(mode == "wal")
      #expect(writer == 2, "2 is FULL")
      #expect(reader == 2)
      #expect(store.path.hasSuffix("/records.sqlite"))
    }
  }
#endif
