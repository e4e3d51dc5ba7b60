import Foundation
import Stasis
import Testing

@testable import ServerTestSupport

#if canImport(Glibc)
  import Glibc
#endif

@Suite("stasis cloud and stasis-demo --cloud against a real stasis-server", .serialized)
struct CloudCommandTests {
  @Test("login, status, push, pull, a refused push, resolve --take merge, log, slots and discard")
  func commands() async throws {
    let database = try Database(.sqlite)
    let player = try database.addPlayer()
    let server = try ServerProcess(database)
    defer { server.stop() }
    let root = temporaryURL("stasis-cli")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let tokenFile = root.appendingPathComponent("alice.token").path
    try Data((player.token + "\n").utf8).write(to: URL(fileURLWithPath: tokenFile))
    let login = root.appendingPathComponent("config/cloud.json").path
    func stasis(_ arguments: String...) throws -> (status: Int32, out: String, err: String) {
      try run(product("stasis"), arguments.map { $0 == "$LOGIN" ? login : $0 })
    }

    let bad = root.appendingPathComponent("bad.token").path
    try Data("nope".utf8).write(to: URL(fileURLWithPath: bad))
    let refused = try stasis("cloud", "login", "--server", server.base, "--token-file", bad, "--login", "$LOGIN")
    #expect(refused.status == 1)
    #expect(refused.err.contains("the server refused the token"))
    #expect(!FileManager.default.fileExists(atPath: login), "a refused token is not stored")
    let loggedIn = try stasis(
      "cloud", "login", "--server", server.base, "--token-file", tokenFile, "--device", "laptop", "--login", "$LOGIN")
    #expect(loggedIn.status == 0, "\(loggedIn.err)")
    #expect(
      loggedIn.out == "logged in to \(server.base) as device 'laptop' (0 slots there); stored in \(login), mode 600\n")
    let mode = try FileManager.default.attributesOfItem(atPath: login)[.posixPermissions] as? Int
    #expect(mode == 0o600, "the token is readable by its owner only")
    #expect(!loggedIn.out.contains(player.token) && !loggedIn.err.contains(player.token))

    let a = root.appendingPathComponent("A").path
    let b = root.appendingPathComponent("B").path
    let storeA = SaveStore(directory: a, device: "A")
    let storeB = SaveStore(directory: b, device: "B")
    var state = PlayerState()
    try storeA.save(state, codec: playerCodec, slot: "autosave").wait()
    let ahead = try stasis("cloud", "status", "--saves", a, "--login", "$LOGIN")
    #expect(ahead.out.split(separator: "\n").last?.split(separator: " ").prefix(2) == ["autosave", "ahead"])
    let pushed = try stasis("cloud", "push", "autosave", "--saves", a, "--login", "$LOGIN")
    #expect(pushed.status == 0, "\(pushed.err)")
    #expect(pushed.out == "uploaded generation 1 as r1 (base none)\n")
    let pulled = try stasis("cloud", "pull", "autosave", "--saves", b, "--login", "$LOGIN")
    #expect(pulled.out == "fast-forwarded to r1 as generation 1\n")
    let synced = try stasis("cloud", "status", "autosave", "--saves", b, "--login", "$LOGIN", "--json")
    let status = try JSONSerialization.jsonObject(with: Data(synced.out.utf8)) as? [[String: Any]]
    #expect(status?.first?["state"] as? String == "synced")
    #expect(status?.first?["base"] as? Int == 1)

    state.score.highScore = 40
    state.volume = 0.1
    try storeA.save(state, codec: playerCodec, slot: "autosave").wait()
    #expect(try stasis("cloud", "push", "autosave", "--saves", a, "--login", "$LOGIN").status == 0)
    var other = PlayerState()
    other.score.highScore = 60
    other.inventory["map"] = 1
    try storeB.save(other, codec: playerCodec, slot: "autosave").wait()
    let conflicted = try stasis("cloud", "push", "autosave", "--saves", b, "--login", "$LOGIN")
    #expect(conflicted.status == 1, "a conflict is refused, never forced")
    #expect(conflicted.err.contains("conflict: the slot's head is revision 2, not 1"))
    let pulledConflict = try stasis("cloud", "pull", "autosave", "--saves", b, "--login", "$LOGIN")
    #expect(pulledConflict.status == 1)
    #expect(pulledConflict.err.contains("is in conflict: `stasis cloud resolve autosave"))
    let conflictStatus = try stasis("cloud", "status", "--saves", b, "--login", "$LOGIN")
    #expect(conflictStatus.out.contains("conflict"))
    // Declared, so the two sides combine: without declarations the merge keeps one whole side.
    let declarations = root.appendingPathComponent("merge.txt").path
    try "score.highScore = max\ninventory = union\nvolume = min\n".write(
      toFile: declarations, atomically: true, encoding: .utf8)
    let resolved = try stasis(
      "cloud", "resolve", "autosave", "--take", "merge", "--fallback", "recent", "--declarations", declarations,
      "--saves", b, "--login", "$LOGIN")
    #expect(resolved.status == 0, "\(resolved.out) \(resolved.err)")
    #expect(resolved.out.contains("merge → merged"), "\(resolved.out)")
    #expect(resolved.out.contains("  score.highScore: rule max (score.highScore)"), "\(resolved.out)")
    #expect(resolved.out.contains("  section volume: theirs (only theirs changed it)"), "\(resolved.out)")
    let merged = try storeB.load(codec: playerCodec, slot: "autosave").state
    #expect(merged.volume == 0.1 && merged.inventory["map"] == 1, "each side's declared change survives")
    #expect(merged.score.highScore == 60)

