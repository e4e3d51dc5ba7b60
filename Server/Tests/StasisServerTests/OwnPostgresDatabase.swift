import Foundation
import Logging
import PostgresNIO
import StasisServer
import Testing

@testable import ServerTestSupport

/// A PostgreSQL database of a test's own, on the server `STASIS_TEST_POSTGRES_URL` names: made
/// for `body` (given its URL) and dropped after, whatever `body` did.
func withOwnPostgresDatabase(_ prefix: String, _ body: (_ url: String) async throws -> Void) async throws {
  let url = try #require(Backend.postgresURL, "STASIS_TEST_POSTGRES_URL is not set: run scripts/test.sh")
  let name = "\(prefix)_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
  try await postgresAdmin(["CREATE DATABASE \(name)"], on: url)
  var parts = try #require(URLComponents(string: url))
  parts.path = "/" + name
  let own = try #require(parts.string)
  do {
    try await body(own)
  } catch {
    try? await postgresAdmin(["DROP DATABASE IF EXISTS \(name) WITH (FORCE)"], on: url)
    throw error
  }
  try await postgresAdmin(["DROP DATABASE IF EXISTS \(name) WITH (FORCE)"], on: url)
}

/// Runs `statements` on the database `url` names, on a connection of its own; the rows of the
/// last one, each as text.
@discardableResult
func postgresAdmin(_ statements: [String], on url: String) async throws -> [[String?]] {
  var logger = Logger(label: "postgres-admin")
  logger.logLevel = .critical
  let backend = try PostgresBackend(url: url, connections: 1, logger: logger)
  return try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask { await backend.run() }
    defer { group.cancelAll() }
    var rows: [[String?]] = []
    for statement in statements {
      rows = []
      for try await row in try await backend.client.query(PostgresQuery(unsafeSQL: statement), logger: logger) {
        rows.append(try row.map { try $0.decode(String?.self) })
      }
    }
    return rows
  }
}
