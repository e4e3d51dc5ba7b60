import Foundation
import Testing

@testable import ServerTestSupport

/// The studio console and the admin API, on both backends: in a real browser (Playwright and
/// Debian's Chromium, from `Tests/Browser/console_test.py`) against a running `stasis-server`,
/// and the admin API with staff keys through the server's router in this process
/// (HummingbirdTesting's router mode).
@Suite("stasis-server: the studio console and the admin API", .serialized)
struct ConsoleTests {
  /// The Python of the test environment scripts/test.sh makes (it has Playwright).
  static let python: String? = {
    let venv = repositoryRoot.appendingPathComponent(".venv-schemathesis/bin/python").path
    return FileManager.default.isExecutableFile(atPath: venv) ? venv : nil
  }()

  // Live: Chromium needs a socket, and the sign-in throttle goes by the peer's address.
  @Test(
    "support works a lost-progress ticket in Chromium; viewer, a desync bundle, CSRF, discard, sign-out, throttle",
    arguments: Backend.allCases)
  func browser(backend: Backend) async throws {
    let python = try #require(Self.python, "no .venv-schemathesis: scripts/test.sh makes it, with Playwright")
    let database = try Database(backend)
    let server = try ServerProcess(database)
    defer { server.stop() }
    let studio = try await StudioFixture(database) { Client(base: server.base, token: $0) }
    // A save as the demo writes it headless: no thumbnail section.
    let bare = FileManager.default.temporaryDirectory.appendingPathComponent("bare-\(UUID().uuidString).stasis")
    try Data(try DemoSaves.save(level: 1, steps: 400, seed: 3)).write(to: bare)
    defer { try? FileManager.default.removeItem(at: bare) }
    // A desync bundle the player's device sent (issue 45): the console lists it beside the slots.
    let (bundleBytes, bundle) = try DemoBundles.make(desyncAt: 100)
    let sent = try await Client(base: server.base, token: studio.player.token).send(
      .POST, "/v1/bundles", body: bundleBytes)
    #expect(sent.status == 201, "\(sent.text)")
    let field = try #require(bundle.report.differences.first?.prefix { $0 != ":" }, "the bundle names a field")
    // And a replay it recorded: listed beside them, to download.
    let replay = try DemoBundles.replay(ticks: 180)
    let putReplay = try await Client(base: server.base, token: studio.player.token).send(
      .PUT, "/v1/replays/autosave", body: replay)
    #expect(putReplay.status == 201, "\(putReplay.text)")
    var environment = [
      "CONSOLE_BUNDLE_ID": "\(sent.json["id"] as? Int ?? 0)", "CONSOLE_BUNDLE_SUMMARY": bundle.report.summary,
      "CONSOLE_BUNDLE_FIELD": String(field), "CONSOLE_BUNDLE_SHA256": sha256(bundleBytes),
      "CONSOLE_BUNDLE_GAME": bundle.game.name, "CONSOLE_REPLAY_SHA256": sha256(replay),
      "CONSOLE_REPLAY_ID": "\(putReplay.json["id"] as? Int ?? 0)",
      "CONSOLE_BASE": server.base, "CONSOLE_SLOT": studio.slot, "CONSOLE_PLAYER": studio.player.name,
      "CONSOLE_PLAYER_TOKEN": studio.player.token, "CONSOLE_PLAYER_ID": "\(studio.playerId)", "CONSOLE_RESTORE": "2",
      "CONSOLE_KEPT": "3", "CONSOLE_BARE_SAVE": bare.path,
    ]
    for (role, member) in studio.staff {
      environment["CONSOLE_\(role.uppercased())"] = "\(member.name):\(member.password)"
    }
    // STASIS_CONSOLE_SCREENSHOTS=docs/images refreshes the README's screenshots (SQLite's run).
    if backend == .sqlite, let folder = ProcessInfo.processInfo.environment["STASIS_CONSOLE_SCREENSHOTS"] {
      environment["CONSOLE_SCREENSHOTS"] = repositoryRoot.appendingPathComponent(folder).path
    }
    let script = packageRoot.appendingPathComponent("Tests/Browser/console_test.py").path
    let result = try run(python, [script], environment: environment)
    print("console_test.py (\(backend)):\n\(result.out)\(result.err.suffix(3000))")
    #expect(result.status == 0, "\(result.out.suffix(2000))\n\(result.err.suffix(3000))")
    #expect(result.out.contains("ok: a sign-in flood is answered 401, then 429"), "the script ran to its end")
  }