    let log = try stasis("cloud", "log", "autosave", "--saves", b, "--login", "$LOGIN")
    let rows = log.out.split(separator: "\n").dropFirst()
    #expect(rows.map { $0.split(separator: " ").first } == ["r3", "r2", "r1"])
    #expect(rows.first?.hasSuffix("<- base") == true)
    // Each revision names the device that uploaded it: r1 and r2 are A's saves; r3 is the merge
    // this CLI (logged in as laptop) made and uploaded, whichever side its summary came from.
    let logJSON = try stasis("cloud", "log", "autosave", "--saves", b, "--login", "$LOGIN", "--json")
    let revisions = try #require(
      try JSONSerialization.jsonObject(with: Data(logJSON.out.utf8)) as? [[String: Any]], "\(logJSON.err)")
    #expect(revisions.map { $0["device"] as? String } == ["laptop", "A", "A"])
    let slots = try run(product("stasis"), ["slots", b])
    #expect(slots.out.contains("kept: lost a cloud conflict to r2"))
    let kept = storeB.keptGenerations(of: "autosave").first!.generation
    // 0.9's `cloud discard SLOT GENERATION` still releases, with a warning naming `release`.
    let old = try stasis("cloud", "discard", "autosave", "\(kept)", "--saves", b)
    #expect(old.status == 0)
    #expect(old.err.contains("it is 'stasis cloud release autosave \(kept)' now"), "\(old.err)")
    #expect(storeB.keptGenerations(of: "autosave").isEmpty)
    #expect(try stasis("cloud", "release", "autosave", "\(kept)", "--saves", b).status == 74, "no longer kept")
    #expect(
      try stasis("cloud", "status", "--saves", b, "--login", root.appendingPathComponent("none.json").path).status == 1)
  }

  @Test("two devices with the demo: offline play, then one uploads, the other merges, the first fast-forwards")
  func demoDevices() async throws {
    let database = try Database(.sqlite)
    let player = try database.addPlayer()
    let port = try freePort()
    var server: ServerProcess? = try ServerProcess(database, ["--port", "\(port)"])
    let root = temporaryURL("stasis-devices")
    let tokenFile = root.appendingPathComponent("alice.token")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    try Data(player.token.utf8).write(to: tokenFile)
    // The budget and the patience are not what is tested: a loaded machine gets all the time it needs.
    let cloud = [
      "--cloud", "http://127.0.0.1:\(port)", "--token-file", tokenFile.path, "--autosave", "0", "--budget", "300",
      "--sync-patience", "300",
    ]
    let a = ["--saves", root.appendingPathComponent("A").path, "--device", "A"] + cloud
    let b = ["--saves", root.appendingPathComponent("B").path, "--device", "B"] + cloud

    let first = try demo(a + ["--level", "2", "--frames", "300"])
    #expect(first.status == 0, "\(first.err)")
    let firstCloud = try #require(first.json["cloud"] as? [String: Any])
    #expect(Set(firstCloud.keys).isSuperset(of: ["base", "uploaded", "downloaded", "conflicts", "pending"]))
    #expect(firstCloud["uploaded"] as? [Int] == [1])
    let joined = try demo(b + ["--resume", "--frames", "300"])
    #expect((joined.json["cloud"] as? [String: Any])?["downloaded"] as? [Int] == [1])
    #expect(joined.json["digest"] as? String == first.json["digest"] as? String, "B starts where A stopped")

    server?.stop()
    server = nil
    let offlineA = try demo(a + ["--resume", "--frames", "600"])
    #expect(offlineA.status == 0, "the game plays on offline: \(offlineA.err)")
    let pendingA = try #require(offlineA.json["cloud"] as? [String: Any])
    #expect(pendingA["pending"] as? Int == 1)
    #expect(pendingA["state"] as? String == "offline, 1 waiting")
    let offlineB = try demo(b + ["--resume", "--frames", "900", "--no-autopilot"])
    #expect(offlineB.status == 0)

    server = try ServerProcess(database, ["--port", "\(port)"])
    defer { server?.stop() }
    let syncA = try demo(a + ["--resume", "--frames", "600"])
    #expect((syncA.json["cloud"] as? [String: Any])?["uploaded"] as? [Int] == [2], "A's waiting save goes up")
    let syncB = try demo(b + ["--resume", "--frames", "900", "--conflict-policy", "merge"])
    let cloudB = try #require(syncB.json["cloud"] as? [String: Any])
    let conflict = try #require((cloudB["conflicts"] as? [[String: Any]])?.first)
    #expect(conflict["base"] as? Int == 1)
    #expect(conflict["theirs"] as? Int == 2)
    #expect(conflict["ours"] is Int)
    #expect(conflict["policy"] as? String == "merge")
    // The demo declares the high score, the levels finished and the world (physics with its
    // camera); everything else is one value, which both changed: B's, whole, by the longest
    // play time. The declared values agree, so the merge is B's save, whole: A's r2 is the loser.
    #expect(conflict["result"] as? String == "ours", "\(conflict)")
    #expect(conflict["keptGeneration"] is NSNull, "nothing was written over B's own save")
    #expect(cloudB["uploaded"] as? [Int] == [3], "base → theirs → ours")
    let caughtUp = try demo(a + ["--resume", "--frames", "900", "--no-autopilot"])
    #expect((caughtUp.json["cloud"] as? [String: Any])?["downloaded"] as? [Int] == [3], "A fast-forwards")
    #expect(caughtUp.json["digest"] as? String == syncB.json["digest"] as? String, "to the merge, bit for bit")
    let log = try await history(Client(base: "http://127.0.0.1:\(port)", token: player.token))
    #expect(log.map(\.base) == [2, 1, nil])
  }
}
