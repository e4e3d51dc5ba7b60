// Only with the `Records` trait, as the store itself.
#if Records
  import Foundation
  import Stasis
  import StasisRecords
  import Testing

  @MainActor
  @Suite("A fetched-results controller delivers ordered changes")
  struct FetchedResultsControllerTests {
    /// Scores in sections by level, best first in each.
    private func makeController(_ store: RecordStore) -> FetchedResultsController<Score> {
      FetchedResultsController(
        store: store,
        request: RecordFetchRequest(
          Score.self, sortedBy: [Column("level"), Column("points").desc], sectionKey: "level"))
    }

    private func names(_ controller: FetchedResultsController<Score>) -> [String] {
      controller.sections.map { section in "\(section.name): " + section.records.map(\.player).joined(separator: " ") }
    }

    @Test(
      "a scripted series of writes: insert, update, a move by sort key, a move across sections, delete, sections come and go"
    )
    func scriptedWrites() async throws {
      let store = try RecordStore(directory: try temporarySaves(), migrations: [scoresV1])
      try await store.write { db in
        try Score(id: 1, player: "ada", level: "a", points: 300).insert(db)
        try Score(id: 2, player: "bo", level: "a", points: 200).insert(db)
        try Score(id: 3, player: "cy", level: "b", points: 100).insert(db)
      }
      let controller = makeController(store)
      let deliveries = Deliveries(controller)
      try controller.start()
      #expect(names(controller) == ["a: ada bo", "b: cy"])
      #expect(deliveries.changes.isEmpty, "the first fetch is no change")

      try await store.write(observedBy: controller) { db in
        try Score(id: 4, player: "di", level: "a", points: 250).insert(db)
      }
      #expect(names(controller) == ["a: ada di bo", "b: cy"])
      try await store.write(observedBy: controller) { db in
        try db.execute(sql: "UPDATE score SET player = 'bob' WHERE id = 2")
      }
      #expect(names(controller) == ["a: ada di bob", "b: cy"])
      try await store.write(observedBy: controller) { db in
        try db.execute(sql: "UPDATE score SET points = 400 WHERE id = 2")
      }
      #expect(names(controller) == ["a: bob ada di", "b: cy"])
      try await store.write(observedBy: controller) { db in
        try db.execute(sql: "UPDATE score SET level = 'b' WHERE id = 4")
      }
      #expect(names(controller) == ["a: bob ada", "b: di cy"])
      try await store.write(observedBy: controller) { db in
        _ = try Score.deleteOne(db, key: 1)
      }
      #expect(names(controller) == ["a: bob", "b: di cy"])
      try await store.write(observedBy: controller) { db in
        try Score(id: 5, player: "ed", level: "c", points: 50).insert(db)
      }
      #expect(names(controller) == ["a: bob", "b: di cy", "c: ed"])
      try await store.write(observedBy: controller) { db in
        try db.execute(sql: "DELETE FROM score WHERE level = 'b'")
      }
      #expect(names(controller) == ["a: bob", "c: ed"])
      // One transaction, several changes: delivered as one change set, in the fixed order.
      try await store.write(observedBy: controller) { db in
        try Score(id: 6, player: "fay", level: "a", points: 500).insert(db)
        try db.execute(sql: "UPDATE score SET points = 60 WHERE id = 5")
        try db.execute(sql: "UPDATE score SET points = 10 WHERE id = 2")
      }
      #expect(names(controller) == ["a: fay bob", "c: ed"])
      #expect(
        deliveries.changes == [
          "insert [0, 1]",
          "update [0, 2]",
          "move [0, 2] → [0, 0]",
          "move [0, 2] → [1, 0]",
          "remove [0, 1]",
          "insert section 2 \"c\"; insert [2, 0]",
          "remove section 1 \"b\"; remove [1, 0]; remove [1, 1]",
          "insert [0, 0]; update [0, 0] now [0, 1]; update [1, 0]",
        ])
      #expect(controller[RecordIndexPath(section: 1, row: 0)].points == 60)
      #expect(controller.records.map(\.id) == [6, 2, 5])
    }

    @Test("a limit and a filter: the top three over 100 points, a score pushed out is removed")
    func limitAndFilter() async throws {
      let store = try RecordStore(directory: try temporarySaves(), migrations: [scoresV1])
      let controller = FetchedResultsController(
        store: store,
        request: RecordFetchRequest(
          Score.self, filter: Column("points") > 100, sortedBy: [Column("points").desc], limit: 3))
      let deliveries = Deliveries(controller)
      try controller.start()
      #expect(controller.sections.isEmpty)
      try await store.write(observedBy: controller) { db in
        for (id, points) in [(1, 300), (2, 200), (3, 150), (4, 50)] {
          try Score(id: Int64(id), player: "p\(id)", level: "a", points: points).insert(db)
        }
      }
      #expect(controller.records.map(\.id) == [1, 2, 3])
      try await store.write(observedBy: controller) { db in
        try Score(id: 5, player: "p5", level: "a", points: 250).insert(db)
      }
      #expect(controller.records.map(\.id) == [1, 5, 2])
      try await store.write(observedBy: controller) { db in
        try db.execute(sql: "UPDATE score SET points = 99 WHERE id = 4")  // still filtered out
      }
      #expect(
        deliveries.changes == [
          "insert section 0 \"\"; insert [0, 0]; insert [0, 1]; insert [0, 2]",
          "remove [0, 2]; insert [0, 1]",
        ])
    }
  }
#endif
