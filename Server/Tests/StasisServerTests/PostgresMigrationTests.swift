import Foundation
import Logging
import Testing

@testable import ServerTestSupport
@testable import StasisServer

/// PostgreSQL's schema is brought up to date by named steps recorded in `stasis_migrations`: a
/// start runs only the steps the table does not record with the same text. Read from the
/// database's own catalogue, not only from what the backend says it did.
@Suite("PostgreSQL's migrations table")
struct PostgresMigrationTests {
  @Test("the first start runs every step and records it; the second runs none, and no DDL")
  func secondStartRunsNothing() async throws {
    try await withOwnPostgresDatabase("stasis_migrations") { url in
      let steps = try PostgresBackend(url: url, connections: 1, logger: Logger(label: "steps")).migrations()
      let first = try await Self.start(url)
      #expect(first.ran == steps.map(\.name))
      #expect(first.applied.isEmpty)
      let recorded = try await postgresAdmin(["SELECT name, checksum FROM stasis_migrations ORDER BY name"], on: url)
      #expect(recorded.map { $0[0] ?? "" } == steps.map(\.name).sorted())
      #expect(Set(recorded.map { $0[1] ?? "" }) == Set(steps.map(\.checksum)))
      // What DDL would change: the catalogue's rows of the upload function (`CREATE OR REPLACE`
      // writes a new row version) and of the tables (`ALTER TABLE` does).
      let catalogue = """
        SELECT string_agg(xmin::text, ',' ORDER BY oid) FROM (
          SELECT xmin, oid FROM pg_proc WHERE proname LIKE 'stasis\\_%'
          UNION ALL SELECT xmin, oid FROM pg_class WHERE relnamespace = 'public'::regnamespace
        ) rows
        """
      let before = try await postgresAdmin([catalogue], on: url)
      let second = try await Self.start(url)
      #expect(second.ran.isEmpty, "a second start ran \(second.ran)")
      #expect(second.applied == steps.map(\.name))
      #expect(try await postgresAdmin([catalogue], on: url) == before, "the second start changed the catalogue")
    }
  }

  @Test("a step whose text changed since it was recorded runs again, and only it")
  func changedStepRunsAgain() async throws {
    try await withOwnPostgresDatabase("stasis_migrations") { url in
      try await Self.start(url)
      try await postgresAdmin(
        ["UPDATE stasis_migrations SET checksum = 'an older text' WHERE name = 'the upload functions'"], on: url)
      let again = try await Self.start(url)
      #expect(again.ran == ["the upload functions"])
      let checksum = try await postgresAdmin(
        ["SELECT checksum FROM stasis_migrations WHERE name = 'the upload functions'"], on: url)
      #expect(checksum.first?.first != "an older text")
    }
  }

  @Test("a database made before the table existed takes every step once, and keeps its rows")
  func databaseWithoutTheTable() async throws {
    try await withOwnPostgresDatabase("stasis_migrations") { url in
      try await Self.start(url)
      try await postgresAdmin(
        [
          "INSERT INTO players (name, token_hash, created_at) VALUES ('kept', '\\x01', 1)",
          "DROP TABLE stasis_migrations",
        ], on: url)
      let report = try await Self.start(url)
      #expect(report.applied.isEmpty && !report.ran.isEmpty)
      #expect(try await postgresAdmin(["SELECT name FROM players"], on: url) == [["kept"]])
    }
  }

  /// A server's start: a backend of its own, migrated once.
  @discardableResult
  static func start(_ url: String) async throws -> PostgresMigrationReport {
    var logger = Logger(label: "migrations")
    logger.logLevel = .critical
    let backend = try PostgresBackend(url: url, connections: 1, logger: logger)
    return try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { await backend.run() }
      defer { group.cancelAll() }
      return try await backend.migrate()
    }
  }
}
