#if Records
  import StasisDemoGame
  import Foundation
  import Stasis
  import StasisRecords

  /// One game's best moment in the demo's high-score table: a row per game played in a slot on
  /// a device, its points raised as the game goes on (at each level's end and at the quit).
  public struct DemoHighScore: Codable, Equatable, Sendable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "highScore"
    /// The row's key (nil before it is inserted).
    public var id: Int64?
    /// The score.
    public var points: Int64
    /// The level it was reached on.
    public var level: Int
    /// The slot the game was saved in.
    public var slot: String
    /// The device that played it.
    public var device: String
    /// When it was reached, in milliseconds since 1970 (the wall clock, never the engine's).
    public var achievedAt: Int64

    /// Creates a row (inserted by ``StasisDemoRecords/recordScore(points:level:slot:)``).
    public init(id: Int64? = nil, points: Int64, level: Int, slot: String, device: String, achievedAt: Int64) {
      self.id = id
      self.points = points
      self.level = level
      self.slot = slot
      self.device = device
      self.achievedAt = achievedAt
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }
  }

  /// One slot in the slot picker's list: what its newest readable save says, indexed when a
  /// save of it ends and at launch, so the picker reads one table instead of every header.
  public struct DemoSlotEntry: Codable, Equatable, Sendable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "slotIndex"
    /// The slot's name (the key).
    public var slot: String
    /// How many generations it holds.
    public var generations: Int
    /// The newest readable save's time, in milliseconds since 1970; nil when none reads.
    public var savedAt: Int64?
    /// The newest readable generation's number; nil when none reads.
    public var generation: Int?
    /// The row's summary: level, score, progress and play time.
    public var summary: String

    /// Creates an entry.
    public init(slot: String, generations: Int, savedAt: Int64?, generation: Int?, summary: String) {
      self.slot = slot
      self.generations = generations
      self.savedAt = savedAt
      self.generation = generation
      self.summary = summary
    }

    /// A slot's entry, from its listing: the newest generation whose header reads (one damaged
    /// save does not hide a slot). Nil for a slot with no generations.
    public init?(_ info: SlotInfo) {
      guard !info.generations.isEmpty else { return nil }
      let newest = info.generations.first { $0.header != nil }
      self.init(
        slot: info.name, generations: info.generations.count, savedAt: newest?.header?.createdAt,
        generation: newest?.generation, summary: newest?.header.map { SlotMenu.summaryLine($0.summary) } ?? "unreadable"
      )
    }
  }

  /// The demo's structured store (recipe 16): `records.sqlite` in the save folder, with the
  /// high-score table (F3) and the slot picker's index (F10), each shown through a
  /// `FetchedResultsController` that moves rows as they change.
  ///
  /// Writes run off the game's thread as background tasks of the application, so a quit waits
  /// for the last score; each write's end is delivered at the application's next `update()`
  /// (``RecordStore/write(_:completion:)``), so a loop that holds its thread calls `update()`
  /// (or `waitForDeliveries(timeout:)` then `update()`) until ``hasPendingWrites`` is false.
  /// With an application, nothing here needs the main queue or a run loop (without one, as in
  /// the tests, a write's end comes on the main actor).
  @MainActor
  public final class StasisDemoRecords {
    /// The migrations, oldest first; a shipped one is never edited.
    public nonisolated static let migrations: [RecordMigration] = [
      RecordMigration("v1: high scores and the slot index") { db in
        try db.create(table: DemoHighScore.databaseTableName) { table in
          table.autoIncrementedPrimaryKey("id")
          table.column("points", .integer).notNull().indexed()
          table.column("level", .integer).notNull()
          table.column("slot", .text).notNull()
          table.column("device", .text).notNull()
          table.column("achievedAt", .integer).notNull()
        }
        try db.create(table: DemoSlotEntry.databaseTableName) { table in
          table.primaryKey("slot", .text)
          table.column("generations", .integer).notNull()
          table.column("savedAt", .integer)
          table.column("generation", .integer)
          table.column("summary", .text).notNull()
        }
      }
    ]
    /// How many high scores are kept: the table is bounded.
    public nonisolated static let keptScores = 100

    /// The database.
    public let store: RecordStore
    /// The save folder it indexes.
    public let saves: SaveStore
    /// Writes begun and not yet ended (committed, failed or rolled back).
    public private(set) var pendingWrites = 0
    /// The last write's error, for the HUD; nil after a write that committed.
    public private(set) var lastError: (any Error)?
    /// The row this session's game raises, and its points: a lower score (a new game, an older
    /// save loaded) starts a new row.
    private var current: (id: Int64, points: Int64)?
    /// True after a save was restored and before its first score: that score goes on with the
    /// slot's newest row on this device, when its points are not above it (a resumed game).
    private var resumed = false

    /// Opens (or creates, and migrates) the records of a save folder.
    public init(saves: SaveStore, application: Application?) throws(RecordStoreError) {
      self.saves = saves
      store = try RecordStore(directory: saves.directory, migrations: Self.migrations, application: application)
    }

    /// True while a write has not ended: a quit waits for it.
    public var hasPendingWrites: Bool { pendingWrites > 0 }

    /// The ten best scores, best first (ties: the earlier row first).
    public func topTen() -> FetchedResultsController<DemoHighScore> {
      FetchedResultsController(
        store: store, request: RecordFetchRequest(DemoHighScore.self, sortedBy: [Column("points").desc], limit: 10))
    }

    /// Every slot, the newest save first.
    public func slotList() -> FetchedResultsController<DemoSlotEntry> {
      FetchedResultsController(
        store: store, request: RecordFetchRequest(DemoSlotEntry.self, sortedBy: [Column("savedAt").desc]))
    }

    /// A save was restored (at launch, from the picker, after a failure): the game that goes on
    /// may be one the table has a row for, or an older one.
    public func restoredSave() {
      current = nil
      resumed = true
    }

    /// Records the game's score: raises this game's row, or inserts one. After
    /// ``restoredSave()`` the first score continues the slot's newest row on this device when
    /// the game went on from it (its points are not above these), so a relaunch does not list
    /// a game twice; a new game always gets a row of its own. Nothing for a score of zero.
    /// Returns at once; the task ends when the write has.
    @discardableResult
    public func recordScore(points: Int64, level: Int, slot: SaveSlot) -> Task<Void, Never> {
      guard points > 0 else { return Task {} }
      if let current, points < current.points { self.current = nil }  // a new game, or an older save
      let continuing = current?.id
      let resumed = self.resumed
      self.resumed = false
      let device = saves.device
      let now = saves.wallClock()
      return begin { db -> DemoHighScore in
        var row: DemoHighScore
        if let continuing, let found = try DemoHighScore.fetchOne(db, key: continuing) {
          row = found
        } else if continuing == nil, resumed,
          let newest = try DemoHighScore.filter(Column("slot") == slot.name && Column("device") == device)
            .order(Column("id").desc).fetchOne(db), newest.points <= points
        {
          row = newest
        } else {
          row = DemoHighScore(points: points, level: level, slot: slot.name, device: device, achievedAt: now)
          try row.insert(db)
        }
        if row.points != points || row.level != level {
          row.points = points
          row.level = level
          row.achievedAt = now
          try row.update(db)
        }
        // Bounded: only the best `keptScores` stay.
        try db.execute(
          sql: """
            DELETE FROM highScore WHERE id NOT IN (SELECT id FROM highScore ORDER BY points DESC, id LIMIT ?)
            """, arguments: [Self.keptScores])
        return row
      } then: { row in
        if let id = row.id { self.current = (id, row.points) }
      }
    }

    /// Indexes one slot again from its files (after a save or a restore). The headers are read
    /// off the main actor, inside the write. Returns at once.
    @discardableResult
    public func indexSlot(_ slot: SaveSlot) -> Task<Void, Never> {
      let saves = self.saves
      return begin { db in
        let info = SlotInfo(slot: slot, generations: try saves.listGenerations(of: slot))
        if let entry = DemoSlotEntry(info) {
          try entry.upsert(db)
        } else {
          _ = try DemoSlotEntry.deleteOne(db, key: slot.name)
        }
      }
    }

    /// Indexes the whole folder again (at launch): every slot's entry, and none for a slot that
    /// is gone (deleted, or copied away by another tool while the game was closed). Returns at once.
    @discardableResult
    public func indexFolder() -> Task<Void, Never> {
      let saves = self.saves
      return begin { db in
        let entries = try saves.listSlots().compactMap(DemoSlotEntry.init)
        let names = entries.map(\.slot)
        try DemoSlotEntry.filter(!names.contains(Column("slot"))).deleteAll(db)
        for entry in entries where try DemoSlotEntry.fetchOne(db, key: entry.slot) != entry {
          try entry.upsert(db)
        }
      }
    }

    /// Begins one write now, counted in ``pendingWrites`` until its end is delivered (at the
    /// application's next `update()`, or on the main actor without one); an error is kept in
    /// ``lastError``, never thrown into the game loop (the table is not the save: the game goes
    /// on). `then` runs with what a committed write returned. The task ends after the delivery:
    /// for a test that awaits it, not for the game's loop.
    private func begin<T: Sendable>(
      _ updates: @escaping @Sendable (Database) throws -> T, then: @escaping @MainActor (T) -> Void = { _ in }
    ) -> Task<Void, Never> {
      pendingWrites += 1
      let (ended, delivered) = AsyncStream<Void>.makeStream()
      store.write(updates) { [weak self] result in
        defer { delivered.finish() }
        guard let self else { return }
        pendingWrites -= 1
        switch result {
        case .success(let value):
          then(value)
          lastError = nil
        case .failure(let error):
          lastError = error
        }
      }
      return Task { for await _ in ended {} }
    }
  }
#endif
