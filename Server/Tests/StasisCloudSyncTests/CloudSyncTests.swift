import Foundation
import Stasis
@_spi(Plumbing) import StasisCloud
import StasisDemoGame
import StasisServerTesting
import StasisTesting
import Synchronization
import Testing

@testable import ServerTestSupport

#if canImport(Glibc)
  import Glibc
#endif

@Suite("Cloud sync against the real server: in-process for policies, stasis-server for sockets", .serialized)
struct CloudSyncTests {
  /// A server, one player, and two devices that start from one revision (`base`, r1).
  /// Two devices of one player over the real server in this process (`InMemoryCloudServer`):
  /// what the policies do needs no socket.
  struct World {
    let server: InMemoryCloudServer
    let raw: CloudClient
    let base = PlayerState()
    let a: Device
    let b: Device

    init(
      keepRevisions: Int = 10, policy: ConflictPolicy = .mostRecent,
      onConflict: (@Sendable (Conflict) async -> ConflictDecision?)? = nil
    ) async throws {
      server = try InMemoryCloudServer(keepRevisions: keepRevisions)
      let credentials = try await server.addPlayer("world")
      raw = CloudClient(credentials: credentials, transport: server)
      a = Device(
        server: credentials.url, token: credentials.token, name: "A", policy: policy, onConflict: onConflict,
        transport: server)
      b = Device(
        server: credentials.url, token: credentials.token, name: "B", policy: policy, onConflict: onConflict,
        transport: server)
      try a.save(base, playTime: 10, progress: 0.1, at: 100)
      #expect(await a.sync.synchronize().error == nil)
      #expect(await b.sync.synchronize().restore == 1, "B fast-forwards to r1")
    }
  }

  // MARK: Fast-forward

  @Test("a save made on device A reaches device B, whose cold start reaches A's state digest")
  @MainActor
  func fastForwardDigest() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    let server = try ServerProcess(database)
    defer { server.stop() }
    let url = server.base
    let library = DemoSaves.library
    func device(_ folder: String, resume: Bool) throws -> (Game, Application, CloudSync) {
      let game = Game(
        engine: try Engine(library: library, level: 2, seed: 7), store: SaveStore(directory: folder), slot: "autosave")
      game.coordinator.autosaveInterval = 0
      let cloud = CloudSync(
        coordinator: game.coordinator, credentials: CloudCredentials(url: url, token: token, device: folder))
      game.coordinator.syncPatience = .seconds(120)  // a busy machine never makes it play on early
      // What is tested is the fast-forward, not the budget: a loaded machine gets all the time it needs.
      let app = Application(delegate: game.coordinator, configuration: .init(backgroundBudget: .seconds(300)))
      app.launch(options: resume ? LaunchOptions(restoreSlot: "autosave") : .none)
      game.coordinator.waitForCatchUp()
      return (game, app, cloud)
    }
    let root = temporaryURL("stasis-ff").path
    let (gameA, appA, cloudA) = try device(root + "/A", resume: false)
    for _ in 0..<300 { gameA.tick(appA) }
    appA.enterBackground()  // the background save, then its upload as a background task
    while appA.hasBackgroundEpisode { appA.waitForBackgroundWork() }
    gameA.coordinator.waitForSaves()
    #expect(cloudA.status.uploaded == [1])
    let digestAt300 = gameA.engine.state.digest

