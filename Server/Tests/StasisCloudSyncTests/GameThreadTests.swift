import Foundation
import GRDB
import Stasis
import StasisCloud
import StasisRecords
import StasisTesting
import Synchronization
import Testing

@testable import ServerTestSupport

let cityCodec = SaveCodec<SyntheticCity>(game: SyntheticCity.game)

/// One launch of a game on a device (a ``TestDevice``): its own process, as far as the library
/// can tell (a new store, coordinator, sync and HTTP client over the device's folder). Its saves
/// are stamped by the real wall clock, as a game's are.
@MainActor
struct Launch<Game: SaveableGame> {
  let application: Application
  let coordinator: SaveCoordinator<Game>
  let cloud: CloudSync

  init(
    _ game: Game, codec: SaveCodec<Game.State>, on device: TestDevice, slot: SaveSlot = "autosave",
    policy: ConflictPolicy = .mostRecent, clock: any MonotonicClock = SystemClock()
  ) {
    let store = device.store(wallClock: SystemWallClock())
    coordinator = SaveCoordinator(game: game, store: store, codec: codec, slot: slot)
    coordinator.syncPatience = .seconds(120)  // a busy machine never makes it play on early
    cloud = CloudSync(
      coordinator: coordinator, credentials: device.credentials, configuration: CloudSyncConfiguration(policy: policy))
    application = Application(delegate: coordinator, configuration: .init(clock: clock))
  }

  var store: SaveStore { coordinator.store }
  var transferred: TransferCounts { cloud.client.transferred }
  var counters: WorkCounters { WorkCounters(store: store, application: application) }
}

@Suite("The game's loop owns its thread: one delivery point, one pass per return", .serialized)
@MainActor
struct GameThreadTests {
  let database: ServerTestSupport.Database
  let server: ServerProcess
  let token: String

  init() throws {
    database = try ServerTestSupport.Database(.sqlite)
    token = try database.addPlayer().token
    server = try ServerProcess(database)
  }

  /// A device of the player on this suite's server, with a folder of its own.
  func device(_ name: String) -> TestDevice {
    TestDevice(name, server: server.base, token: token)
  }

  // MARK: One pass per return

  @Test("case 4: a fast-forward in a new process is one request and a delta: ≤ 2× the changed bytes + 4 KiB")
  func fastForwardInANewProcess() async throws {
    defer { server.stop() }
    var city = SyntheticCity(agents: 1 << 16, side: 128, ledger: 100, seed: 1)
    let a = Launch(
      TestGame(city), codec: cityCodec, on: device("A"))
    a.application.launch()
    a.coordinator.saveNow()
    await a.cloud.settle()
    #expect(a.cloud.status.base == 1)
    let bDevice = device("B")
    do {  // B's first launch fetches the city whole: it holds nothing yet.
      let b = Launch(
        TestGame(SyntheticCity(agents: 0, side: 1, ledger: 0, seed: 0)), codec: cityCodec, on: bDevice)
      b.application.launch(options: LaunchOptions(restoreSlot: "autosave"))
      #expect(b.coordinator.waitForCatchUp())
      #expect(b.coordinator.game.state == city)
      _ = b.application.quit()
    }
    for round in 1...3 {
      // A plays a tick (1% of the agents move) and its save goes up as a delta.
      let before = city.agents
      city.tick(moving: 0.01, seed: UInt64(round + 1))
      let changed = zip(before, city.agents).filter { $0 != $1 }.count * MemoryLayout<SyntheticCity.Agent>.stride
      a.coordinator.game.state = city
      a.coordinator.saveNow()
      await a.cloud.settle()
      #expect(a.cloud.status.base == round + 1)

      // B launches again, a new process: the base it holds is found on disk.
      let held = bDevice.store()
      let newestLocal = held.path(of: "autosave", generation: try #require(try held.generations(of: "autosave").first))
      let b = Launch(
        TestGame(SyntheticCity(agents: 0, side: 1, ledger: 0, seed: 0)), codec: cityCodec, on: bDevice)
      b.application.launch(options: LaunchOptions(restoreSlot: "autosave"))
      #expect(b.coordinator.waitForCatchUp())
      #expect(b.coordinator.game.state == city, "round \(round): B plays on from A's tick")
      let wire = b.transferred
      #expect(wire.requests == 1, "round \(round): one request, \(wire)")
      #expect(wire.wholeFilesReceived == 0, "round \(round): nothing whole, \(wire)")
      #expect(wire.deltasReceived == 1)
      #expect(
        wire.bytesReceived <= 2 * changed + 4096,
        "round \(round): \(wire.bytesReceived) B on the wire for \(changed) B of changed agents")
      #expect(b.counters.readBacks == 0, "restored from what the sync wrote, in memory")
      // The document level: the newest local file read once (the launch's restore, handed to the
      // catch-up), each file decoded once, each state made once, and the download's state
      // restored as the sync's verification decoded it.
      let work = b.counters
      let revision = "r\(round + 1)"
      #expect(work.reads[newestLocal] == 1, "round \(round): \(work.reads)")
      // The older generations are read only by the write's pruning, which verifies each once
      // before it removes one (a generation this build cannot read is never pruned).
      #expect(work.reads.values.allSatisfy { $0 == 1 }, "round \(round): \(work.reads)")
      #expect(work.decodes == [newestLocal: 1, revision: 1], "round \(round): \(work.decodes)")
      #expect(work.stateDecodes == [newestLocal: 1, revision: 1], "round \(round): \(work.stateDecodes)")
      #expect(work.restores == 2, "round \(round): the launch's restore, then the download's, from memory")
      _ = b.application.quit()
    }
  }

