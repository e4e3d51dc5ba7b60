#if Records
  import Foundation
  import Stasis
  import Synchronization

  /// The structured store: a SQLite database in the save folder (``fileName``), with the
  /// game's record types and its migrations, written durably inside the background budget.
  ///
  /// The database is in WAL mode with `synchronous=FULL`: a committed write survives a power
  /// cut. A write made through ``write(_:)`` while an `Application` is attached runs as a
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
    private var lifecycleObservers: [ObserverToken] = []
    /// Writes begun and not yet ended, and whether the last one to end folds the WAL into the
    /// file (asked on the way to the background while writes ran). Behind a lock: a write ends
    /// on its own task, never through the game's thread.
    private nonisolated let inFlight = Mutex<(count: Int, checkpointWhenIdle: Bool)>((0, false))
    private var isClosed = false

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
      // A newer build's database is refused before anything opens it for writing: its
      // migrations are read through a read-only connection that changes no byte of it (an
      // ordinary connection folds the WAL into the file, or writes the WAL's index, as it
      // opens or closes), so the refused file, its `-wal` and its `-shm` stay as they were.
      let known = migrations.map(\.name)
      let unknown: [String]
      do {
        unknown = try Self.readOnlyMigrations(path: path).filter { !known.contains($0) }
      } catch {
        throw RecordStoreError(.cannotOpen, "the records database could not be read", path: path, cause: error)
      }
      guard unknown.isEmpty else {
        throw RecordStoreError(
          .newerDatabase,
          "a newer build migrated this database (\(unknown.joined(separator: ", "))): update the game; the file is kept "
            + "as it is, never written",
          path: path)
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
      do {
        try migrator.migrate(pool)
      } catch {
        throw RecordStoreError(
          .migrationFailed, "a migration failed; the database is as it was before it", path: path, cause: error)
      }
      if let application {
        // On the way to the background, and at a quit, the WAL is folded into the file: a
        // backup of `records.sqlite` alone then holds every row.
        for event in [LifecycleEvent.didEnterBackground, .willTerminate] {
          lifecycleObservers.append(
            application.addObserver(for: event) { [weak self] application in self?.checkpointLeaving(application) })
        }
      }
    }

    isolated deinit {
      for token in lifecycleObservers { application?.removeObserver(token) }
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
      let expiry = Expiry()
      let work = startWrite(updates, expiry: expiry)
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
    /// records.write(
    ///   { db in try HighScore(points: score).insert(db) },
    ///   completion: { result in if case .failure(let error) = result { hud.show("not recorded: \(error)") } })
    /// ```
    public func write<T: Sendable>(
      _ updates: @escaping @Sendable (Database) throws -> T,
      completion: @escaping @MainActor @Sendable (Result<T, any Error>) -> Void
    ) {
      let application = self.application
      let expiry = Expiry()
      let deliver: @MainActor @Sendable (Result<T, any Error>) -> Void = { [weak self] result in
        completion(result.mapError { self?.expired($0, expiry) ?? $0 })
      }
      // Handed over before the write's background task ends: a quit that waits for the task
      // runs the completion in the update() that follows, never after the app has stopped.
      let work = startWrite(updates, expiry: expiry) { result in
        application?.deliverOnUpdate { deliver(result) }
      }
      if application == nil {
        Task.detached {
          let result = await work.result
          await deliver(result)
        }
      }
    }

    /// Begins a write's transaction on a task of its own, as a background task when an
    /// application is attached. The background task ends from the write's own task, the moment
    /// it commits or rolls back: never through a hop to the main actor, which a game loop
    /// holding its thread (a quit waiting for its work) would not run until the budget ran out.
    /// `ended` is called on the write's task with its result, before its background task ends.
    private func startWrite<T: Sendable>(
      _ updates: @escaping @Sendable (Database) throws -> T, expiry: Expiry,
      ended: (@Sendable (Result<T, any Error>) -> Void)? = nil
    ) -> Task<T, any Error> {
      let pool = self.pool
      let application = self.application
      let ending = Mutex<(id: BackgroundTaskID?, done: Bool)>((nil, false))
      // A write begun in the background or at a quit folds the WAL into the file when it ends.
      let leaving = application.map { $0.state.isInBackground || $0.isTerminating } ?? false
      inFlight.withLock { state in
        state.count += 1
        if leaving { state.checkpointWhenIdle = true }
      }
      let work = Task.detached { [self] in
        defer {
          let id = ending.withLock { state -> BackgroundTaskID? in
            state.done = true
            return state.id
          }
          if let id { application?.endBackgroundTask(id) }
        }
        let result: Result<T, any Error>
        do {
          result = .success(try await pool.write(updates))
        } catch {
          result = .failure(error)
        }
        // The last write to end after the way to the background asked for a checkpoint folds
        // the WAL into the file, inside its own background task.
        let checkpoint = self.inFlight.withLock { state -> Bool in
          state.count -= 1
          guard state.count == 0, state.checkpointWhenIdle else { return false }
          state.checkpointWhenIdle = false
          return true
        }
        if checkpoint { try? await pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) } }
        ended?(result)
        return try result.get()
      }
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
      return work
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
    ///
    /// It first folds the WAL into the database (`PRAGMA wal_checkpoint(TRUNCATE)`): after a
    /// close, `records.sqlite` alone holds every row, and SQLite removes its `-wal` and `-shm`.
    public func close() throws {
      guard !isClosed else { return }
      for token in lifecycleObservers { application?.removeObserver(token) }
      lifecycleObservers = []
      // Best effort: a reader still in a snapshot keeps the checkpoint from finishing; closing
      // the last connection then folds the rest in.
      _ = try? pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
      try pool.close()
      isClosed = true
    }

    /// Copies the database, as of one moment, into a new self-contained file at `path` (which
    /// must not exist yet): a backup that needs no `-wal` beside it, made while the store stays
    /// open and in use (SQLite's online backup).
    ///
    /// - Throws: ``RecordStoreError`` (`cannotOpen`) when `path` exists or cannot be written.
    public nonisolated func backup(to path: String) async throws {
      guard !FileManager.default.fileExists(atPath: path) else {
        throw RecordStoreError(.cannotOpen, "a file is already there: a backup never overwrites one", path: path)
      }
      let pool = self.pool
      try await Task.detached {
        let destination = try DatabaseQueue(path: path)
        do {
          try pool.backup(to: destination)
          try destination.close()
        } catch {
          try? destination.close()
          try? FileManager.default.removeItem(atPath: path)
          throw error
        }
      }.value
    }

    /// Folds the WAL into the file on the way to the background or at a quit, as a background
    /// task; when writes are in flight, the last one to end does it instead.
    private func checkpointLeaving(_ application: Application) {
      guard !isClosed else { return }
      let busy = inFlight.withLock { state -> Bool in
        guard state.count > 0 else { return false }
        state.checkpointWhenIdle = true
        return true
      }
      guard !busy else { return }
      let taskID = application.beginCancellableBackgroundTask(named: "records checkpoint") {}
      // Queued on the writer now: it runs before any write begun after this moment.
      pool.asyncWriteWithoutTransaction { db in
        _ = try? db.checkpoint(.truncate)
        application.endBackgroundTask(taskID)
      }
    }

    /// The migrations a database has run, read without changing a byte of it, its `-wal` or its
    /// `-shm`: empty when there is no database yet.
    ///
    /// With no WAL (or an empty one) the file alone is read as immutable; with a WAL and its
    /// index, the index is opened read-only (`readonly_shm`); a WAL without its
    /// index (or a SQLite that takes no URI file names) is read from a private copy.
    private nonisolated static func readOnlyMigrations(path: String) throws -> [String] {
      let files = FileManager.default
      guard files.fileExists(atPath: path) else { return [] }
      let walSize = (try? files.attributesOfItem(atPath: path + "-wal")[.size] as? NSNumber)?.intValue
      var configuration = Configuration()
      configuration.readonly = true
      var copy: String?
      defer { if let copy { try? files.removeItem(atPath: copy) } }
      let location: String
      if try takesURIs(), walSize == nil || walSize == 0 {
        location = uri(path) + "?immutable=1"
      } else if try takesURIs(), files.fileExists(atPath: path + "-shm") {
        location = uri(path) + "?readonly_shm=1"
      } else {
        let folder = files.temporaryDirectory.appendingPathComponent("stasis-records-\(UUID().uuidString)").path
        try files.createDirectory(atPath: folder, withIntermediateDirectories: false)
        copy = folder
        location = (folder as NSString).appendingPathComponent(fileName)
        try files.copyItem(atPath: path, toPath: location)
        if walSize != nil { try files.copyItem(atPath: path + "-wal", toPath: location + "-wal") }
        configuration.readonly = false  // SQLite rebuilds the copy's index from its WAL
      }
      let queue = try DatabaseQueue(path: location, configuration: configuration)
      defer { try? queue.close() }
      return try queue.read { db -> [String] in
        guard try db.tableExists("grdb_migrations") else { return [] }
        return try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY rowid")
      }
    }

    /// Whether this SQLite reads `file:` names as URIs (built with `SQLITE_USE_URI`, as
    /// Debian's is): GRDB opens without `SQLITE_OPEN_URI`.
    private nonisolated static func takesURIs() throws -> Bool {
      try DatabaseQueue().read { db in
        try Bool.fetchOne(db, sql: "SELECT sqlite_compileoption_used('USE_URI')") ?? false
      }
    }

    /// `path` as a `file:` URI, every character a URI gives a meaning to escaped.
    private nonisolated static func uri(_ path: String) -> String {
      var allowed = CharacterSet.urlPathAllowed
      allowed.remove(charactersIn: "?#%;")
      return "file:" + (path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path)
    }

    /// Whether a write's budget ran out, set by its expiration handler on the main actor.
    @MainActor private final class Expiry {
      var expired = false
    }
  }
#endif