    let (gameB, appB, cloudB) = try device(root + "/B", resume: true)
    #expect(cloudB.status.downloaded == [1], "fast-forwarded before the first step")
    #expect(gameB.engine.state.digest == digestAt300, "the same state, bit for bit")
    appA.enterForeground()
    gameA.coordinator.waitForCatchUp()
    for _ in 0..<240 {
      gameA.tick(appA)
      gameB.tick(appB)
    }
    #expect(gameB.engine.state.digest == gameA.engine.state.digest, "and the same future")
  }

  // MARK: Policies

  /// A saves (longer play time, older), syncs first; B saves (higher progress, newer), syncs.
  private func conflict(
    _ policy: ConflictPolicy, onConflict: (@Sendable (Conflict) async -> ConflictDecision?)? = nil
  )
    async throws -> (World, ours: PlayerState, theirs: PlayerState, report: SyncReport)
  {
    let world = try await World(policy: policy, onConflict: onConflict)
    var theirs = world.base
    theirs.score.points = 50
    try world.a.save(theirs, playTime: 300, progress: 0.2, at: 200)
    #expect(await world.a.sync.synchronize().error == nil)
    var ours = world.base
    ours.score.points = 70
    try world.b.save(ours, playTime: 100, progress: 0.8, at: 300)
    let report = await world.b.sync.synchronize()
    return (world, ours, theirs, report)
  }

  @Test("most recent: ours (newer) goes up on theirs; theirs stays in the history")
  func mostRecent() async throws {
    let (world, ours, _, report) = try await conflict(.mostRecent)
    #expect(report.error == nil)
    let conflict = try #require(world.b.sync.status.conflicts.first)
    #expect((conflict.base, conflict.theirs, conflict.outcome, conflict.revision) == (1, 2, .side(.ours), 3))
    #expect(try world.b.newest() == ours)
    let log = try await history(world.raw)
    #expect(log.map(\.revision) == [3, 2, 1])
    #expect(log.map(\.base) == [2, 1, nil], "base → theirs → ours")
    #expect(world.b.kept.isEmpty, "the winner is ours: nothing local lost")
  }

  @Test("longest play time: theirs wins; ours stays a kept generation out of pruning")
  func longestPlayTime() async throws {
    let (world, _, theirs, report) = try await conflict(.longestPlayTime)
    #expect(report.restore != nil)
    #expect(world.b.sync.status.conflicts.first?.outcome == .side(.theirs))
    #expect(try world.b.newest() == theirs)
    let kept = try #require(world.b.kept.first)
    for index in 0..<5 { try world.b.save(PlayerState(score: .init(points: Int64(index)))) }  // 5 saves, keep 3
    #expect(world.b.generations.contains(kept), "kept past pruning")
    #expect(
      try world.b.store.listSlots().first?.keptReason(
        world.b.store.listGenerations(of: "autosave").first { $0.generation == kept }!)?.contains(
          "lost a cloud conflict to r2") == true, "stasis slots shows why")
    try world.b.store.release(generation: kept, slot: "autosave")
    try world.b.save(PlayerState())
    #expect(!world.b.generations.contains(kept), "discarded, then pruned")
    #expect(try await history(world.raw).map(\.revision) == [2, 1], "theirs was already the head")
  }

  @Test("highest progress: ours (0.8 over 0.2) goes up")
  func highestProgress() async throws {
    let (world, ours, _, _) = try await conflict(.highestProgress)
    #expect(world.b.sync.status.conflicts.first?.outcome == .side(.ours))
    #expect(try world.b.newest() == ours)
  }

  @Test("last known good: both go back to the base; both sides kept")
  func lastKnownGood() async throws {
    let (world, _, _, _) = try await conflict(.lastKnownGood)
    let conflict = try #require(world.b.sync.status.conflicts.first)
    #expect(conflict.outcome == .side(.base))
    #expect(try world.b.newest() == world.base)
    #expect(conflict.keptGeneration != nil)
    let log = try await history(world.raw)
    #expect(log.first?.sha == log.last?.sha, "r3 is r1's bytes, uploaded on r2")
    #expect(log.first?.base == 2)
  }

  @Test("manual: the game is handed base, ours and theirs, and decides")
  func manualDecides() async throws {
    let seen = Mutex<(base: Int?, hadBase: Bool, theirs: Int)?>(nil)
    let (world, _, theirs, _) = try await conflict(.manual) { conflict in
      seen.withLock { $0 = (conflict.baseRevision, conflict.base != nil, conflict.theirsRevision) }
      return .side(.theirs)
    }
    let handed = try #require(seen.withLock { $0 })
    #expect(handed.base == 1 && handed.hadBase && handed.theirs == 2, "base, ours and theirs, whole")
    #expect(try world.b.newest() == theirs)
  }

  @Test("manual without a decision: the slot stays in conflict, nothing goes up, until resolved")
  func manualPending() async throws {
    let (world, ours, _, report) = try await conflict(.manual)
    #expect(report.state == .conflict)
    #expect(world.b.sync.status.state == .conflict)
    // The player's choice, by what differs: each side's device, time and play time, and the field apart.
    let pending = try #require(world.b.sync.status.conflicts.last)
    #expect(pending.outcome == .pending)
    let comparison = try #require(pending.comparison, "a conflict left to the player says what differs")
    #expect((comparison.ours.device, comparison.ours.savedAt, comparison.ours.playTime) == ("B", 300, 100))
    #expect((comparison.theirs.device, comparison.theirs.savedAt, comparison.theirs.playTime) == ("A", 200, 300))
    #expect(comparison.ours.progress == 0.8 && comparison.theirs.progress == 0.2)
    #expect(comparison.ours.generation == pending.ours && comparison.theirs.revision == pending.theirs)
    #expect(comparison.differences.map(\.path) == ["score.points"], "the one field apart")
    #expect(comparison.differences.first?.ours == .int64(70) && comparison.differences.first?.theirs == .int64(50))
    #expect(comparison.description == "B: 1 min · A: 5 min; score.points 70 against 50")
    // Found again in this process: not news. Found by a new process over the same folder (a
    // launch over the conflict its record kept): told once, with the same comparison.
    let events = world.b.sync.status.events.count
    _ = await world.b.sync.synchronize()
    #expect(world.b.sync.status.events.count == events, "\(world.b.sync.status.events)")
    let relaunched = CloudSync(
      client: world.b.device.client(transport: world.server), store: world.b.store, slot: "autosave",
      configuration: CloudSyncConfiguration(policy: .manual))
    #expect(await relaunched.synchronize().state == .conflict)
    #expect(relaunched.status.conflicts.map(\.outcome) == [.pending])
    #expect(relaunched.status.conflicts.last?.comparison == comparison)
    #expect(world.b.sync.status.hud == "conflict")
    #expect(try world.b.newest() == ours, "nothing local changed")
    #expect(try await world.b.sync.state().state == .conflict)
    try world.b.save(PlayerState(score: .init(points: 71)))
    #expect(await world.b.sync.push().error?.kind == .conflict, "a push says why nothing goes up")
    #expect(try await history(world.raw).map(\.revision) == [2, 1], "no upload over an unsettled conflict")
    let resolved = await world.b.sync.resolve(with: .merge(rules: [:], fallback: .mostRecent))
    #expect(resolved.error == nil)
    // Nothing declared: the merge keeps one whole side (the most recent, ours), so it is that side.
    #expect(world.b.sync.status.conflicts.last?.outcome == .side(.ours))
    #expect(try await world.b.sync.state().state == .synced)
  }

  @Test("manual, then the player takes a side by name: resolve(taking: .side(.theirs)) writes theirs and keeps ours")
  func manualThenTakeTheirs() async throws {
    let (world, ours, theirs, report) = try await conflict(.manual)
    #expect(report.state == .conflict)
    let resolved = await world.b.sync.resolve(taking: .side(.theirs))
    #expect(resolved.error == nil, "\(String(describing: resolved.error))")
    #expect(try world.b.newest() == theirs, "theirs is the newest local save")
    #expect(world.b.sync.status.conflicts.last?.outcome == .side(.theirs))
    #expect(
      world.b.sync.status.conflicts.last?.sections.allSatisfy { $0.how.hasSuffix("take theirs") } == true,
      "the report names the player's choice: \(String(describing: world.b.sync.status.conflicts.last?.sections))")
    #expect(try await world.b.sync.state().state == .synced)
    #expect(ours != theirs)
  }

  // MARK: Merge

  @Test(
    "merge: declared paths combine (high score by max, inventory by union, shards by index); the undeclared rest is the policy's side, whole"
  )
  func merge() async throws {
    let world = try await World(
      policy: .merge(
        rules: ["score.highScore": .max, "shards": .byIndex, "inventory": .union], fallback: .mostRecent))
    var theirs = world.base
    theirs.score.highScore = 900
    theirs.volume = 0.2  // theirs only
    theirs.shards[1].x = 100  // theirs only
    theirs.shards[5].y = 5  // both
    theirs.score.points = 9  // both, no rule: the newer side (ours)
    try world.a.save(theirs, at: 200)
    #expect(await world.a.sync.synchronize().error == nil)
    var ours = world.base
    ours.score.highScore = 700
    ours.inventory["sword"] = 1  // ours only
    ours.shards[2].x = 200  // ours only
    ours.shards[5].y = 6  // both
    ours.score.points = 7
    try world.b.save(ours, at: 300)
    let report = await world.b.sync.synchronize()
    #expect(report.error == nil)
    let merged = try world.b.newest()
    #expect(merged.score.highScore == 900, "rule max")
    #expect(merged.score.points == 7, "the rest of the state: the policy's side, the most recent")
    #expect(merged.volume == 0.5, "undeclared, so with the rest: ours, whole (theirs' 0.2 stays in r2, kept)")
    #expect(merged.inventory == ["potion": 1, "sword": 1])
    #expect(merged.shards[1].x == 100 && merged.shards[2].x == 200, "bulk elements from each side")
    #expect(merged.shards[5].y == 6, "an element both changed: the policy's side")
    let conflict = try #require(world.b.sync.status.conflicts.first)
    #expect(conflict.outcome == .merged)
    #expect(
      Set(conflict.fields) == [
        "score.highScore: rule max (score.highScore)", "score: policy: ours", "shards[5]: policy: ours",
        "volume: policy: ours",
      ])
    #expect(
      conflict.sections.map(\.description) == [
        "inventory: ours (only ours changed it)",
        "score: merged (other fields: policy: ours; score.highScore: rule max (score.highScore))",
        "shards: merged (shards[5]: policy: ours)",
        "volume: ours (only theirs changed it; both changed the rest of the state: policy: ours)",
      ])
    #expect(
      conflict.summary.contains(
        "merge → merged (inventory ours, score merged, shards merged, volume ours; 4 both changed"))
    #expect(world.b.kept == [conflict.ours], "ours is kept")
    let log = try await history(world.raw)
    #expect(log.map(\.revision) == [3, 2, 1])
    #expect(log.map(\.base) == [2, 1, nil], "base → theirs → merged")
    #expect(log[0].sha == (try fileSHA(world.b, world.b.generations[0])))
    // A fetches the merge.
    #expect(await world.a.sync.synchronize().restore != nil)
    #expect(try world.a.newest() == merged)
  }

  @Test("merge without the base on the server falls back to the slot's policy, and says so")
  func mergeWithoutBase() async throws {
    let world = try await World(
      keepRevisions: 1, policy: .merge(rules: [:], fallback: .longestPlayTime))
    var theirs = world.base
    theirs.volume = 0.9
    try world.a.save(theirs, playTime: 500, at: 200)
    #expect(await world.a.sync.synchronize().error == nil)  // r2; r1 pruned
    var ours = world.base
    ours.score.points = 1
    try world.b.save(ours, playTime: 20, at: 300)
    _ = await world.b.sync.synchronize()
    let conflict = try #require(world.b.sync.status.conflicts.first)
    #expect(conflict.outcome == .side(.theirs))
    #expect(conflict.note == "base r1 is no longer on the server: fell back to playtime")
    #expect(try world.b.newest() == theirs)
  }

  // MARK: Concurrency

  @Test("two devices sync at once: exactly one conflict, resolved, both sides kept", arguments: Backend.allCases)
  func together(backend: Backend) async throws {
    let database = try Database(backend)
    let token = try database.addPlayer().token
    let server = try ServerProcess(database)
    defer { server.stop() }
    // Both devices go through a proxy that holds their uploads until both are in flight.
    let proxy = try FaultProxy(upstream: server.port)
    let policy = ConflictPolicy.merge(
      rules: ["score.highScore": .max, "volume": .min, "inventory": .union], fallback: .mostRecent)
    let a = Device(server: proxy.url, token: token, name: "A", policy: policy)
    let b = Device(server: proxy.url, token: token, name: "B", policy: policy)
    let base = PlayerState()
    try a.save(base, at: 100)
    let uploaded = await a.sync.synchronize()
    #expect(uploaded.error == nil, "\(uploaded)")
    let fastForwarded = await b.sync.synchronize()
    #expect(fastForwarded.restore == 1, "\(fastForwarded)")
    var fromA = base
    fromA.score.highScore = 10
    fromA.volume = 0.1
    try a.save(fromA, at: 200)
    var fromB = base
    fromB.score.highScore = 20
    fromB.inventory["bow"] = 1
    try b.save(fromB, at: 300)
    proxy.setRule(.holdUploads)
    async let first = a.sync.synchronize()
    async let second = b.sync.synchronize()
    let bothInFlight = proxy.waitUntilHolding() && proxy.waitUntilHolding()
    #expect(bothInFlight, "both uploads on r1 are in flight at once")
    proxy.release()
    let reports = await [first, second]
    #expect(reports.allSatisfy { $0.error == nil }, "\(reports)")
    let conflicts = a.sync.status.conflicts + b.sync.status.conflicts
    #expect(conflicts.count == 1, "exactly one conflict: \(conflicts.map(\.summary))")
    let loser = try #require(conflicts.first).ours
    #expect(a.kept + b.kept == [loser], "the resolving device keeps its own side")
    let raw = Client(base: server.base, token: token)
    let log = try await history(raw)
    #expect(log.map(\.revision) == [3, 2, 1])
    #expect(log.map(\.base) == [2, 1, nil], "one chain: the other side is r2, in the history")
    // Both end on the merge.
    _ = await a.sync.synchronize()
    _ = await b.sync.synchronize()
    #expect(try a.newest() == b.newest())
    #expect(try a.newest().score.highScore == 20)
    #expect(try a.newest().volume == 0.1 && a.newest().inventory["bow"] == 1)
  }

  @Test("ours wins but its upload fails: it waits on theirs, and is never fast-forwarded over")
  func resolutionUploadFails() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    let server = try ServerProcess(database)
    defer { server.stop() }
    let proxy = try FaultProxy(upstream: server.port)
    let a = Device(server: server.base, token: token, name: "A")
    let b = Device(server: proxy.url, token: token, name: "B", policy: .mostRecent)
    try a.save(PlayerState(), at: 100)
    _ = await a.sync.synchronize()
    _ = await b.sync.synchronize()
    try a.save(PlayerState(score: .init(points: 1)), at: 200)
    _ = await a.sync.synchronize()  // r2
    let oursGeneration = try b.save(PlayerState(score: .init(points: 2)), at: 300)  // newer: ours wins
    proxy.setRule(.cutUploadMidway(fraction: 0.5) {})
    let failed = await b.sync.synchronize()
    #expect(failed.error?.kind == .offline, "\(String(describing: failed.error))")
    #expect(b.sync.status.conflicts.first?.outcome == .side(.ours))
    #expect(b.sync.status.pending == 1, "ours waits to go up on r2")
    #expect(try await history(Client(base: server.base, token: token)).map(\.revision) == [2, 1])

    // Meanwhile A saves again. B must not fast-forward over its winning save.
    try a.save(PlayerState(score: .init(points: 3)), at: 400)
    _ = await a.sync.synchronize()  // r3
    proxy.setRule(.pass)
    _ = await b.sync.synchronize()
    let second = try #require(b.sync.status.conflicts.last)
    // Ours continues r1 (it won whole over r2, which it never held): r1 is the base, not r2.
    #expect(second.base == 1 && second.theirs == 3, "a conflict against r1, not a fast-forward")
    #expect(second.outcome == .side(.theirs), "the newer save wins by the policy")
    #expect(b.kept.contains(oursGeneration), "and ours is kept, not lost")
  }

  @Test("with one generation kept, the losing side still survives the write of the winner")
  func keptBeforeTheWrite() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    let server = try ServerProcess(database)
    defer { server.stop() }
    let a = Device(server: server.base, token: token, name: "A")
    let b = Device(server: server.base, token: token, name: "B", policy: .longestPlayTime, generationsToKeep: 1)
    try a.save(PlayerState(), at: 100)
    _ = await a.sync.synchronize()
    _ = await b.sync.synchronize()
    try a.save(PlayerState(score: .init(points: 1)), playTime: 900, at: 200)
    _ = await a.sync.synchronize()
    let ours = try b.save(PlayerState(score: .init(points: 2)), playTime: 10, at: 300)
    _ = await b.sync.synchronize()
    #expect(b.sync.status.conflicts.first?.outcome == .side(.theirs))
    #expect(b.generations.contains(ours), "kept before the write that prunes")
    #expect(b.kept == [ours])
  }

  @Test("an upload to a slot deleted on the server makes it anew (a new revision number)")
  func deletedOnTheServer() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    let server = try ServerProcess(database)
    defer { server.stop() }
    let a = Device(server: server.base, token: token, name: "A")
    try a.save(PlayerState(), at: 100)
    _ = await a.sync.synchronize()
    let raw = Client(base: server.base, token: token)
    #expect(try await raw.send(.DELETE, "/v1/slots/autosave", headers: [("If-Match", "\"1\"")]).status == 204)
    try a.save(PlayerState(score: .init(points: 5)), at: 200)
    #expect(await a.sync.push().error == nil)
    #expect(a.sync.status.uploaded == [1, 2])
    #expect(try await history(raw).map(\.revision) == [2])
    #expect(try await history(raw).first?.base == nil, "made anew")
  }

  @Test("an upload attempt flushes the sync record once; its 201 is written unflushed, and read by the next process")
  func oneRecordWritePerUpload() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    let server = try ServerProcess(database)
    defer { server.stop() }
    let folder = temporaryURL("stasis-device")
    let recorder = RecordingFileSystem(root: folder.path)
    let a = Device(server: server.base, token: token, name: "A", folder: folder, fileSystem: recorder)
    try a.save(PlayerState(), at: 100)
    _ = await a.sync.synchronize()
    // A durable record write flushes its temporary file (then renames it and flushes the folder).
    func recordWrites() -> Int {
      recorder.operations.filter {
        guard case .fsync(let path) = $0 else { return false }
        return path.split(separator: "/").last?.hasPrefix(".cloud") == true
      }.count
    }
    for upload in 1...3 {
      try a.save(PlayerState(score: .init(points: Int64(upload))), at: 100 + Int64(upload))
      recorder.reset()
      #expect(await a.sync.push().error == nil)
      #expect(recordWrites() == 1, "upload \(upload): \(recordWrites()) durable record writes")
    }
    #expect(a.sync.status.uploaded == [1, 2, 3, 4])
    // The next process reads the last 201 (written, not flushed): nothing waits, nothing goes
    // up again.
    let b = Device(server: server.base, token: token, name: "A", folder: folder)
    #expect(b.sync.status.base == 4 && b.sync.status.pending == 0)
    #expect(await b.sync.synchronize().error == nil)
    #expect(b.sync.status.base == 4)
    #expect(try await history(Client(base: server.base, token: token)).count == 4, "nothing uploaded twice")
  }

  @Test("a save near the server's upload limit is said once, as a warning; one past it is refused, not lost")
  func nearTheUploadLimit() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    let probe = Device(server: "http://127.0.0.1:1", token: token, name: "probe")
    let size = try probe.store.readBytes(
      at: probe.store.path(of: "autosave", generation: try probe.save(PlayerState(), at: 100))
    ).count
    // The server takes files of up to 105% of this save: it is near the limit.
    let server = try ServerProcess(database, ["--max-body-bytes", "\(size + size / 20)"])
    defer { server.stop() }
    let a = Device(server: server.base, token: token, name: "A")
    let events = EventLog()
    a.sync.onEvent { events.append($0) }
    try a.save(PlayerState(), at: 100)
    _ = await a.sync.synchronize()  // learns the limit (Upload-Limit), creates the slot
    try a.save(PlayerState(score: .init(points: 1)), at: 101)
    #expect(await a.sync.push().error == nil)
    try a.save(PlayerState(score: .init(points: 2)), at: 102)
    #expect(await a.sync.push().error == nil)
    let warnings = events.all.filter { if case .nearUploadLimit = $0 { true } else { false } }
    #expect(warnings.count == 1, "\(events.all)")
    #expect(warnings.first?.description.contains("upload limit") == true)
    // Past the limit: refused, and the save stays on the device.
    var big = PlayerState()
    big.inventory = Dictionary(uniqueKeysWithValues: (0..<200).map { ("item \($0)", $0) })
    let generation = try a.save(big, at: 103)
    let refused = await a.sync.push()
    #expect(refused.error?.kind == .refused, "\(String(describing: refused.error))")
    #expect(a.generations.contains(generation))
    // The event carries the server's refusal itself, not its text: the server's kind, no file error.
    let refusals = events.all.compactMap { if case .refused(let error) = $0 { error } else { nil } }
    #expect(refusals.map(\.kind) == [.refused] && refusals.first?.fileError == nil, "\(refusals)")
  }

  // MARK: Faults

  @Test("the server is down: the upload waits, is retried once it is back, and nothing is lost")
  func serverDown() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    let port = try freePort()
    let device = Device(server: "http://127.0.0.1:\(port)", token: token, name: "A")
    var state = PlayerState()
    for index in 1...3 {
      state.score.points = Int64(index)
      let handle = device.store.save(state, codec: playerCodec, slot: "autosave")
      device.sync.upload(after: handle)
      _ = handle.waitForResult()
    }
    await device.sync.settle()
    #expect(device.sync.status.state == .offline)
    #expect(device.sync.status.hud == "offline, 3 waiting")
    #expect(device.sync.status.events.contains { if case .offline = $0 { true } else { false } })
    let server = try ServerProcess(database, ["--port", "\(port)"])
    defer { server.stop() }
    device.sync.retryNow()
    await device.sync.settle()
    #expect(device.sync.status.pending == 0)
    #expect(device.sync.status.hud == "synced r1")
    let log = try await history(Client(base: server.base, token: token))
    #expect(log.count == 1, "the newest save went up once; it holds the older ones")
    #expect(log[0].sha == (try fileSHA(device, device.generations[0])))
  }

  @Test("retries back off: 0.5 s, 1 s, 2 s, … up to the longest wait, and stop when told")
  func backoff() async throws {
    let port = try freePort()  // nothing listens there
    let waits = Mutex<[Duration]>([])
    let stopped = AsyncStream<Void>.makeStream()
    let folder = temporaryURL("stasis-backoff")
    let store = SaveStore(directory: folder.path)
    let sync = CloudSync(
      client: CloudClient(credentials: CloudCredentials(url: "http://127.0.0.1:\(port)", token: "t")), store: store,
      slot: "autosave",
      configuration: CloudSyncConfiguration(
        firstRetry: .milliseconds(500), longestRetry: .seconds(4),
        sleep: { duration in
          let count = waits.withLock {
            $0.append(duration)
            return $0.count
          }
          if count == 6 {  // enough: stop retrying (as a cancelled wait does)
            stopped.continuation.yield()
            throw CancellationError()
          }
        }))
    let handle = store.save(PlayerState(), codec: playerCodec, slot: "autosave")
    sync.upload(after: handle)
    for await _ in stopped.stream { break }
    await sync.settle()
    #expect(
      waits.withLock { $0 } == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4), .seconds(4)])
    #expect(sync.status.pending == 1, "still queued: nothing dropped")
    #expect(sync.status.state == .offline)
  }

  @Test("the server is killed mid-upload: the client retries; no partial and no duplicate revision")
  func killedMidUpload() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    var server = try ServerProcess(database)
    let proxy = try FaultProxy(upstream: server.port)
    let device = Device(server: proxy.url, token: token, name: "A")
    let big = PlayerState(shards: (0..<20_000).map { Shard(x: Float($0)) })  // ~160 KB
    try device.save(big)
    #expect(await device.sync.synchronize().error == nil)  // r1

    // Killed before the body arrived: nothing is stored.
    var second = big
    second.score.points = 2
    try device.save(second)
    let victim = server.process.processIdentifier
    proxy.setRule(.cutUploadMidway(fraction: 0.5) { kill(victim, SIGKILL) })
    _ = await device.sync.push()
    server.process.waitUntilExit()
    #expect(device.sync.status.state == .offline)
    server = try ServerProcess(database)
    proxy.setUpstream(server.port)
    proxy.setRule(.pass)
    #expect(try await history(Client(base: server.base, token: token)).map(\.revision) == [1], "nothing partial")
    device.sync.retryNow()
    await device.sync.settle()
    #expect(try await history(Client(base: server.base, token: token)).map(\.revision) == [2, 1])

    // Killed after the commit, before the answer: the retry recognises its own revision.
    var third = big
    third.score.points = 3
    try device.save(third)
    let again = server.process.processIdentifier
    proxy.setRule(.cutUploadAnswer { kill(again, SIGKILL) })
    _ = await device.sync.push()
    server.process.waitUntilExit()
    server = try ServerProcess(database)
    defer { server.stop() }
    proxy.setUpstream(server.port)
    proxy.setRule(.pass)
    let log = try await history(Client(base: server.base, token: token))
    #expect(log.map(\.revision) == [3, 2, 1], "the commit happened; the answer was lost")
    device.sync.retryNow()
    await device.sync.settle()
    #expect(try await history(Client(base: server.base, token: token)).map(\.revision) == [3, 2, 1], "no duplicate")
    #expect(device.sync.status.base == 3)
    #expect(device.sync.status.conflicts.isEmpty, "its own revision is not a conflict")
    #expect(log[0].sha == (try fileSHA(device, device.generations[0])))
  }

  @Test("case 7: app.quit() returns once the quit's save and its upload have ended; waiting for one task does not")
  @MainActor
  func quitSendsTheQuitUpload() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    let server = try ServerProcess(database)
    defer { server.stop() }
    let raw = Client(base: server.base, token: token)
    for round in 1...3 {
      let proxy = try FaultProxy(upstream: server.port)  // each round's upload announced once
      let device = TestDevice("A", server: proxy.url, token: token)
      let game = TestGame(CounterState())
      let store = device.store(wallClock: SystemWallClock())
      let coordinator = SaveCoordinator(game: game, store: store, codec: counterCodec, slot: "autosave")
      let cloud = CloudSync(coordinator: coordinator, credentials: device.credentials)
      let app = Application(delegate: coordinator)
      app.launch(options: LaunchOptions(restoreSlot: "autosave"))
      coordinator.waitForCatchUp()
      await cloud.settle()
      game.state.count = Int64(round * 10)
      // The upload is held at the proxy until quit() is already waiting; then it goes.
      proxy.setRule(.holdUploads)
      DispatchQueue.global().async {
        if proxy.waitUntilHolding() { proxy.release() }
      }
      let episode = app.quit()
      #expect(episode?.reason == .termination)
      #expect(episode?.outcome == .completed, "\(String(describing: episode))")
      #expect(app.runningBackgroundTasks.isEmpty)
      #expect(app.state == .notRunning)
      let head = try #require(try await history(raw).first)
      let newest = try #require(try store.generations(of: "autosave").first)
      #expect(head.sha == sha256(try store.readBytes(at: store.path(of: "autosave", generation: newest))))
      _ = cloud
    }
    #expect(try await history(raw).count == 3, "every quit upload reached the server")

    // The sequence the docs used to show: it returns with the upload still in flight.
    let proxy = try FaultProxy(upstream: server.port)
    let device = TestDevice("B", server: proxy.url, token: token)
    let game = TestGame(CounterState())
    let coordinator = SaveCoordinator(
      game: game, store: device.store(wallClock: SystemWallClock()), codec: counterCodec, slot: "autosave")
    let cloud = CloudSync(coordinator: coordinator, credentials: device.credentials)
    let app = Application(delegate: coordinator)
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    coordinator.waitForCatchUp()
    game.state.count = 99
    proxy.setRule(.holdUploads)
    app.terminate()
    coordinator.waitForSaves()
    // The save's task ends (it may have already, and an update inside terminate() may have seen
    // it): each wait returns at a task's end, never for the held upload, so this ends at once.
    var waits = 0
    while app.runningBackgroundTasks != ["upload autosave"], waits < 3 {
      #expect(app.waitForBackgroundWork(), "woken by a task's end, not by the budget running out")
      waits += 1
    }
    #expect(app.hasBackgroundEpisode, "the budget has not run out")
    #expect(app.runningBackgroundTasks == ["upload autosave"], "an exit now would cut the quit upload")
    proxy.release(dropping: true)
    app.quit()
    await cloud.settle()
  }

  @Test("the budget expires during an upload: the local save stays whole; the upload goes on the next return")
  @MainActor
  func budgetExpires() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    let server = try ServerProcess(database)
    defer { server.stop() }
    let proxy = try FaultProxy(upstream: server.port)
    let device = TestDevice("A", server: proxy.url, token: token)
    let game = TestGame(CounterState())
    let store = device.store(wallClock: SystemWallClock())
    let coordinator = SaveCoordinator(game: game, store: store, codec: counterCodec, slot: "autosave")
    let cloud = CloudSync(coordinator: coordinator, credentials: device.credentials)
    coordinator.syncPatience = .seconds(3600)  // on the manual clock, which only the test moves
    let clock = ManualClock()
    let app = Application(delegate: coordinator, configuration: .init(clock: clock))
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    coordinator.waitForCatchUp()
    game.state.count = 1
    _ = coordinator.saveNow().waitForResult()
    await cloud.settle()
    #expect(cloud.status.uploaded == [1])

    game.state.count = 2
    proxy.setRule(.holdUploads)
    app.enterBackground()  // the save, then its upload, held at the proxy: in flight
    #expect(proxy.waitUntilHolding())
    #expect(app.runningBackgroundTasks == ["upload autosave"], "the save is done; the upload is not")
    clock.advance(by: .seconds(11))
    app.update()  // the budget is spent: the expiration handler cancels the upload
    #expect(app.backgroundEpisodes.last?.outcome == .expired(cutTasks: ["upload autosave"]))
    await cloud.settle()
    proxy.release(dropping: true)  // it never reached the server
    let saved = try store.load(codec: counterCodec, slot: "autosave")
    #expect(saved.state.count == 2, "the local save is whole")
    #expect(cloud.status.pending == 1)
    #expect(cloud.status.state == .synced, "not talking to the server any more")
    #expect(cloud.status.hud == "r1, 1 waiting")
    #expect(try await history(Client(base: server.base, token: token)).map(\.revision) == [1])

    app.enterForeground()  // catches up: the waiting upload goes now
    coordinator.waitForCatchUp()
    await cloud.settle()
    #expect(try await history(Client(base: server.base, token: token)).map(\.revision) == [2, 1])
    #expect(cloud.status.pending == 0)
    #expect(game.state.count == 2)
  }

  @Test("a tampered download is refused before anything local is replaced")
  func tampered() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    let server = try ServerProcess(database)
    defer { server.stop() }
    let key = SigningKey(bytes: Array("the game's own signing key, 32b".utf8))
    let forger = SigningKey(bytes: Array("somebody else's key, 32 bytes!!".utf8))
    let honest = Device(server: server.base, token: token, name: "A", signing: .signed(with: key))
    let reader = Device(server: server.base, token: token, name: "B", signing: .signed(with: key))
    try honest.save(PlayerState(score: .init(points: 1)))
    #expect(await honest.sync.synchronize().error == nil)
    #expect(await reader.sync.synchronize().restore == 1)
    let before = try fileSHA(reader, 1)

    // An edited save signed with another key: the server takes it (it holds no key).
    let forged = PlayerState(score: .init(points: 999_999), shards: (0..<2_000).map { Shard(x: Float($0)) })
    let edited = try playerCodec.document(for: forged, summary: SaveSummary(), createdAt: 5)
    #expect(
      try await Client(base: server.base, token: token).put(
        "autosave", SaveFileFormat.encode(edited, signingKey: forger), ifMatch: 1
      ).status == 201)
    let refused = await reader.sync.synchronize()
    #expect(refused.error?.kind == .refusedLocally)
    #expect(
      refused.error?.fileError?.kind == .signatureMismatch,
      "\(String(describing: refused.error))")
    #expect(try reader.generations == [1] && fileSHA(reader, 1) == before, "nothing local changed")

    // A byte flipped in the server's database, in the middle of the shards: checksums catch it.
    try flipByteOfNewestRevision(sqlite: database.arguments[1])
    let flipped = await reader.sync.synchronize()
    #expect(flipped.error?.kind == .refusedLocally)
    #expect(
      flipped.error?.fileError?.kind == .checksumMismatch,
      "\(String(describing: flipped.error))")
    #expect(try reader.generations == [1] && fileSHA(reader, 1) == before, "nothing local changed")
    // Each refusal's event carries its error: refused here, by kind, with the store's reason.
    let refusals = reader.sync.status.events.compactMap { if case .refused(let error) = $0 { error } else { nil } }
    #expect(refusals.map(\.kind) == [.refusedLocally, .refusedLocally], "\(refusals)")
    #expect(refusals.compactMap(\.fileError?.kind) == [.signatureMismatch, .checksumMismatch], "\(refusals)")
  }

  @Test("a wrong token gives a clear error and the game plays on")
  @MainActor
  func wrongToken() async throws {
    let database = try Database(.sqlite)
    _ = try database.addPlayer()
    let server = try ServerProcess(database)
    defer { server.stop() }
    let device = TestDevice("A", server: server.base, token: "not-a-token")
    let game = TestGame(CounterState())
    let coordinator = SaveCoordinator(
      game: game, store: device.store(wallClock: SystemWallClock()), codec: counterCodec, slot: "autosave")
    coordinator.autosaveInterval = 10
    let cloud = CloudSync(coordinator: coordinator, credentials: device.credentials)
    let app = Application(delegate: coordinator)
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    coordinator.waitForCatchUp()
    for _ in 0..<30 {
      game.state.count += 1
      coordinator.didStep(frame: game.state.count)
      app.update()
    }
    coordinator.waitForSaves()
    await cloud.settle()
    #expect(game.state.count == 30, "the game played on")
    #expect(coordinator.events.filter { if case .saved = $0 { true } else { false } }.count == 3, "it saved locally")
    #expect(cloud.status.state == .unauthorized)
    let message = cloud.status.events.compactMap {
      if case .unauthorized(let error) = $0 { error.message } else { nil }
    }
    #expect(message.first?.contains("the server refused the token") == true)
    #expect(!cloud.status.events.description.contains("not-a-token"), "the token never appears")
  }
}
