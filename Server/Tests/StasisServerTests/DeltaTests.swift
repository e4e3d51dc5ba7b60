import Crypto
import Foundation
import Stasis
import StasisDelta
import StasisServer
import StasisTesting
import Testing

@testable import ServerTestSupport

/// Cost follows change on the server: deltas up and down, resumable uploads, revisions stored
/// as deltas, and every kept revision read back byte for byte. On both backends, through the
/// server's router in this process (HummingbirdTesting's router mode).
@Suite("Deltas: uploads, downloads and storage")
struct DeltaTests {
  /// A city of 100,000 agents (1.6 MB) and its next `count - 1` ticks, each moving 1%.
  static func cities(_ count: Int, agents: Int = 100_000) throws -> [[UInt8]] {
    var city = SyntheticCity(agents: agents, side: 64, ledger: 100, seed: 1)
    var files = [try city.file()]
    for tick in 1..<count {
      city.tick(moving: 0.01, seed: UInt64(tick))
      files.append(try city.file(frame: Int64(tick)))
    }
    return files
  }

  static let files = try! cities(10)

  @Test(
    "ten revisions of a 1.6 MB city, each 1% changed, take at most 1.5 files, and each reads back exactly",
    arguments: Backend.allCases)
  func storedAsDeltas(_ backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      for (index, file) in Self.files.enumerated() {
        let reply = try await client.put(
          "city", file, ifMatch: index == 0 ? nil : Int64(index), create: index == 0)
        #expect(reply.status == 201, "\(reply.text)")
      }
      let list = try await client.send(.GET, "/v1/slots/city/revisions")
      let stored = try #require(list.json["storedBytes"] as? Int)
      #expect(Double(stored) <= 1.5 * Double(Self.files[0].count), "\(stored) bytes stored for 10 revisions")
      for (index, file) in Self.files.enumerated() {
        let reply = try await client.send(.GET, "/v1/slots/city/revisions/\(index + 1)")
        #expect(reply.status == 200 && sha256(reply.body) == sha256(file), "revision \(index + 1)")
      }
    }
  }

  @Test(
    "a delta upload is rebuilt, checked and stored; the file reads back with the device's SHA-256",
    arguments: Backend.allCases)
  func deltaUpload(_ backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      #expect(try await client.put("city", Self.files[0], create: true).status == 201)
      let delta = SaveDelta.make(from: Self.files[0], to: Self.files[1])
      #expect(delta.count < Self.files[1].count / 50)

      // A Repr-Digest that is not the rebuilt file's: refused, nothing stored.
      var wrong = try await client.upload("city", delta, base: 1, deltaBase: 1, digest: Self.files[0])
      #expect(wrong.status == 400, "\(wrong.text)")
      // A damaged delta: refused with the delta's own error.
      var damaged = delta
      damaged[damaged.count / 2] ^= 1
      wrong = try await client.upload("city", damaged, base: 1, deltaBase: 1, digest: Self.files[1])
      #expect(wrong.status == 400 && wrong.text.contains("delta"), "\(wrong.text)")
      // Made against other bytes than the revision it names (the device's copy was edited):
      // 409, send the whole file, as for a base the server no longer keeps.
      let otherBase = SaveDelta.make(from: Self.files[2], to: Self.files[1])
      wrong = try await client.upload("city", otherBase, base: 1, deltaBase: 1, digest: Self.files[1])
      #expect(wrong.status == 409 && wrong.text.contains("send the whole file"), "\(wrong.text)")
      // Against a revision the slot does not have: 409, send the whole file.
      wrong = try await client.upload("city", delta, base: 1, deltaBase: 7, digest: Self.files[1])
      #expect(wrong.status == 409, "\(wrong.text)")
      // A delta on a stale head: 412, like any upload.
      wrong = try await client.upload("city", delta, base: 5, deltaBase: 1, digest: Self.files[1])
      #expect(wrong.status == 412, "\(wrong.text)")

      let created = try await client.upload("city", delta, base: 1, deltaBase: 1, digest: Self.files[1])
      #expect(created.status == 201, "\(created.text)")
      #expect(created.json["sha256"] as? String == sha256(Self.files[1]))
      let head = try await client.send(.GET, "/v1/slots/city")
      #expect(head.body == Self.files[1])
    }
  }

  @Test(
    "an upload cut part-way resumes where the server's bytes end, resending only the cut part",
    arguments: Backend.allCases)
  func resumable(_ backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      let file = Self.files[2]
      let created = try await client.send(
        .POST, "/v1/slots/city/uploads",
        headers: [
          ("If-None-Match", "*"), ("Upload-Complete", "?0"), ("Upload-Length", "\(file.count)"),
          ("Content-Type", "application/vnd.stasis"),
        ])
      #expect(created.status == 201, "\(created.text)")
      let location = try #require(created.header("Location"))
      #expect(created.header("Upload-Offset") == "0")
      let part = 256 * 1024
      // The first part arrives; the second is "cut" (never stored): HEAD says where to resume.
      var reply = try await client.send(
        .PATCH, location, headers: [("Upload-Offset", "0"), ("Upload-Complete", "?0")], raw: Array(file[0..<part]))
      #expect(reply.status == 204 && reply.header("Upload-Offset") == "\(part)", "\(reply.text)")
      reply = try await client.send(.HEAD, location)
      #expect(reply.status == 204 && reply.header("Upload-Offset") == "\(part)")
      #expect(reply.header("Upload-Length") == "\(file.count)")
      // A part at the wrong offset: 409, with the offset to use.
      reply = try await client.send(
        .PATCH, location, headers: [("Upload-Offset", "0"), ("Upload-Complete", "?0")], raw: Array(file[0..<part]))
      #expect(reply.status == 409 && reply.header("Upload-Offset") == "\(part)", "\(reply.text)")
      // The rest, in one last part.
      reply = try await client.send(
        .PATCH, location, headers: [("Upload-Offset", "\(part)"), ("Upload-Complete", "?1")],
        raw: Array(file[part...]))
      #expect(reply.status == 201, "\(reply.text)")
      #expect(try await client.send(.GET, "/v1/slots/city").body == file)
      // Finished: the upload is gone.
      #expect(try await client.send(.HEAD, location).status == 404)
    }
  }

  @Test(
    "a download on return is a delta from the revision the device holds (226 IM Used)",
    arguments: Backend.allCases)
  func deltaDownload(_ backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      #expect(try await client.put("city", Self.files[0], create: true).status == 201)
      #expect(try await client.put("city", Self.files[1], ifMatch: 1).status == 201)
      let reply = try await client.send(
        .GET, "/v1/slots/city", headers: [("If-None-Match", "\"1\""), ("A-IM", "vnd.stasis.delta")])
      #expect(reply.status == 226, "\(reply.text)")
      #expect(reply.header("Delta-Base") == "\"1\"" && reply.header("IM") == "vnd.stasis.delta")
      #expect(reply.header("ETag") == "\"2\"")
      #expect(reply.body.count < Self.files[1].count / 50)
      #expect(try SaveDelta.apply(reply.body, to: Self.files[0]) == Self.files[1])
      // Without A-IM, the whole file, as before.
      let whole = try await client.send(.GET, "/v1/slots/city", headers: [("If-None-Match", "\"1\"")])
      #expect(whole.status == 200 && whole.body == Self.files[1])
    }
  }

  @Test(
    "pruning, a kept loser and a discard leave every kept revision readable; an upload's pinned base survives",
    arguments: Backend.allCases)
  func collection(_ backend: Backend) async throws {
    try await RouterServer.test(try Database(backend), options: ServerOptions(keepRevisions: 2)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      #expect(try await client.put("city", Self.files[0], create: true).status == 201)
      #expect(try await client.put("city", Self.files[1], ifMatch: 1).status == 201)
      #expect(try await client.put("city", Self.files[2], ifMatch: 2).status == 201)
      // r4 resolves a conflict that r3 lost: r3 is kept until discarded, whatever is pruned.
      var reply = try await client.send(
        .PUT, "/v1/slots/city", headers: [("If-Match", "\"3\""), ("X-Stasis-Conflict-Loser", "\"3\"")],
        body: Self.files[3])
      #expect(reply.status == 201, "\(reply.text)")
      for index in 4..<8 {
        #expect(try await client.put("city", Self.files[index], ifMatch: Int64(index)).status == 201)
      }
      let kept = try await client.send(.GET, "/v1/slots/city/revisions")
      let numbers = (kept.json["revisions"] as? [[String: Any]] ?? []).compactMap { $0["revision"] as? Int }
      #expect(numbers == [8, 7, 3])
      for revision in numbers {
        reply = try await client.send(.GET, "/v1/slots/city/revisions/\(revision)")
        #expect(sha256(reply.body) == sha256(Self.files[revision - 1]), "revision \(revision)")
      }
    }
  }

  @Test(
    "an upload in progress pins its delta's base: discarding that revision does not take its bytes",
    arguments: Backend.allCases)
  func pinnedBase(_ backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      // Small saves are stored whole: nothing but the upload needs revision 1's piece.
      let files = DemoSaves.small
      #expect(try await client.put("autosave", files[0], create: true).status == 201)
      #expect(try await client.put("autosave", files[1], ifMatch: 1).status == 201)
      let delta = SaveDelta.make(from: files[0], to: files[2])
      let created = try await client.send(
        .POST, "/v1/slots/autosave/uploads",
        headers: [
          ("If-Match", "\"2\""), ("Upload-Complete", "?0"), ("Upload-Length", "\(delta.count)"),
          ("Content-Type", "application/vnd.stasis.delta"), ("X-Stasis-Delta-Base", "\"1\""),
        ])
      #expect(created.status == 201, "\(created.text)")
      #expect(try await client.send(.DELETE, "/v1/slots/autosave/revisions/1").status == 204)
      let before = try #require(try await client.send(.GET, "/v1/slots/autosave/revisions").json["storedBytes"] as? Int)
      #expect(before >= files[0].count + files[1].count, "revision 1's piece is still stored: \(before) bytes")
      let reply = try await client.send(
        .PATCH, try #require(created.header("Location")), headers: [("Upload-Offset", "0"), ("Upload-Complete", "?1")],
        raw: delta)
      #expect(reply.status == 201, "\(reply.text)")
      #expect(try await client.send(.GET, "/v1/slots/autosave").body == files[2])
      // Finished, the upload lets go: the next upload collects revision 1's piece.
      #expect(try await client.put("autosave", files[3], ifMatch: 3).status == 201)
      let after = try #require(try await client.send(.GET, "/v1/slots/autosave/revisions").json["storedBytes"] as? Int)
      #expect(after == files[1].count + files[2].count + files[3].count)
    }
  }
}

