// Only with the `Records` trait, as the store itself.
#if Records
  import Foundation
  import Stasis
  import StasisRecords
  import StasisTestSupport
  import Testing

  /// A game's high-score table and a table keyed by its hidden rowid, in a fresh save folder.
  @MainActor
  private func recordsFixture() async throws -> URL {
    let root = try temporaryFolder()
    let store = try RecordStore(
      directory: root.appendingPathComponent("Saves").path,
      migrations: [
        RecordMigration("v1: high scores") { db in
          try db.create(table: "highScore") { table in
            table.autoIncrementedPrimaryKey("id")
            table.column("player", .text).notNull()
            table.column("points", .integer).notNull()
          }
        },
        RecordMigration("v2: trophies") { db in
          try db.create(table: "trophy") { table in
            table.column("name", .text)
            table.column("icon", .blob)
            table.column("weight", .double)
          }
        },
      ])
    try await store.write { db in
      for (player, points) in [("ada", 300), ("bo", 1200), ("cy", 75)] {
        try db.execute(sql: "INSERT INTO highScore (player, points) VALUES (?, ?)", arguments: [player, points])
      }
      try db.execute(
        sql: "INSERT INTO trophy (name, icon, weight) VALUES ('gold', x'00010203', 2.5), (NULL, NULL, NULL)")
    }
    try store.close()
    return root
  }

  @MainActor
  @Suite("stasis records")
  struct CLIRecordsTests {
    @Test("text: each table with its rows in primary-key order, the migrations applied")
    func text() async throws {
      let root = try await recordsFixture()
      let result = try run("stasis", ["records", "--saves", "Saves"], in: root)
      #expect(result.status == 0)
      #expect(result.stderr.isEmpty)
      expectGolden(result.stdout, "text.result")
    }

    @Test("--json: tables, columns, rows; a blob as base64")
    func json() async throws {
      let root = try await recordsFixture()
      let result = try run("stasis", ["records", "--saves", "Saves", "--json"], in: root)
      #expect(result.status == 0)
      let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
      #expect(object["migrations"] as? [String] == ["v1: high scores", "v2: trophies"])
      let tables = try #require(object["tables"] as? [[String: Any]])
      #expect(tables.map { $0["name"] as? String } == ["highScore", "trophy"])
      #expect(tables[0]["columns"] as? [String] == ["id", "player", "points"])
      let rows = try #require(tables[0]["rows"] as? [[Any]])
      #expect(rows.map { $0[1] as? String } == ["ada", "bo", "cy"])
      #expect(rows.map { $0[2] as? Int } == [300, 1200, 75])
      let trophies = try #require(tables[1]["rows"] as? [[Any]])
      #expect(trophies[0][1] as? String == "AAECAw==")
      #expect(trophies[1][0] is NSNull)
    }

    @Test("a folder without a store is exit 74, saying which file it looked for")
    func missing() throws {
      let root = try temporaryFolder()
      let result = try run("stasis", ["records", "--saves", root.path], in: root)
      #expect(result.status == 74)
      #expect(result.stderr.contains("no structured store (records.sqlite) in the save folder"))
      #expect(result.stdout.isEmpty)
    }
  }
#endif
