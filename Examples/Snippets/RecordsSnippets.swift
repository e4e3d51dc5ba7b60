// The Swift of the StructuredRecords article (Sources/Records/StasisRecords/StasisRecords.docc/StructuredRecords.md),
// compiled: only with the `Records` trait, as StasisRecords's store is.
#if Records
  import Foundation
  import Stasis
  import StasisRecords

  // MARK: - A record type and its migrations

  struct HighScore: Codable, FetchableRecord, PersistableRecord, Sendable {
    var id: Int64?
    var player: String
    var points: Int
  }

  let highScoreMigrations = [
    RecordMigration("v1: high scores") { db in
      try db.create(table: "highScore") { t in
        t.autoIncrementedPrimaryKey("id")
        t.column("player", .text).notNull()
        t.column("points", .integer).notNull().indexed()
      }
    }
  ]

  // MARK: - Opening the store, writing, a controller over the top ten

  @MainActor
  func highScoreTable(app: Application) async throws -> FetchedResultsController<HighScore> {
    let store = try RecordStore(directory: "Saves", migrations: highScoreMigrations, application: app)
    try await store.write { db in try HighScore(player: "ada", points: 1200).insert(db) }
    let topTen = FetchedResultsController(
      store: store, request: RecordFetchRequest(HighScore.self, sortedBy: [Column("points").desc], limit: 10))
    topTen.onChange = { changes in
      for change in changes.records { print(change) }  // insert [0, 3], move [0, 5] → [0, 1], …
    }
    try topTen.start()  // topTen.records: the ten best, at once
    return topTen
  }

  // MARK: - Sections, and a migration that moves data

  struct LevelScore: Codable, FetchableRecord, PersistableRecord, Sendable {
    var id: Int64?
    var level: Int
    var player: String
    var points: Int
  }

  let levelMigrations = [
    RecordMigration("v1: level scores") { db in
      try db.create(table: "levelScore") { t in
        t.autoIncrementedPrimaryKey("id")
        t.column("level", .integer).notNull()
        t.column("player", .text).notNull()
        t.column("points", .integer).notNull()
      }
    },
    RecordMigration("v2: seconds") { db in
      try db.alter(table: "levelScore") { t in t.add(column: "seconds", .double).notNull().defaults(to: 0) }
    },
  ]

  @MainActor
  func levelTable(store: RecordStore) throws -> FetchedResultsController<LevelScore> {
    let byLevel = FetchedResultsController(
      store: store,
      request: RecordFetchRequest(
        LevelScore.self, filter: Column("points") > 0, sortedBy: [Column("level"), Column("points").desc],
        sectionKey: "level"))
    byLevel.onChange = { changes in
      for section in changes.sections { print(section) }  // insert section 2 "3"
      for change in changes.records { print(change) }
    }
    try byLevel.start()
    for section in byLevel.sections { print(section.name, section.records.map(\.player)) }
    return byLevel
  }

  // MARK: - A write in the background

  @MainActor
  func recordInBackground(store: RecordStore, score: HighScore) async {
    do {
      try await store.write { db in try score.insert(db) }
    } catch let error as RecordStoreError where error.kind == .expired {
      // The budget ran out first: nothing of the write is in the database. Try again on return.
    } catch {
      print(error)
    }
  }

  // MARK: - In a game loop that holds the main thread

  @MainActor
  func recordFromTheLoop(store: RecordStore) {
    store.write(
      { db in try HighScore(id: nil, player: "di", points: 250).insert(db) },
      completion: { result in
        if case .failure(let error) = result { print("not recorded: \(error)") }
      })
  }

  // MARK: - Quitting, and backups

  @MainActor
  func quitGame(app: Application, store: RecordStore) throws {
    app.quit()  // the quit's writes end, and the WAL is folded into records.sqlite, inside the budget
    try store.close()  // then: records.sqlite alone holds every row; no -wal or -shm is left beside it
  }

  func backUpWhileOpen(store: RecordStore) async throws {
    try await store.backup(to: "Backups/records.sqlite")  // one self-contained file; the store stays open
  }
#endif