extension Client {
  /// `POST /v1/slots/{slot}/uploads` with the whole body at once: a delta on `deltaBase`.
  func upload(_ slot: String, _ delta: [UInt8], base: Int64, deltaBase: Int64, digest file: [UInt8]) async throws
    -> Reply
  {
    let digest = Data(SHA256.hash(data: file)).base64EncodedString()
    return try await send(
      .POST, "/v1/slots/\(slot)/uploads",
      headers: [
        ("If-Match", "\"\(base)\""), ("Upload-Complete", "?1"), ("Upload-Length", "\(delta.count)"),
        ("Content-Type", "application/vnd.stasis.delta"), ("X-Stasis-Delta-Base", "\"\(deltaBase)\""),
        ("Repr-Digest", "sha-256=:\(digest):"),
      ], raw: delta)
  }
}

/// Two servers on one PostgreSQL: one collects (its uploads prune and collect) while the other
/// takes resumable delta uploads whose bases it pinned. Live: two `stasis-server` processes.
@Suite("Deltas: two servers, one PostgreSQL")
struct TwoServerCollectionTests {
  @Test("collecting on one server while the other takes pinned uploads: no base lost, every kept revision reads back")
  func collectWhileUploading() async throws {
    let database = try Database(.postgres)
    let player = try database.addPlayer()
    let collecting = try ServerProcess(database, ["--keep-revisions", "2"])
    defer { collecting.stop() }
    let uploading = try ServerProcess(database, ["--keep-revisions", "2"])
    defer { uploading.stop() }
    let one = Client(base: collecting.base, token: player.token)
    let two = Client(base: uploading.base, token: player.token)
    var city = SyntheticCity(agents: 20_000, side: 32, ledger: 10, seed: 1)
    #expect(try await one.put("city", try city.file(), create: true).status == 201)
    let files = try (0..<60).map { tick in
      city.tick(moving: 0.01, seed: UInt64(tick + 2))
      return try city.file(frame: Int64(tick + 1))
    }

    async let collected: [Int] = {
      var statuses: [Int] = []
      for file in files[0..<30] {
        let head = try await one.send(.GET, "/v1/slots/city")
        let revision = Int64(head.header("X-Stasis-Revision") ?? "") ?? 0
        statuses.append(try await one.put("city", file, ifMatch: revision).status)
      }
      return statuses
    }()
    async let uploaded: [Int] = {
      var statuses: [Int] = []
      for file in files[30..<60] {
        let head = try await two.send(.GET, "/v1/slots/city")
        let revision = try #require(head.header("X-Stasis-Revision"))
        let delta = SaveDelta.make(from: head.body, to: file)
        let created = try await two.send(
          .POST, "/v1/slots/city/uploads",
          headers: [
            ("If-Match", "\"\(revision)\""), ("Upload-Complete", "?0"), ("Upload-Length", "\(delta.count)"),
            ("Content-Type", "application/vnd.stasis.delta"), ("X-Stasis-Delta-Base", "\"\(revision)\""),
          ])
        guard created.status == 201, let location = created.header("Location") else {
          statuses.append(created.status)  // 412: the other server moved the head first
          continue
        }
        var offset = 0
        var answer = 0
        while offset < delta.count {
          let end = min(offset + 4096, delta.count)
          let reply = try await two.send(
            .PATCH, location,
            headers: [("Upload-Offset", "\(offset)"), ("Upload-Complete", end == delta.count ? "?1" : "?0")],
            raw: Array(delta[offset..<end]))
          answer = reply.status
          offset = end
        }
        statuses.append(answer)
      }
      return statuses
    }()
    let (first, second) = try await (collected, uploaded)
    // A pinned base is never collected: a stale upload is a 412, never a 409 (base gone) or a 5xx.
    #expect((first + second).allSatisfy { $0 == 201 || $0 == 412 }, "\(first) \(second)")
    #expect(first.contains(201) && second.contains(201), "both servers stored revisions: \(first) \(second)")
    let list = try await one.send(.GET, "/v1/slots/city/revisions")
    let kept = (list.json["revisions"] as? [[String: Any]] ?? [])
    #expect(kept.count == 2)
    for revision in kept {
      let number = try #require(revision["revision"] as? Int)
      for client in [one, two] {
        let file = try await client.send(.GET, "/v1/slots/city/revisions/\(number)")
        #expect(sha256(file.body) == revision["sha256"] as? String, "r\(number) reads back")
      }
    }
  }
}