  @Test(
    "the admin API: roles, the conditional restore, undo, discard, tokens, the audit log", arguments: Backend.allCases)
  func adminAPI(backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let studio = try await StudioFixture(server.database) { server.client(token: $0) }
      func staff(_ role: String) -> Client { server.client(token: studio.staff[role]!.key) }
      let player = server.client(token: studio.player.token)
      let slotPath = "/v1/admin/players/\(studio.playerId)/slots/autosave"
      func json(_ object: [String: Any]) throws -> [UInt8] {
        [UInt8](try JSONSerialization.data(withJSONObject: object))
      }
      let contentType = [("Content-Type", "application/json")]

      // No key, a player's token, a wrong key: 401.
      #expect(try await server.client().send(.GET, "/v1/admin/me").status == 401)
      #expect(try await server.client(token: studio.player.token).send(.GET, "/v1/admin/me").status == 401)
      #expect(try await staff("viewer").send(.GET, "/v1/admin/me").json["role"] as? String == "viewer")

      // The history, newest first, with each revision's roles.
      let history = try await staff("viewer").send(.GET, "\(slotPath)/revisions").json
      let revisions = history["revisions"] as? [[String: Any]] ?? []
      #expect(revisions.map { $0["revision"] as? Int } == [5, 4, 3, 2, 1])
      #expect((revisions[2]["roles"] as? [String] ?? []).contains("kept loser: lost to r5"))
      #expect((revisions[0]["roles"] as? [String] ?? []).contains("head"))

      // The tree and the difference, as `stasis dump` and `stasis diff` print them.
      let tree = try await staff("viewer").send(.GET, "\(slotPath)/revisions/2/tree")
      #expect(tree.status == 200 && tree.text.contains("\"score\""))
      let diff = try await staff("viewer").send(.GET, "\(slotPath)/diff?from=2&to=5").json
      #expect((diff["count"] as? Int ?? 0) > 0)

      // A viewer may not restore; support may, with a reason, on the head it saw.
      let restoreBody = try json(["revision": 2, "head": 5, "reason": "ticket 1"])
      #expect(
        try await staff("viewer").send(.POST, "\(slotPath)/restore", headers: contentType, raw: restoreBody).status
          == 403)
      #expect(
        try await staff("support").send(
          .POST, "\(slotPath)/restore", headers: contentType, raw: try json(["revision": 2, "head": 5])
        ).status == 400, "a restore needs a reason")
      // A revision is a JSON integer: not a string, a fraction or a boolean.
      for bad in [
        #"{"revision": 2, "head": "5", "reason": "x"}"#, #"{"revision": 2, "head": 1.5, "reason": "x"}"#,
        #"{"revision": true, "head": 5, "reason": "x"}"#, #"{"revision": -2, "reason": "x"}"#, "[1]",
      ] {
        let reply = try await staff("support").send(
          .POST, "\(slotPath)/restore", headers: contentType, raw: Array(bad.utf8))
        #expect(reply.status == 400, "\(bad): \(reply.status) \(reply.text)")
      }
      // A device saves first: the restore on the head support saw is refused, and nothing is lost.
      let deviceSave = try StudioFixture.saveWithThumbnail(steps: 500)
      #expect(try await player.put("autosave", deviceSave, ifMatch: 5).status == 201)  // r6
      let stale = try await staff("support").send(.POST, "\(slotPath)/restore", headers: contentType, raw: restoreBody)
      #expect(stale.status == 412, "the restore races the device's upload through the same conditional write")
      let restored = try await staff("support").send(
        .POST, "\(slotPath)/restore", headers: contentType,
        raw: try json(["revision": 2, "head": 6, "reason": "ticket 1"]))
      #expect(restored.status == 201, "\(restored.text)")
      let entry = (restored.json["entry"] as? [String: Any])?["id"] as? Int ?? 0
      #expect((restored.json["revision"] as? [String: Any])?["revision"] as? Int == 7)
      #expect(try await player.send(.GET, "/v1/slots/autosave").body == studio.files[2], "the head is r2's bytes")
      // The head it replaced is kept: nothing a player reached is lost.
      let afterRestore =
        try await player.send(.GET, "/v1/slots/autosave/revisions").json["revisions"] as? [[String: Any]]
      #expect(afterRestore?.first { $0["revision"] as? Int == 6 }?["lostTo"] as? Int == 7)
      // A device on the old head cannot overwrite the restore.
      #expect(try await player.put("autosave", deviceSave, ifMatch: 6).status == 412)

      // Undo, once.
      let undo = try await staff("support").send(
        .POST, "/v1/admin/audit/\(entry)/undo", headers: contentType, raw: try json(["reason": "wrong revision"]))
      #expect(undo.status == 201, "\(undo.text)")
      #expect(try await player.send(.GET, "/v1/slots/autosave").body == deviceSave, "the head is r6's bytes again")
      let twice = try await staff("support").send(
        .POST, "/v1/admin/audit/\(entry)/undo", headers: contentType, raw: try json(["reason": "again"]))
      #expect(twice.status == 409)

      // Discard: an admin only, naming it.
      let discard = "\(slotPath)/revisions/3/discard"
      #expect(
        try await staff("support").send(
          .POST, discard, headers: contentType, raw: try json(["confirm": "autosave r3", "reason": "x"])
        ).status == 403)
      #expect(
        try await staff("admin").send(
          .POST, discard, headers: contentType, raw: try json(["confirm": "autosave r4", "reason": "x"])
        ).status == 400)
      #expect(
        try await staff("admin").send(
          .POST, "\(slotPath)/revisions/4/discard", headers: contentType,
          raw: try json(["confirm": "autosave r4", "reason": "x"])
        ).status == 404, "r4 is not kept: only a kept revision is discarded")
      #expect(
        try await staff("admin").send(
          .POST, discard, headers: contentType, raw: try json(["confirm": "autosave r3", "reason": "duplicate"])
        ).status == 200)
      #expect(try await player.send(.GET, "/v1/slots/autosave/revisions/3").status == 404)

      // Device tokens: issue one (its secret once), use it, list (no secret), revoke it.
      let issued = try await staff("support").send(
        .POST, "/v1/admin/players/\(studio.playerId)/tokens", headers: contentType,
        raw: try json(["label": "new phone", "reason": "ticket 2"]))
      #expect(issued.status == 201)
      let secret = issued.json["secret"] as? String ?? ""
      let tokenId = (issued.json["token"] as? [String: Any])?["id"] as? Int ?? 0
      #expect(try await server.client(token: secret).send(.GET, "/v1/slots").status == 200)
      let listed = try await staff("viewer").send(.GET, "/v1/admin/players/\(studio.playerId)/tokens")
      #expect((listed.json["tokens"] as? [[String: Any]])?.count == 2, "the first token and the new one")
      #expect(!listed.text.contains(secret) && !listed.text.contains(studio.player.token), "never a secret")
      #expect(
        try await staff("viewer").send(
          .POST, "/v1/admin/players/\(studio.playerId)/tokens/\(tokenId)/revoke", headers: contentType,
          raw: try json(["reason": "x"])
        ).status == 403)
      #expect(
        try await staff("support").send(
          .POST, "/v1/admin/players/\(studio.playerId)/tokens/\(tokenId)/revoke", headers: contentType,
          raw: try json(["reason": "lost phone"])
        ).status == 200)
      #expect(try await server.client(token: secret).send(.GET, "/v1/slots").status == 401)
      #expect(try await player.send(.GET, "/v1/slots").status == 200, "the other token still opens the saves")

      // The audit log: every change, who, and the heads; filtered by player and by staff.
      let log = try await staff("viewer").send(.GET, "/v1/admin/audit?player=\(studio.player.name)").json
      let entries = log["entries"] as? [[String: Any]] ?? []
      #expect(
        entries.compactMap { $0["action"] as? String }
          == ["revoke-token", "issue-token", "discard", "undo", "restore"])
      let restoreEntry = entries.first { $0["action"] as? String == "restore" }
      #expect(restoreEntry?["headBefore"] as? Int == 6 && restoreEntry?["headAfter"] as? Int == 7)
      #expect(restoreEntry?["undoneBy"] as? Int == entries.first { $0["action"] as? String == "undo" }?["id"] as? Int)
      #expect(restoreEntry?["staff"] as? String == studio.staff["support"]!.name)
      let byAdmin = try await staff("viewer").send(.GET, "/v1/admin/audit?staff=\(studio.staff["admin"]!.name)").json
      #expect((byAdmin["entries"] as? [[String: Any]])?.compactMap { $0["action"] as? String } == ["discard"])
    }
  }
}
