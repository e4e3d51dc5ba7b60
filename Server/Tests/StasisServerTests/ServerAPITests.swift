import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Stasis
import StasisServer
import Testing

@testable import ServerTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The v1 API on both backends: its contract through the server's real router in this process
/// (HummingbirdTesting's router mode); a deadline, a process's log and its exit against a
/// running `stasis-server`.
@Suite("stasis-server: the v1 API", .serialized)
struct ServerAPITests {
  @Test(
    "create, read, update, conflict, list, delete: the contract's codes, headers and JSON keys",
    arguments: Backend.allCases)
  func roundTrip(backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      let (first, second) = (DemoSaves.small[0], DemoSaves.small[1])

      #expect(try await client.put("autosave", first).status == 428, "no precondition")
      let created = try await client.put("autosave", first, create: true)
      #expect(created.status == 201)
      #expect(created.header("ETag") == "\"1\"")
      #expect(Set(created.json.keys) == ["slot", "revision", "baseRevision", "parent", "bytes", "sha256"])
      #expect(created.json["revision"] as? Int == 1)
      #expect(created.json["baseRevision"] is NSNull)
      #expect(created.json["bytes"] as? Int == first.count)
      #expect(created.json["sha256"] as? String == sha256(first))

      let head = try await client.send(.GET, "/v1/slots/autosave")
      #expect(head.status == 200)
      #expect(head.body == first, "byte for byte")
      #expect(head.header("ETag") == "\"1\"")
      #expect(try await client.send(.GET, "/v1/slots/autosave", headers: [("If-None-Match", "\"1\"")]).status == 304)

      let again = try await client.put("autosave", second, create: true)
      #expect(again.status == 412, "If-None-Match: * on a slot that exists")
      #expect((again.json["head"] as? [String: Any])?["revision"] as? Int == 1)

      let updated = try await client.put("autosave", second, ifMatch: 1)
      #expect(updated.status == 201)
      #expect(updated.header("ETag") == "\"2\"")
      #expect(updated.json["baseRevision"] as? Int == 1)

      let stale = try await client.put("autosave", first, ifMatch: 1)
      #expect(stale.status == 412)
      #expect(stale.json["error"] is String)
      let staleHead = try #require(stale.json["head"] as? [String: Any])
      #expect(staleHead["revision"] as? Int == 2)
      #expect(staleHead["sha256"] as? String == sha256(second))

      let revisions = try await client.send(.GET, "/v1/slots/autosave/revisions")
      let list = try #require(revisions.json["revisions"] as? [[String: Any]])
      #expect(list.map { $0["revision"] as? Int } == [2, 1], "newest first")
      for key in ["revision", "baseRevision", "bytes", "uploadedAt", "device", "sha256", "game", "build", "schema"] {
        #expect(list[0][key] != nil, "revisions carry \(key)")
      }
      #expect(list[0]["game"] as? String == "stasis-demo")
      #expect((list[0]["summary"] as? [String: Any])?["level"] as? Int == 1, "the game's own summary, from the header")
      #expect(try await client.send(.GET, "/v1/slots/autosave/revisions/1").body == first)
      #expect(try await client.send(.GET, "/v1/slots/autosave/revisions/7").status == 404)
      #expect(try await client.send(.GET, "/v1/slots/autosave/revisions/x").status == 400)

      let slots = try await client.send(.GET, "/v1/slots")
      let slotList = try #require(slots.json["slots"] as? [[String: Any]])
      #expect(slotList.count == 1)
      for key in ["slot", "revision", "bytes", "uploadedAt", "device"] { #expect(slotList[0][key] != nil) }
      #expect(slotList[0]["revision"] as? Int == 2)

      #expect(try await client.send(.GET, "/v1/slots/nothing").status == 404)
      #expect(try await client.put("nothing", first, ifMatch: 1).status == 404)
      #expect(try await client.send(.DELETE, "/v1/slots/autosave").status == 428)
      #expect(try await client.send(.DELETE, "/v1/slots/autosave", headers: [("If-Match", "\"1\"")]).status == 412)
      #expect(try await client.send(.DELETE, "/v1/slots/autosave", headers: [("If-Match", "\"2\"")]).status == 204)
      #expect(try await client.send(.GET, "/v1/slots/autosave").status == 404)
      #expect(try await client.send(.GET, "/v1/slots/autosave/revisions").status == 404)
      let recreated = try await client.put("autosave", first, create: true)
      #expect(recreated.json["revision"] as? Int == 3, "a revision number is never reused, even after a delete")
    }
  }

