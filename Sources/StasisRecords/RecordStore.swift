#if Records
  import Foundation
  import Stasis
  import Synchronization

  /// The structured store: a SQLite database in the save folder (``fileName``), with the
  /// game's record types and its migrations, written durably inside the background budget.
  ///
  /// The database is in WAL mode with `synchronous=FULL`: a committed write survives a power
  /// cut. A write made through ``write(_:)`` while an ``Application`` is attached runs as a
  /// background task; if the budget runs out before it commits, it is cancelled and rolled
  /// back whole — the database keeps its previous rows, never half of a transaction.
  ///
  /// ```swift
  /// let store = try RecordStore(directory: "Saves", migrations: migrations, application: app)
  /// try await store.write { db in try HighScore(player: "ada", points: 300).insert(db) }
  /// let best = try await store.read { db in try HighScore.order(Column("points").desc).fetchAll(db) }
  /// ```
  @MainActor
  public final class RecordStore {
    /// The database's name in the save folder: `records.sqlite` (with SQLite's `-wal` and
    /// `-shm` beside it while it is open).
    public nonisolated static let fileName = "records.sqlite"

    /// The database file.
    public nonisolated let path: String
    /// The names of the migrations, in order.
    public nonisolated let migrationNames: [String]
    /// The application whose background budget writes share, and whose return to the
    /// foreground releases the changes controllers held; nil for tools and tests.
    public let application: Application?
    /// The database for reads and observations of the game's own (GRDB's `DatabaseReader`).
    /// Write through ``write(_:)``, which shares the background budget.
    public nonisolated var reader: any DatabaseReader { pool }

    private nonisolated let pool: DatabasePool

    /// Opens (creating it and the folder if needed) the store in a save folder, and runs the
    /// migrations it has not run yet, in order. It opens and migrates before it returns: call
    /// it at launch, before the first frame.
    ///
    /// - Parameters:
    ///   - directory: the save folder; the database is ``fileName`` in it.
    ///   - migrations: every migration the game has shipped, oldest first, names unique.
    ///   - application: the application whose budget writes share; nil for none.
    /// - Throws: ``RecordStoreError``: `cannotOpen`, `duplicateMigration`, `migrationFailed`,
    ///   or `newerDatabase` when a newer build has migrated the file (it is left untouched).
    public convenience init(
      directory: String, migrations: [RecordMigration], application: Application? = nil
    ) throws(RecordStoreError) {
      do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      } catch {
        throw RecordStoreError(
          .cannotOpen, "the save folder could not be created", path: directory, cause: error)
      }
      try self.init(
        path: (directory as NSString).appendingPathComponent(Self.fileName), migrations: migrations,
        application: application)
    }

    /// Opens (creating it if needed) the store at a path of the game's choosing, and runs the
    /// migrations it has not run yet. See ``init(directory:migrations:application:)``.
    public init(path: String, migrations: [RecordMigration], application: Application? = nil) throws(RecordStoreError) {
      self.path = path
      self.migrationNames = migrations.map(\.name)
      self.application = application
      var migrator = DatabaseMigrator()
      var seen: Set<String> = []
      for migration in migrations {
        guard seen.insert(migration.name).inserted else {
          throw RecordStoreError(
            .duplicateMigration, "two migrations are named '\(migration.name)': give each its own name", path: path)
        }
        migrator.registerMigration(migration.name, migrate: migration.migrate)
      }
      var configuration = Configuration()
      configuration.prepareDatabase { db in
        // A commit is on disk when it returns (WAL alone, at NORMAL, may lose the last ones).
        try db.execute(sql: "PRAGMA synchronous = FULL")
      }
      do {
        pool = try DatabasePool(path: path, configuration: configuration)
        // GRDB turns WAL on after `prepareDatabase` and sets the writer to NORMAL as it does:
        // the writer, the one connection that commits, is set to FULL again here, for its life.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
      } catch {
        throw RecordStoreError(.cannotOpen, "the records database could not be opened", path: path, cause: error)
      }
      let known = migrationNames
      let unknown: [String]
      do {
        unknown = try pool.read { db -> [String] in
          guard try db.tableExists("grdb_migrations") else { return [] }
          return try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
            .filter { !known.contains($0) }
        }
      } catch {
        throw RecordStoreError(.cannotOpen, "the records database could not be read", path: path, cause: error)
      }
      guard unknown.isEmpty else {
        throw RecordStoreError(
          .newerDatabase,
          "a newer build migrated this database (\(unknown.joined(separator: ", "))): update the game; the file is kept as it is",
          path: path)
      }
      do {
        try migrator.migrate(pool)
      } catch {
        throw RecordStoreError(
          .migrationFailed, "a migration failed; the database is as it was before it", path: path, cause: error)
      }
    }

    /// The migrations the database has run, in the order they ran.
    public nonisolated func appliedMigrations() throws -> [String] {
      try pool.read { db in
        try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
      }
    }

    /// Reads in a snapshot of the database, off the main actor.
    public nonisolated func read<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
      try await pool.read(value)
    }

    /// Writes in one transaction, off the main actor: it commits whole or not at all.
    ///
    /// With an ``application`` attached, the write is a background task ("records write"):
    /// the app is not suspended before it ends, and if the budget runs out first the write is
    /// cancelled and rolled back, and this throws ``RecordStoreError/Kind/expired``.
    ///
    /// - Throws: ``RecordStoreError`` (`expired`), `CancellationError` when the calling task
    ///   was cancelled, or what SQLite or `updates` threw; in every case nothing was written.
    public func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
      let (work, expiry) = startWrite(updates)
      do {
        return try await withTaskCancellationHandler {
          try await work.value
        } onCancel: {
          work.cancel()
        }
      } catch {
        throw expired(error, expiry) ?? error
      }
    }

    /// Starts a write now and returns at once, for a game loop that holds its thread and never
    /// awaits: the transaction runs off the game's thread (a background task, as in
    /// ``write(_:)``), and `completion` is called with its result inside the application's next
    /// `update()` (on the main actor, without an application).
    ///
    /// ```swift
    /// records.write({ db in try HighScore(points: score).insert(db) }) { result in
    ///   if case .failure(let error) = result { hud.show("not recorded: \(error)") }
    /// }
    /// ```
    public func write<T: Sendable>(
      _ updates: @escaping @Sendable (Database) throws -> T,
      completion: @escaping @MainActor @Sendable (Result<T, any Error>) -> Void
    ) {
      let (work, expiry) = startWrite(updates)
      let application = self.application
      let deliver: @MainActor @Sendable (Result<T, any Error>) -> Void = { [weak self] result in
        completion(result.mapError { self?.expired($0, expiry) ?? $0 })
      }
      Task.detached {
        let result = await work.result
        if let application {
          application.deliverOnUpdate { deliver(result) }
        } else {
          await MainActor.run { deliver(result) }
        }
      }
    }

    /// Begins a write's transaction on a task of its own, as a background task when an
    /// application is attached. The background task ends from the write's own task, the moment
    /// it commits or rolls back: never through a hop to the main actor, which a game loop
    /// holding its thread (a quit waiting for its work) would not run until the budget ran out.
    private func startWrite<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) -> (
      work: Task<T, any Error>, expiry: Expiry
    ) {
      let pool = self.pool
      let application = self.application
      let ending = Mutex<(id: BackgroundTaskID?, done: Bool)>((nil, false))
      let work = Task.detached {
        defer {
          let id = ending.withLock { state -> BackgroundTaskID? in
            state.done = true
            return state.id
          }
          if let id { application?.endBackgroundTask(id) }
        }
        return try await pool.write(updates)
      }
      let expiry = Expiry()
      if let application {
        let taskID = application.beginCancellableBackgroundTask(named: "records write") {
          expiry.expired = true
          work.cancel()
        }
        let done = ending.withLock { state -> Bool in
          state.id = taskID
          return state.done
        }
        if done { application.endBackgroundTask(taskID) }
      }
      return (work, expiry)
    }

    /// The error a write that the budget's expiry cancelled throws; nil for any other error.
    private func expired(_ error: any Error, _ expiry: Expiry) -> RecordStoreError? {
      guard expiry.expired else { return nil }
      if error is CancellationError {
        return RecordStoreError(
          .expired, "the background budget ran out before the write committed; it was rolled back", path: path)
      }
      if let error = error as? DatabaseError, error.resultCode == .SQLITE_INTERRUPT {
        return RecordStoreError(
          .expired, "the background budget ran out before the write committed; it was rolled back", path: path,
          cause: error)
      }
      return nil
    }

    /// Closes the database; later reads and writes throw. Controllers stop delivering.
    public func close() throws {
      try pool.close()
    }

    /// Whether a write's budget ran out, set by its expiration handler on the main actor.
    @MainActor private final class Expiry {
      var expired = false
    }
  }
#endif
