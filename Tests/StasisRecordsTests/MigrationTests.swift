// Only with the `Records` trait, as the store itself.
#if Records
  import Foundation
  import Stasis
  import StasisRecords
  import Testing

  /// v2: scores get a time, and the old ones 60 s each.
  private let scoresV2 = RecordMigration("v2: score time") { db in
    try db.alter(table: "score") { table in table.add(column: "seconds", .double).notNull().defaults(to: 0) }
    try db.execute(sql: "UPDATE score SET seconds = 60")
  }

  @MainActor
  @Suite("Record migrations")
  struct MigrationTests {
    @Test("a v1 database opened by a v2 build is migrated, its rows kept")
    func v1ToV2() async throws {
      let saves = try temporarySaves()
      do {
        let v1 = try RecordStore(directory: saves, migrations: [scoresV1])
        try await v1.write { db in try Score(id: 1, player: "ada", level: "a", points: 300).insert(db) }
        #expect(try v1.appliedMigrations() == ["v1: scores"])
        try v1.close()
      }
      let v2 = try RecordStore(directory: saves, migrations: [scoresV1, scoresV2])
      #expect(try v2.appliedMigrations() == ["v1: scores", "v2: score time"])
      let rows = try await v2.read { db in
        try Row.fetchAll(db, sql: "SELECT player, points, seconds FROM score").map {
          "\($0["player"] as String) \($0["points"] as Int) \($0["seconds"] as Double)"
        }
      }
      #expect(rows == ["ada 300 60.0"])
      try v2.close()
      // Opening again runs nothing twice.
      let again = try RecordStore(directory: saves, migrations: [scoresV1, scoresV2])
      #expect(try again.appliedMigrations() == ["v1: scores", "v2: score time"])
    }

    @Test("a database a newer build migrated is refused and left as it is")
    func newerDatabase() async throws {
      let saves = try temporarySaves()
      try RecordStore(directory: saves, migrations: [scoresV1, scoresV2]).close()
      #expect {
        _ = try RecordStore(directory: saves, migrations: [scoresV1])
      } throws: { error in
        (error as? RecordStoreError)?.kind == .newerDatabase
          && (error as? RecordStoreError)?.message.contains("v2: score time") == true
      }
      let store = try RecordStore(directory: saves, migrations: [scoresV1, scoresV2])
      #expect(try store.appliedMigrations() == ["v1: scores", "v2: score time"])
    }

    @Test("a newer build's database left with rows in its WAL, refused: records.sqlite, -wal and -shm keep their bytes")
    func refusedNewerDatabaseIsNeverWritten() async throws {
      let live = try temporarySaves()
      let newer = try RecordStore(directory: live, migrations: [scoresV1, scoresV2])
      try await newer.write { db in
        try Score(id: 1, player: "ada", level: "a", points: 300).insert(db)
      }
      // The files as the newer build leaves them when it is killed: its rows in the WAL, no
      // checkpoint, the WAL's index beside it.
      let saves = try temporarySaves()
      try copy(["", "-wal", "-shm"].map { RecordStore.fileName + $0 }, from: live, to: saves)
      try newer.close()
      let before = databaseFiles(in: saves)
      #expect((before["-wal"] ?? nil)?.isEmpty == false, "the rows are in the WAL")
      #expect((before["-shm"] ?? nil) != nil)

      #expect {
        _ = try RecordStore(directory: saves, migrations: [scoresV1])
      } throws: { ($0 as? RecordStoreError)?.kind == .newerDatabase }
      let after = databaseFiles(in: saves)
      for suffix in ["", "-wal", "-shm"] {
        #expect(after[suffix] == before[suffix], "records.sqlite\(suffix) changed, appeared or went away")
      }

      // The newer build still finds its rows.
      let again = try RecordStore(directory: saves, migrations: [scoresV1, scoresV2])
      #expect(try await again.read { db in try Score.fetchCount(db) } == 1)
    }

    @Test("a newer build's database closed cleanly, refused: the file keeps its bytes, and nothing appears beside it")
    func refusedClosedNewerDatabaseIsNeverWritten() async throws {
      let saves = try temporarySaves()
      let newer = try RecordStore(directory: saves, migrations: [scoresV1, scoresV2])
      try await newer.write { db in try Score(id: 1, player: "ada", level: "a", points: 300).insert(db) }
      try newer.close()
      let before = databaseFiles(in: saves)
      #expect(before["-wal"] == .some(nil) && before["-shm"] == .some(nil))
      #expect {
        _ = try RecordStore(directory: saves, migrations: [scoresV1])
      } throws: { ($0 as? RecordStoreError)?.kind == .newerDatabase }
      #expect(databaseFiles(in: saves) == before)
    }

    @Test("two migrations with one name are refused, not crashed on; a failing migration leaves the database as it was")
    func misuse() throws {
      #expect {
        _ = try RecordStore(directory: try temporarySaves(), migrations: [scoresV1, scoresV1])
      } throws: { ($0 as? RecordStoreError)?.kind == .duplicateMigration }
      let saves = try temporarySaves()
      struct Refused: Error {}
      let failing = RecordMigration("v2: fails") { db in
        try db.execute(sql: "ALTER TABLE score ADD COLUMN doomed INTEGER")
        throw Refused()
      }
      #expect {
        _ = try RecordStore(directory: saves, migrations: [scoresV1, failing])
      } throws: { error in
        (error as? RecordStoreError)?.kind == .migrationFailed && (error as? RecordStoreError)?.cause is Refused
      }
      let store = try RecordStore(directory: saves, migrations: [scoresV1])
      #expect(try store.appliedMigrations() == ["v1: scores"])
      #expect(
        try store.reader.read { db in try db.columns(in: "score").map(\.name) } == ["id", "player", "level", "points"])
    }
  }
#endif
