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
