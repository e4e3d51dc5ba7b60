// Only with the `Records` trait, as the store itself.
#if Records
  import Foundation
  import Stasis
  import StasisRecords
  import StasisTesting

  /// A game's record type: a score on a level.
  struct Score: Codable, FetchableRecord, PersistableRecord, Sendable, Equatable {
    static let databaseTableName = "score"
    var id: Int64
    var player: String
    var level: String
    var points: Int
  }

  /// The scores table as the game first shipped it.
  let scoresV1 = RecordMigration("v1: scores") { db in
    try db.create(table: "score") { table in
      table.primaryKey("id", .integer)
      table.column("player", .text).notNull()
      table.column("level", .text).notNull()
      table.column("points", .integer).notNull()
    }
  }

  /// A fresh save folder.
  func temporarySaves() throws -> String {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("stasis-records-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url.path
  }

  /// The bytes of `records.sqlite`, `records.sqlite-wal` and `records.sqlite-shm` in `folder`,
  /// by suffix; nil for a file that is not there.
  func databaseFiles(in folder: String) -> [String: Data?] {
    var files: [String: Data?] = [:]
    for suffix in ["", "-wal", "-shm"] {
      let path = (folder as NSString).appendingPathComponent(RecordStore.fileName + suffix)
      files[suffix] = FileManager.default.contents(atPath: path)
    }
    return files
  }

  /// Copies `names` (file names) from one folder to another.
  func copy(_ names: [String], from source: String, to destination: String) throws {
    for name in names {
      try FileManager.default.copyItem(
        atPath: (source as NSString).appendingPathComponent(name),
        toPath: (destination as NSString).appendingPathComponent(name))
    }
  }

  /// The scores a copy of `records.sqlite` alone holds: the file is copied, without its `-wal`
  /// and `-shm`, to a fresh folder and opened there, as a backup of the one file is.
  @MainActor
  func scoresInACopyOfTheFileAlone(from folder: String) async throws -> [String] {
    let backup = try temporarySaves()
    try copy([RecordStore.fileName], from: folder, to: backup)
    let store = try RecordStore(directory: backup, migrations: [scoresV1])
    defer { try? store.close() }
    return try await store.read { db in try Score.order(Column("id")).fetchAll(db).map(\.player) }
  }

  /// An application driven by the test, on a clock that moves only when told to.
  @MainActor
  func makeApplication(budget: Duration = .seconds(10)) -> (Application, ManualClock) {
    let clock = ManualClock()
    let app = Application(configuration: .init(backgroundBudget: budget, clock: clock))
    return (app, clock)
  }

  /// What a controller delivered, each change set as its one-line description.
  @MainActor
  final class Deliveries {
    var changes: [String] = []

    init<Record>(_ controller: FetchedResultsController<Record>) {
      controller.onChange = { [weak self] in self?.changes.append($0.description) }
    }
  }

  extension RecordStore {
    /// Writes, then waits until the controller has observed what the database holds after the
    /// write (delivered, or held in the background): no sleeps.
    func write<Record>(
      observedBy controller: FetchedResultsController<Record>, _ updates: @escaping @Sendable (Database) throws -> Void
    ) async throws {
      try await write(updates)
      try await controller.waitForCurrentResults()
    }
  }
#endif
