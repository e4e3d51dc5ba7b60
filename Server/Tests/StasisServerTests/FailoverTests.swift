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
    try await withOwnPostgresDatabase("stasis_failover") { own in
      let name = try #require(URLComponents(string: own)?.path.dropFirst()).description
      // Run from the shared database: terminating the own database's sessions ends them all.
      let main = try #require(Backend.postgresURL)
      try await RouterServer.test(try Database(postgresURL: own)) { server in
        let client = server.client(token: try await server.addPlayer().token)
        #expect(try await client.put("autosave", DemoSaves.small[0], create: true).status == 201)
        // Every new connection read-only, and the server's connections cut: what a failover
        // does to a server whose proxy still sends it to the old primary.
        try await postgresAdmin(
          [
            "ALTER DATABASE \(name) SET default_transaction_read_only = on",
            "SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity WHERE datname = '\(name)'",
          ], on: main)
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
        try await postgresAdmin(
          [
            "ALTER DATABASE \(name) RESET default_transaction_read_only",
            "SELECT pg_terminate_backend(pid)::text FROM pg_stat_activity WHERE datname = '\(name)'",
          ], on: main)
        let stored = try await client.put("autosave", DemoSaves.small[1], ifMatch: 1)
        #expect(
          stored.status == 201, "the pool's dead connections dropped and the transaction run again: \(stored.text)")
        #expect(stored.header("ETag") == "\"2\"")
      }
    }
  }
}
