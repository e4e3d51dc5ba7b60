import Foundation
import Logging
import PostgresNIO
import StasisServer
import Testing

@testable import ServerTestSupport

/// The server while its database moves (docs/RELIABILITY.md, "Failover"): a write that did not
/// commit is answered `503` with `Retry-After`, never `201`; a connection that died is dropped
/// and the transaction run again on another; an upload whose answer was lost, sent again, is
/// answered with the revision stored, never a second one. The cluster's own test (Patroni,
/// HAProxy, three nodes, faults under load) is `stasis-load failover`, which scripts/test.sh runs.
@Suite("stasis-server: failover", .serialized)
struct FailoverTests {
  @Test(
    "an upload sent again after its answer was lost gets the revision stored, not a second one",
    arguments: Backend.allCases)
  func retryOfAStoredUpload(backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      let (first, second, third) = (DemoSaves.small[0], DemoSaves.small[1], DemoSaves.small[2])
      let created = try await client.put("autosave", first, create: true)
      #expect(created.status == 201)
      let again = try await client.put("autosave", first, create: true)
      #expect(again.status == 201, "the same create, sent again: \(again.text)")
      #expect(again.header("ETag") == "\"1\"")
      let stored = try await client.put("autosave", second, ifMatch: 1)
      #expect(stored.status == 201)
      let retried = try await client.put("autosave", second, ifMatch: 1)
      #expect(retried.status == 201, "the retry: \(retried.text)")
      #expect(retried.header("ETag") == "\"2\"")
      #expect(retried.json["revision"] as? Int == 2)
      #expect(retried.json["sha256"] as? String == sha256(second))
      let list = try await client.send(.GET, "/v1/slots/autosave/revisions")
      #expect((list.json["revisions"] as? [[String: Any]])?.count == 2, "two uploads stored, not three")
      // Other bytes on that base, or the same bytes on another base, are a conflict as before.
      #expect(try await client.put("autosave", third, ifMatch: 1).status == 412)
      #expect(try await client.put("autosave", second, create: true).status == 412)
      #expect(try await client.put("autosave", first, ifMatch: 1).status == 412)
    }
  }

  @Test("a primary that became read-only (a demoted primary): 503 with Retry-After, nothing stored; back, 201")
  func readOnlyDatabase() async throws {
    let url = try #require(Backend.postgresURL, "STASIS_TEST_POSTGRES_URL is not set: run scripts/test.sh")
    let name = "stasis_failover_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
    try await admin(["CREATE DATABASE \(name)"], on: url)
    var parts = try #require(URLComponents(string: url))
    parts.path = "/" + name
    let own = try #require(parts.string)
    do {
      try await RouterServer.test(try Database(postgresURL: own)) { server in
        let client = server.client(token: try await server.addPlayer().token)
        #expect(try await client.put("autosave", DemoSaves.small[0], create: true).status == 201)
        // Every new connection read-only, and the server's connections cut: what a failover
        // does to a server whose proxy still sends it to the old primary.
        try await admin(
          [
            "ALTER DATABASE \(name) SET default_transaction_read_only = on",
            "SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity WHERE datname = '\(name)'",
          ], on: url)
        let refused = try await client.put("autosave", DemoSaves.small[1], ifMatch: 1)
        #expect(refused.status == 503, "\(refused.status): \(refused.text)")
        #expect(refused.header("Retry-After") == "1")
        #expect((refused.json["error"] as? String)?.contains("unavailable") == true)
        #expect(server.log.text.contains("the database is unavailable"))
        // Reads go on: at most a 503 (with Retry-After) while the pool replaces a connection the
        // cut closed, as a client retries it.
        var head = try await client.send(.GET, "/v1/slots/autosave")
        for _ in 0..<5 where head.status == 503 {
          #expect(head.header("Retry-After") == "1")
          head = try await client.send(.GET, "/v1/slots/autosave")
        }
        #expect(head.status == 200)
        #expect(head.header("ETag") == "\"1\"")
        // The primary back: connections cut again (the pool's are read-only), the same upload.
        try await admin(
          [
            "ALTER DATABASE \(name) RESET default_transaction_read_only",
            "SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity WHERE datname = '\(name)'",
          ], on: url)
        let stored = try await client.put("autosave", DemoSaves.small[1], ifMatch: 1)
        #expect(
          stored.status == 201, "the pool's dead connections dropped and the transaction run again: \(stored.text)")
        #expect(stored.header("ETag") == "\"2\"")
      }
    } catch {
      try? await admin(["DROP DATABASE IF EXISTS \(name) WITH (FORCE)"], on: url)
      throw error
    }
    try await admin(["DROP DATABASE IF EXISTS \(name) WITH (FORCE)"], on: url)
  }

  /// Runs `statements` on the database `url` names, on a connection of its own.
  private func admin(_ statements: [String], on url: String) async throws {
    var logger = Logger(label: "failover-tests")
    logger.logLevel = .critical
    let backend = try PostgresBackend(url: url, connections: 1, logger: logger)
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { await backend.run() }
      defer { group.cancelAll() }
      for statement in statements {
        for try await _ in try await backend.client.query(PostgresQuery(unsafeSQL: statement), logger: logger) {}
      }
    }
  }
}