  @Test("a background save with cloud copies its bytes once: encoded in one piece, uploaded as written")
  func backgroundSaveCopiesOnce() async throws {
    defer { server.stop() }
    let city = SyntheticCity(agents: 1 << 14, side: 64, ledger: 50, seed: 3)
    let a = Launch(
      TestGame(city), codec: cityCodec, on: device("A"))
    a.application.launch()
    let before = a.counters
    a.application.enterBackground()  // the background save, and its upload inside the budget
    while a.application.hasBackgroundEpisode { a.application.waitForBackgroundWork() }
    await a.cloud.settle()
    #expect(a.cloud.status.base == 1, "the background save went up")
    #expect(a.counters.uploadCopies == before.uploadCopies, "no second copy of the file for its upload")
    #expect(a.counters.reads(since: before).isEmpty, "the upload read nothing back from disk")
    let generation = try #require(try a.store.generations(of: "autosave").first)
    let size = try a.store.readBytes(at: a.store.path(of: "autosave", generation: generation)).count
    #expect(a.transferred.fileBytesUploaded == size, "the file went up whole, as written: \(a.transferred)")
  }

  @Test("a return with nothing new is one request (304) and decodes only the save it restores, once")
  func returnWithNothingNew() async throws {
    defer { server.stop() }
    let clock = ManualClock()
    let a = Launch(
      TestGame(PlayerState()), codec: playerCodec, on: device("A"),
      clock: clock)
    a.application.launch(options: LaunchOptions(restoreSlot: "autosave"))
    #expect(a.coordinator.waitForCatchUp())
    a.coordinator.game.state.score.points = 5
    a.coordinator.saveNow()
    await a.cloud.settle()
    a.application.enterBackground()
    while a.application.hasBackgroundEpisode { a.application.waitForBackgroundWork() }
    let wire = a.transferred
    let work = a.counters
    a.application.enterForeground()
    a.application.update()
    #expect(a.counters.waitsOnGameThread == work.waitsOnGameThread, "the return itself waits for nothing")
    // A loop that holds the thread: it calls update() until the hold ends, and never awaits.
    for _ in 0..<10_000 where a.coordinator.isCatchingUp {
      if !a.application.hasPendingDeliveries { _ = a.application.waitForDeliveries(timeout: .milliseconds(5)) }
      a.application.update()
    }
    #expect(!a.coordinator.isCatchingUp)
    #expect(a.transferred.requests - wire.requests == 1, "\(a.transferred)")
    #expect(a.cloud.status.state == .synced)
    // The return restores its own background save from disk (once); the catch-up decodes nothing more.
    let newest = a.store.path(of: "autosave", generation: try #require(try a.store.generations(of: "autosave").first))
    #expect(a.counters.decodes(since: work) == [newest: 1], "\(a.counters.decodes(since: work))")
    #expect(a.counters.readBacks == work.readBacks)
  }

  @Test("case 5: a return with a conflict and a merge: ≤ 4 requests, each file decoded once, nothing read back")
  func returnWithAMerge() async throws {
    defer { server.stop() }
    let policy = ConflictPolicy.merge(
      rules: ["score.highScore": .max, "shards": .byIndex, "inventory": .union], fallback: .mostRecent)
    // A tool on device A makes r1, the base.
    let a = Device(server: server.base, token: token, name: "A")
    try a.save(PlayerState(), at: 100)
    #expect(await a.sync.synchronize().error == nil)
    // The game on device B starts from it.
    let b = Launch(
      TestGame(PlayerState()), codec: playerCodec, on: device("B"),
      policy: policy)
    b.application.launch(options: LaunchOptions(restoreSlot: "autosave"))
    #expect(b.coordinator.waitForCatchUp())
    #expect(b.cloud.status.base == 1)
    // A moves on (r2); B plays too, and its save meets A's revision.
    var theirs = PlayerState()
    theirs.score.highScore = 900
    theirs.shards[1].x = 100
    try a.save(theirs, at: 200)
    #expect(await a.sync.synchronize().error == nil)
    b.coordinator.game.state.inventory["sword"] = 1
    b.coordinator.game.state.shards[2].x = 200
    b.coordinator.saveNow()
    await b.cloud.settle()
    #expect(b.cloud.status.state == .conflict, "\(b.cloud.status.events)")
    b.application.enterBackground()
    while b.application.hasBackgroundEpisode { b.application.waitForBackgroundWork() }

    // The return: one pass.
    let wire = b.transferred
    let work = b.counters
    b.application.enterForeground()
    #expect(b.coordinator.waitForCatchUp())
    await b.cloud.settle()  // the merge's upload, after the restore
    let requests = b.transferred.requests - wire.requests
    #expect(requests == 4, "head, the revision list, the base, the upload: \(requests)")
    let merged = b.coordinator.game.state
    #expect(merged.score.highScore == 900 && merged.inventory["sword"] == 1, "the merge was restored")
    #expect(merged.shards[1].x == 100 && merged.shards[2].x == 200)
    #expect(b.cloud.status.conflicts.last?.outcome == .merged)
    #expect(b.cloud.status.conflicts.last?.history == .shared, "both continue the base: merged")
    let decodes = b.counters.decodes(since: work)
    #expect(decodes.values.allSatisfy { $0 == 1 }, "each file once: \(decodes)")
    #expect(decodes.keys.contains("r2") && decodes.keys.contains("r1"), "theirs and the base: \(decodes)")
    #expect(decodes.count == 3, "ours, theirs and the base, and nothing the merge made: \(decodes)")
    #expect(b.cloud.status.base == 3, "the merge went up on theirs")
    #expect(b.counters.readBacks == work.readBacks, "the merged state came from memory")
  }

  // MARK: Versions across devices

  @Test("case 6: an older build whose cloud head is a newer schema is held as on one device, with the same choices")
  func olderBuildBehindANewerHead() async throws {
    defer { server.stop() }
    let newer = SaveCodec<PlayerState>(game: GameIdentity(name: playerCodec.game.name, build: "2", schemaVersion: 2))
    // B, on the older build, plays and syncs: r1.
    let b = Launch(
      TestGame(PlayerState()), codec: playerCodec, on: device("B"))
    b.application.launch(options: LaunchOptions(restoreSlot: "autosave"))
    #expect(b.coordinator.waitForCatchUp())
    b.coordinator.game.state.score.highScore = 100
    b.coordinator.saveNow()
    await b.cloud.settle()
    #expect(b.cloud.status.base == 1 && b.cloud.status.state == .synced)
    let held = try #require(try b.store.generations(of: "autosave").first)

    // A, on the newer build, picks it up, plays on and carries the slot to schema 2: r2.
    let a = Launch(
      TestGame(PlayerState()), codec: newer, on: device("A"))
    a.application.launch(options: LaunchOptions(restoreSlot: "autosave"))
    #expect(a.coordinator.waitForCatchUp())
    #expect(a.coordinator.game.state.score.highScore == 100)
    a.coordinator.game.state.score.highScore = 900
    a.coordinator.saveNow()
    await a.cloud.settle()
    #expect(a.cloud.status.base == 2)

    // B returns with nothing new of its own: held, loudly, as one device whose newest it cannot read.
    b.application.enterBackground()
    while b.application.hasBackgroundEpisode { b.application.waitForBackgroundWork() }
    b.application.enterForeground()
    #expect(b.coordinator.waitForCatchUp())
    let failure = try #require(b.coordinator.restoreFailure, "held, not playing on from its older save")
    #expect(failure.error.kind == .newerSchema)
    #expect(failure.reason == .newerInCloud)
    #expect(failure.olderGeneration == held, "the choice to play on names the generation the game holds")
    #expect(failure.error.description.contains("revision 2 of slot 'autosave' on the server"), "\(failure.error)")
    #expect(b.coordinator.game.isPaused)
    #expect(b.cloud.status.state == .behind)
    #expect(b.coordinator.events.contains { if case .held(.restoreFailure, _) = $0 { true } else { false } })
    guard case .failure? = b.coordinator.saveNow().result else {
      Issue.record("a save while held must fail at once: nothing is saved into the slot")
      return
    }

    // The same slot on one device: the same error kind, and the same choices.
    let local = device("one").store()
    _ = try local.save(PlayerState(), codec: playerCodec, slot: "autosave").wait()
    _ = try local.save(PlayerState(), codec: newer, slot: "autosave").wait()
    let alone = SaveCoordinator(game: TestGame(PlayerState()), store: local, codec: playerCodec, slot: "autosave")
    let aloneApp = Application(delegate: alone, configuration: .init(clock: ManualClock()))
    aloneApp.launch(options: LaunchOptions(restoreSlot: "autosave"))
    #expect(alone.restoreFailure?.error.kind == failure.error.kind)
    #expect(alone.restoreFailure?.olderGeneration == 1 && alone.restoreFailure?.reason == .unreadable)

    // The player plays on alongside: B's saves never go up on top of the newer head.
    try b.coordinator.resolveRestoreFailure(.loadGeneration(held))
    #expect(!b.coordinator.game.isPaused)
    b.coordinator.game.state.score.highScore = 150
    b.coordinator.saveNow()
    await b.cloud.settle()
    #expect(b.cloud.status.state == .conflict, "waits as a conflict for a build that reads both")
    // A returns: nothing new on the server; its newer save is still the head.
    a.application.enterBackground()
    while a.application.hasBackgroundEpisode { a.application.waitForBackgroundWork() }
    a.application.enterForeground()
    #expect(a.coordinator.waitForCatchUp())
    #expect(a.cloud.status.base == 2 && a.coordinator.game.state.score.highScore == 900)
    #expect(a.coordinator.restoreFailure == nil)
  }

  // MARK: One delivery point

  @Test(
    "a loop that never yields hears, at its update(), a settings change from the CLI, a cloud catch-up and settings, a timer and a records commit"
  )
  func everyDeliveryInUpdate() async throws {
    defer { server.stop() }
    // Another device's save (r1) and settings wait on the server.
    let other = Device(server: server.base, token: token, name: "A")
    var theirs = PlayerState()
    theirs.score.points = 42
    try other.save(theirs, at: 100)
    #expect(await other.sync.synchronize().error == nil)
    let otherSettings = try SettingsStore(store: other.store, defaults: DeviceOptions())
    try otherSettings.update { $0.palette = "tritanopia" }
    _ = try await other.device.client().mergeSettings(otherSettings.entries)

    let b = device("B")
    let saves = b.folder.path
    let clock = ManualClock()
    let wall = ManualWallClock()
    let game = TestGame(PlayerState())
    let store = b.store(wallClock: wall)
    let coordinator = SaveCoordinator(game: game, store: store, codec: playerCodec, slot: "autosave")
    coordinator.syncPatience = .seconds(120)
    let app = Application(delegate: coordinator, configuration: .init(clock: clock))
    let credentials = b.credentials
    let cloud = CloudSync(coordinator: coordinator, credentials: credentials)
    let settings = try SettingsStore(store: store, defaults: DeviceOptions(), application: app)
    let settingsSync = SettingsSync(settings: settings, credentials: credentials, application: app)
    let timers = try TimerCenter(store: store, application: app, wallClock: wall)
    let records = try RecordStore(
      directory: saves,
      migrations: [
        RecordMigration("scores") { db in
          try db.create(table: "score") { table in
            table.primaryKey("id", .integer)
            table.column("points", .integer).notNull()
          }
        }
      ], application: app)
    let scores = FetchedResultsController(
      store: records, request: RecordFetchRequest(ScoreRow.self, sortedBy: [Column("points").desc]))
    try scores.start()

    var heard: [String] = []
    let kinds = ["cloud event", "catch-up", "settings (cloud)", "settings (file)", "timer", "records"]
    coordinator.onEvent = { event in if case .restored = event { heard.append("catch-up") } }
    cloud.onEvent(in: app) { event in if case .fastForwarded = event { heard.append("cloud event") } }
    settings.addObserver { change in heard.append("settings (\(change.source.rawValue))") }
    timers.addObserver { _ in heard.append("timer") }
    scores.onChange = { _ in heard.append("records") }

    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    try timers.schedule("harvest", after: .seconds(30))
    // Another process changes a setting: `stasis settings set`.
    let cli = try run(product("stasis"), ["settings", "set", "volume", "3", "--saves", saves])
    #expect(cli.status == 0, "\(cli.err)")
    // A records commit started from the loop, without awaiting it.
    records.write(
      { db in try db.execute(sql: "INSERT INTO score (points) VALUES (?)", arguments: [42]) },
      completion: { result in
        if case .failure(let error) = result { Issue.record("the write failed: \(error)") }
      })
    wall.advance(by: .seconds(31))
    clock.advance(by: .seconds(2))  // past the settings file's check interval

    // The loop: from here on it holds the thread. It never awaits, never pumps the main queue
    // and never runs a run loop; it waits only in the explicit call that says so.
    for _ in 0..<2_000 where Set(heard).count < kinds.count {
      if !app.hasPendingDeliveries { _ = app.waitForDeliveries(timeout: .milliseconds(50)) }
      app.update()
    }
    #expect(Set(heard) == Set(kinds), "heard \(heard)")
    #expect(heard.count == kinds.count, "each once: \(heard)")
    if let event = heard.firstIndex(of: "cloud event"), let restored = heard.firstIndex(of: "catch-up") {
      #expect(event < restored, "the sync's event is told before the restore it led to: \(heard)")
    }
    #expect(game.state.score.points == 42, "the catch-up was restored")
    #expect(settings.value.volume == 3 && settings.value.palette == "tritanopia")
    #expect(scores.records.map(\.points) == [42])
    try records.close()
    _ = (cloud, timers)
    guard case .merged(let changed)? = settingsSync.lastOutcome, changed.contains("palette") else {
      Issue.record("the launch's settings round trip came to \(String(describing: settingsSync.lastOutcome))")
      return
    }
  }
}

/// A row of the records test's table.
struct ScoreRow: Codable, FetchableRecord, TableRecord, Sendable {
  static let databaseTableName = "score"
  var id: Int64
  var points: Int64
}