  @Test(
    "PostgreSQL holds no upload rule of its own: a start drops v2 and v3, keeps the previous version's v4 for servers still on it, and adds the two steps the Swift rule runs between"
  )
  func oneUploadFunction() async throws {
    let url = try #require(try Database(.postgres).postgresURL)
    func psql(_ sql: String) throws -> String {
      let result = try run("/usr/bin/env", ["psql", url, "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-c", sql])
      guard result.status == 0 else { throw ServerTestError("psql: \(result.err)") }
      return result.out
    }
    // What a database an older server migrated holds: its functions, by their arguments.
    let older = [
      "stasis_put_v2(BIGINT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, BIGINT, TEXT, BIGINT, TEXT, TEXT, TEXT, BIGINT, "
        + "BIGINT, DOUBLE PRECISION, DOUBLE PRECISION, TEXT, BYTEA, BIGINT)",
      "stasis_put_v3(BIGINT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, BIGINT, TEXT, BIGINT, TEXT, TEXT, TEXT, BIGINT, "
        + "BIGINT, DOUBLE PRECISION, DOUBLE PRECISION, TEXT, BYTEA, BIGINT, BIGINT)",
    ]
    let previous = "stasis_put_v4(BIGINT)"  // the version before's rule: its arguments do not matter here
    for function in older + [previous] {
      _ = try psql("CREATE OR REPLACE FUNCTION \(function) RETURNS void LANGUAGE sql AS 'SELECT 1'")
    }
    // An older server's database has not recorded this version's step of the upload functions.
    _ = try psql(
      "DO $$ BEGIN IF to_regclass('stasis_migrations') IS NOT NULL THEN "
        + "DELETE FROM stasis_migrations WHERE name = 'the upload functions'; END IF; END $$")
    try await RouterServer.test(try Database(.postgres)) { _ in }  // a start: its migration
    let left = try psql(
      "SELECT DISTINCT proname FROM pg_proc WHERE proname LIKE 'stasis\\_put\\_%' OR proname LIKE 'stasis\\_upload\\_%' "
        + "ORDER BY proname")
    // find_v1 stays one version beside find_v2 (which sets statement_timeout to 0 before COMMIT).
    #expect(
      left == "stasis_put_v4\nstasis_upload_find_v1\nstasis_upload_find_v2\nstasis_upload_store_v1\n",
      "the upload functions left: \(left)")
    _ = try psql("DROP FUNCTION \(previous)")
  }

  @Test("a slot keeps its newest N revisions; older ones go in the same transaction", arguments: Backend.allCases)
  func pruning(backend: Backend) async throws {
    try await RouterServer.test(try Database(backend), options: ServerOptions(keepRevisions: 3)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      var head: Int64 = 0
      for index in 0..<5 {
        let reply =
          head == 0
          ? try await client.put("slot-1", DemoSaves.small[index % 4], create: true)
          : try await client.put("slot-1", DemoSaves.small[index % 4], ifMatch: head)
        #expect(reply.status == 201)
        head = Int64(reply.json["revision"] as? Int ?? 0)
      }
      let list = try await client.send(.GET, "/v1/slots/slot-1/revisions").json["revisions"] as? [[String: Any]]
      #expect(list?.map { $0["revision"] as? Int } == [5, 4, 3])
      #expect(try await client.send(.GET, "/v1/slots/slot-1/revisions/2").status == 404)
    }
  }

  @Test(
    "bad uploads are refused with a JSON error naming what is wrong, and nothing is stored", arguments: Backend.allCases
  )
  func badInput(backend: Backend) async throws {
    let options = ServerOptions(limits: PlayerLimits(bodyBytes: 100000))
    try await RouterServer.test(try Database(backend), options: options) { server in
      let client = server.client(token: try await server.addPlayer().token)
      let good = DemoSaves.small[0]

      let truncated = try await client.put("a", Array(good.prefix(good.count - 10)), create: true)
      #expect(truncated.status == 400)
      #expect((truncated.json["error"] as? String)?.hasPrefix("truncated in trailer") == true, "\(truncated.text)")
      var flipped = good
      flipped[good.count / 2] ^= 0x10
      let flippedReply = try await client.put("a", flipped, create: true)
      #expect(flippedReply.status == 400)
      #expect((flippedReply.json["error"] as? String)?.contains("checksum mismatch in section") == true)
      let notASave = try await client.put("a", Array("{\"score\": 1}".utf8), create: true)
      #expect(notASave.status == 400)
      #expect((notASave.json["error"] as? String)?.contains("not a Stasis save") == true)

      let large = try await client.put("a", DemoSaves.large, create: true)
      #expect(large.status == 413, "over --max-body-bytes, refused from its Content-Length")
      #expect(large.json["error"] is String)

      for slot in ["..", "%2E%2E", "a%2Fb", "a%00b", String(repeating: "x", count: 65)] {
        let reply = try await client.put(slot, good, create: true)
        #expect(reply.status == 400, "slot \(slot)")
        #expect((reply.json["error"] as? String)?.contains("slot name") == true, "slot \(slot): \(reply.text)")
      }
      for tag in ["abc", "\"abc\"", "\"-1\"", "3", "\"+1\"", "\"01\""] {
        let reply = try await client.send(.PUT, "/v1/slots/a", headers: [("If-Match", tag)], body: good)
        #expect(reply.status == 400, "If-Match: \(tag)")
      }
      let padded = try await client.send(
        .GET, "/v1/slots", headers: [("X-Padding", String(repeating: "a", count: 100_000))])
      #expect(padded.status == 431)
      #expect(padded.json["error"] is String)

      let slots = try await client.send(.GET, "/v1/slots").json["slots"] as? [Any]
      #expect(slots?.isEmpty == true, "nothing was stored")
    }
  }

  // Live: the request deadline lives in the HTTP/1 channel's pipeline, under the router.
  @Test(
    "an upload whose body never finishes is answered 408 at the deadline, and nothing is stored",
    arguments: Backend.allCases)
  func stalledUpload(backend: Backend) async throws {
    let database = try Database(backend)
    let player = try database.addPlayer()
    let good = DemoSaves.small[0]
    // A body that never finishes: the server answers 408 when its time is up and stores nothing.
    let head = """
      PUT /v1/slots/slow HTTP/1.1\r
      Host: 127.0.0.1\r
      Authorization: Bearer \(player.token)\r
      If-None-Match: *\r
      Content-Type: application/vnd.stasis\r
      Content-Length: \(good.count)\r
      \r

      """
    let stalling = try ServerProcess(database, ["--request-timeout", "0.5"])
    defer { stalling.stop() }
    let slow = try rawExchange(port: stalling.port, Array(head.utf8) + good.prefix(100))
    #expect(slow.hasPrefix("HTTP/1.1 408"), "\(slow.prefix(200))")
    #expect(slow.contains("\"error\""))
    // On a connection of its own, sent whole at once: a deadline this short would close an
    // HTTP client's idle keep-alive connection, racing its next request.
    let slots = try RawConnection(port: stalling.port).exchange(requestHead("GET", "/v1/slots", token: player.token))
    #expect(slots?.status == 200)
    #expect((slots?.json["slots"] as? [Any])?.isEmpty == true, "nothing was stored")
  }

  @Test("tokens: missing, wrong, revoked and another player's; nothing leaks", arguments: Backend.allCases)
  func tokens(backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let database = server.database
      let alice = try await server.addPlayer()
      let bob = try await server.addPlayer()
      let asAlice = server.client(token: alice.token)
      let asBob = server.client(token: bob.token)
      #expect(try await asAlice.put("secret", DemoSaves.small[0], create: true).status == 201)

      let missing = try await server.client().send(.GET, "/v1/slots")
      #expect(missing.status == 401)
      #expect(missing.header("WWW-Authenticate") == "Bearer")
      let wrong = try await server.client(token: alice.token + "x").send(.GET, "/v1/slots/secret")
      #expect(wrong.status == 401)
      #expect(!wrong.text.contains(alice.token))

      #expect(try await asBob.send(.GET, "/v1/slots/secret").status == 404, "404, never 403")
      #expect(try await asBob.send(.GET, "/v1/slots/secret/revisions").status == 404)
      #expect(try await asBob.put("secret", DemoSaves.small[1], ifMatch: 1).status == 404)
      #expect(try await asBob.send(.DELETE, "/v1/slots/secret", headers: [("If-Match", "\"1\"")]).status == 404)
      #expect((try await asBob.send(.GET, "/v1/slots").json["slots"] as? [Any])?.isEmpty == true)
      #expect(try await asBob.put("secret", DemoSaves.small[1], create: true).status == 201, "a slot of bob's own")
      #expect(try await asAlice.send(.GET, "/v1/slots/secret").body == DemoSaves.small[0], "alice's is untouched")

      let revoke = try run(serverBinary, ["players", "revoke", alice.name] + database.arguments)
      #expect(revoke.status == 0)
      #expect(try await asAlice.send(.GET, "/v1/slots").status == 401, "a revoked token opens nothing")
      #expect(try await asBob.send(.GET, "/v1/slots").status == 200)

      // The router's and the backend's log, at debug (`operations` searches a process's whole log).
      let log = server.log.text
      #expect(log.contains("GET /v1/slots 401"), "the request log is captured")
      #expect(!log.contains(alice.token) && !log.contains(bob.token), "tokens never reach the log")
    }
  }

  @Test("per-player limits: slots and bytes", arguments: Backend.allCases)
  func limits(backend: Backend) async throws {
    let small = DemoSaves.small[0]
    let options = ServerOptions(limits: PlayerLimits(totalBytes: Int64(small.count * 3), slots: 2))
    try await RouterServer.test(try Database(backend), options: options) { server in
      let client = server.client(token: try await server.addPlayer().token)
      #expect(try await client.put("one", small, create: true).status == 201)
      #expect(try await client.put("two", small, create: true).status == 201)
      let third = try await client.put("three", small, create: true)
      #expect(third.status == 403)
      #expect((third.json["error"] as? String)?.contains("the limit is 2") == true)
      #expect(try await client.put("one", small, ifMatch: 1).status == 201)
      let over = try await client.put("two", small, ifMatch: 1)
      #expect(over.status == 413, "a fourth copy passes the player's bytes")
      #expect((over.json["error"] as? String)?.contains("limit") == true)
    }
  }

  // Live: the exit on SIGTERM, the process's log and the Prometheus registry `serve` sets up.
  @Test("/health, /metrics, and a clean exit on SIGTERM", arguments: Backend.allCases)
  func operations(backend: Backend) async throws {
    let database = try Database(backend)
    let player = try database.addPlayer()
    let server = try ServerProcess(database)
    let client = Client(base: server.base, token: player.token)
    #expect(try await client.put("m", DemoSaves.small[0], create: true).status == 201)
    // (Other bytes: the same ones again would be a retry, answered with revision 1.)
    #expect(try await client.put("m", DemoSaves.small[1], create: true).status == 412)
    let health = try await Client(base: server.base).send(.GET, "/health")
    #expect(health.status == 200)
    #expect(health.json["status"] as? String == "ok")
    let metrics = try await Client(base: server.base).send(.GET, "/metrics")
    #expect(metrics.status == 200)
    #expect(metrics.text.contains("stasis_uploads_total 1"))
    #expect(metrics.text.contains("stasis_conflicts_total 1"))
    #expect(server.stop(SIGTERM) == 0, "graceful shutdown")
    let log = server.log
    #expect(log.contains("PUT /v1/slots/m 201"), "one line per request")
    #expect(log.contains("PUT /v1/slots/m 412"))
    #expect(!log.contains(player.token), "a token never reaches the log")
  }

  @Test("players add prints one token line and refuses a name in use; list shows who is revoked")
  func playersCommands() throws {
    let database = try Database(.sqlite)
    let added = try database.addPlayer("carol")
    #expect(added.token.count == 43)
    let again = try run(serverBinary, ["players", "add", "carol"] + database.arguments)
    #expect(again.status == 1)
    #expect(again.err == "error: a player named 'carol' exists\n")
    _ = try database.addPlayer("dave")
    #expect(try run(serverBinary, ["players", "revoke", "dave"] + database.arguments).status == 0)
    #expect(try run(serverBinary, ["players", "revoke", "erin"] + database.arguments).status == 1)
    let list = try run(serverBinary, ["players", "list"] + database.arguments)
    #expect(list.out == "carol\tactive\ndave\trevoked\n")
  }
}
