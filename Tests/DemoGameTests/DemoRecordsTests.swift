// Only with the `Records` trait, as the demo's records themselves.
#if Records
  import StasisDemoGame
  import StasisDemoRecords
  import Foundation
  import Stasis
  import StasisRecords
  import StasisTestSupport
  import StasisTesting
  import Testing

  @MainActor
  @Suite("The demo's high-score table and slot index, on StasisRecords")
  struct DemoRecordsTests {
    /// Every change set a controller delivers, as its description.
    @MainActor final class Deliveries {
      var all: [String] = []
    }

    private func watch<Record>(_ controller: FetchedResultsController<Record>) throws -> Deliveries {
      let deliveries = Deliveries()
      controller.onChange = { deliveries.all.append($0.description) }
      try controller.start()
      return deliveries
    }

    /// Records a score and waits until the controller has taken what the database holds then.
    private func record(
      _ records: StasisDemoRecords, _ points: Int64, level: Int, on controller: FetchedResultsController<DemoHighScore>
    ) async throws {
      await records.recordScore(points: points, level: level, slot: "autosave").value
      #expect(records.lastError == nil)
      try await controller.waitForCurrentResults()
    }

    @Test(
      "a game's row is raised at each level's end, a new game gets its own, a resumed game continues its row, and only ten show"
    )
    func highScores() async throws {
      let folder = try temporaryFolder().path
      let saves = SaveStore(directory: folder, wallClock: ManualWallClock(unixMilliseconds: 1_000), device: "deck")
      let records = try StasisDemoRecords(saves: saves, application: nil)
      let topTen = records.topTen()
      let deliveries = try watch(topTen)
      #expect(topTen.records.isEmpty)

      try await record(records, 0, level: 1, on: topTen)  // nothing scored: no row
      try await record(records, 100, level: 1, on: topTen)
      try await record(records, 250, level: 2, on: topTen)  // the same game, raised
      try await record(records, 50, level: 1, on: topTen)  // a new game (the score went down)
      try await record(records, 400, level: 3, on: topTen)  // ... which overtakes the first
      #expect(topTen.records.map(\.points) == [400, 250])
      #expect(topTen.records.map(\.level) == [3, 2])
      #expect(
        deliveries.all == [
          "insert section 0 \"\"; insert [0, 0]", "update [0, 0]", "insert [0, 1]", "move [0, 1] → [0, 0]",
        ])

      // Relaunched (a new session, its own database connection and controller) and resumed:
      // the newest game of the slot goes on.
      topTen.stop()
      try records.store.close()
      var relaunched = try StasisDemoRecords(saves: saves, application: nil)
      var table = relaunched.topTen()
      try table.start()
      relaunched.restoredSave()
      try await record(relaunched, 450, level: 3, on: table)
      #expect(table.records.map(\.points) == [450, 250])

      // Relaunched again into a new game (nothing restored): its own row, though it scores more.
      table.stop()
      try relaunched.store.close()
      relaunched = try StasisDemoRecords(saves: saves, application: nil)
      table = relaunched.topTen()
      try table.start()
      try await record(relaunched, 500, level: 1, on: table)
      #expect(table.records.map(\.points) == [500, 450, 250])

      // Eleven more games, each better than the last: the table shows the ten best; the
      // store keeps them all (up to `keptScores`).
      for game in 1...11 {
        try await record(relaunched, 10, level: 1, on: table)  // a new game starts low
        try await record(relaunched, 1_000 + Int64(game), level: 1, on: table)
      }
      #expect(table.records.count == 10)
      #expect(table.records.first?.points == 1_011)
      #expect(table.records.last?.points == 1_002)
      let kept = try await relaunched.store.read { db in try DemoHighScore.fetchCount(db) }
      #expect(kept == 14)
      #expect(relaunched.hasPendingWrites == false)
    }

    @Test("the slot index follows the folder: a new save moves its slot to the top, a deleted slot leaves")
    func slotIndex() async throws {
      let folder = try temporaryFolder().path
      let codec = SaveCodec<[String: Int]>(game: GameIdentity(name: "index"))
      func save(_ slot: SaveSlot, at time: Int64, score: Int64) throws {
        _ = try SaveStore(directory: folder, wallClock: ManualWallClock(unixMilliseconds: time)).save(
          ["score": Int(score)], codec: codec, slot: slot,
          summary: try SaveSummary(DemoSummary(level: 1, score: score))
        ).wait()
      }
      try save("alpha", at: 1_000, score: 10)
      try save("beta", at: 2_000, score: 20)
      let records = try StasisDemoRecords(saves: SaveStore(directory: folder), application: nil)
      let list = records.slotList()
      let deliveries = try watch(list)
      await records.indexFolder().value
      try await list.waitForCurrentResults()
      #expect(list.records.map(\.slot) == ["beta", "alpha"])
      #expect(list.records.map(\.summary) == ["level 1   score 20   0 s", "level 1   score 10   0 s"])

      try save("alpha", at: 3_000, score: 30)
      await records.indexSlot("alpha").value
      #expect(records.lastError == nil, "\(String(describing: records.lastError))")
      try await list.waitForCurrentResults()
      #expect(list.records.map(\.slot) == ["alpha", "beta"], "\(list.records)")
      #expect(list.records.first?.generations == 2)

      try FileManager.default.removeItem(atPath: folder + "/beta")
      await records.indexFolder().value
      try await list.waitForCurrentResults()
      #expect(list.records.map(\.slot) == ["alpha"])
      #expect(
        deliveries.all == [
          "insert section 0 \"\"; insert [0, 0]; insert [0, 1]", "move [0, 1] → [0, 0]", "remove [0, 1]",
        ])
    }
  }
#endif
