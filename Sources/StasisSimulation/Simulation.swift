import Dispatch
import Foundation
import Stasis
import StasisCloud
import StasisServer
import StasisTesting
import Synchronization

/// A known bug the honesty check plants (see ``Simulation/plant(_:)``).
public enum PlantedBug: String, Sendable, CaseIterable {
  /// Issue 14's race: writes not in snapshot order (no superseding, newest waiting first).
  case generationAtLockTime = "generation-at-lock-time"
  /// Pruning deletes a generation this build cannot read.
  case pruneUnreadable = "prune-unreadable"
  /// After a lost `201`, only the newest generation is compared with the head.
  case newestOnlyAfterLostAnswer = "newest-only-after-lost-201"
  /// The server prunes acknowledged uploads past the rule.
  case dropAcknowledgedUpload = "drop-acknowledged-upload"
}

/// What one seed's run did, and the invariant it broke, if one broke.
public struct SimulationResult: Sendable {
  /// The seed.
  public var seed: UInt64
  /// Every operation, in order, as one line each.
  public var trace: [String]
  /// The broken invariant, nil when every check passed.
  public var failure: String?
  /// Operations run.
  public var operations = 0
  /// Devices killed.
  public var kills = 0
  /// Disk and network faults injected (EIO, ENOSPC, failed fsync, lost answers, server crashes).
  public var faults = 0
  /// Conflicts the devices settled.
  public var conflicts = 0
  /// Invariant checks made.
  public var checks = 0
}

/// The deterministic simulation: several devices of one player and one in-process server,
/// operations drawn from a seed, each run to completion, and every invariant checked after
/// each. The same seed gives the same trace.
///
/// ```swift
/// let result = await Simulation.run(seed: 42, operations: 200)
/// if let failure = result.failure { print(result.trace.joined(separator: "\n"), failure) }
/// ```
public final class Simulation {
  private var random: SeededGenerator
  private let server: InProcessServer
  private var devices: [SimulatedDevice]
  private var checker = Checker()
  private var result: SimulationResult
  private let wallClock: WallClock
  private var snapshot = 0
  private let echo: Bool

  private init(seed: UInt64, server: InProcessServer, wallClock: WallClock, echo: Bool) {
    self.wallClock = wallClock
    random = SeededGenerator(seed: seed)
    self.server = server
    devices = []
    result = SimulationResult(seed: seed, trace: [])
    self.echo = echo
  }

  /// Turns `bug` on (or every planted bug off, for nil). Process-wide: runs that plant must not
  /// overlap other runs.
  public static func plant(_ bug: PlantedBug?) {
    PlantedBugs.generationAtLockTime.store(bug == .generationAtLockTime, ordering: .relaxed)
    PlantedBugs.pruneUnreadable.store(bug == .pruneUnreadable, ordering: .relaxed)
    CloudPlantedBugs.newestOnlyAfterLostAnswer.store(bug == .newestOnlyAfterLostAnswer, ordering: .relaxed)
    ServerPlantedBugs.dropAcknowledgedUpload.store(bug == .dropAcknowledgedUpload, ordering: .relaxed)
  }

  /// Runs one seed for `operations` operations (stopping at the first broken invariant).
  /// `echo` prints each operation as it runs (`--trace`).
  public static func run(seed: UInt64, operations: Int = 150, echo: Bool = false) async -> SimulationResult {
    let folder = Self.scratchFolder(seed: seed)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let wallClock = WallClock()
    let server: InProcessServer
    do {
      var seedRandom = SeededGenerator(seed: seed ^ 0x5EED)
      server = try await InProcessServer(
        path: folder + "/server.sqlite", keepRevisions: 3 + seedRandom.below(3), clock: wallClock.read)
    } catch {
      return SimulationResult(seed: seed, trace: [], failure: "the server could not start: \(error)")
    }
    let simulation = Simulation(seed: seed, server: server, wallClock: wallClock, echo: echo)
    await simulation.run(operations: operations)
    server.crash()
    return simulation.result
  }

  private static func scratchFolder(seed: UInt64) -> String {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    return "\(base)/stasis-sim-\(getpid())-\(seed)-\(UInt64.random(in: 0...UInt64.max))"
  }

  private var now: @Sendable () -> Int64 { wallClock.read }

  private func note(_ line: String) {
    result.trace.append(line)
    if echo { print(line) }
  }

  private func run(operations: Int) async {
    let count = 2 + random.below(2)
    for index in 0..<count {
      let device = SimulatedDevice(name: "device-\(index)", server: server, wallClock: now)
      devices.append(device)
      device.launch()
      note("launch \(device.name)")
    }
    for _ in 0..<operations {
      wallClock.advance(by: 1000)
      await step()
      result.operations += 1
      if result.failure == nil { await checkAll() }
      if result.failure != nil { break }
    }
    if result.failure == nil {
      await converge()
      result.operations += 1
      if result.failure == nil { await checkAll() }
    }
    for device in devices where device.isRunning { await device.sync?.settle() }
    result.checks = checker.checks
  }

  private func fail(_ message: String) {
    if result.failure == nil { result.failure = message }
  }

  private func checkAll() async {
    for device in devices {
      if let broken = checker.checkDevice(device) { return fail(broken) }
    }
    let acknowledged = devices.flatMap { $0.network.acknowledged }
    if let broken = await checker.checkServer(server, acknowledged: acknowledged) { fail(broken) }
  }

  // MARK: Operations

  private func step() async {
    let device = devices[random.below(devices.count)]
    guard device.isRunning else {
      note("\(device.name): cold start (build \(device.build.rawValue))")
      return await coldStart(device)
    }
    let roll = random.below(100)
    switch roll {
    case 0..<18:
      play(device, frames: 1 + random.below(600))
    case 18..<30:
      play(device, frames: 1 + random.below(60))
      await save(device, reason: "autosave")
    case 30..<36:
      await save(device, reason: "manual")
    case 36..<44:
      await overlap(device)
    case 44..<50:
      await background(device)
    case 50..<54:
      note("\(device.name): quit")
      await save(device, reason: "terminate")
      await device.sync?.settle()
      device.quit()
    case 54..<60:
      let lost = device.kill(&random)
      result.kills += 1
      note("\(device.name): SIGKILL (\(lost) unflushed changes lost)")
    case 60..<64:
      device.network.isOnline.toggle()
      note("\(device.name): \(device.network.isOnline ? "online" : "offline")")
    case 64..<67:
      if server.isUp {
        server.crash()
        result.faults += 1
        note("server: crash")
      } else {
        do { try server.start() } catch { return fail("the server could not restart: \(error)") }
        note("server: restart")
      }
    case 67..<72:
      device.network.loseAnswers(1)
      result.faults += 1
      note("\(device.name): the next answer is lost")
      play(device, frames: 1 + random.below(120))
      await save(device, reason: "autosave")
      play(device, frames: 1 + random.below(120))
      await save(device, reason: "manual")
    case 72..<78:
      let operations: [FileOperation] = [.write, .fsync, .rename, .fsyncDirectory, .open]
      let errnos: [Errno] = [.ioError, .noSpace]
      let operation = operations[random.below(operations.count)]
      let errno = errnos[random.below(errnos.count)]
      device.disk.fail(operation, times: 1 + random.below(2), with: errno)
      result.faults += 1
      note("\(device.name): disk fault: \(operation) fails with \(errno)")
      play(device, frames: 1 + random.below(60))
      await save(device, reason: "autosave")
      device.disk.clearFaults()
    case 78..<81:
      let jump = Int64(random.below(7200) - 3600) * 1000
      wallClock.advance(by: jump)
      note("clock: jumps \(jump / 1000) s")
    case 81..<86:
      let builds = GameBuild.allCases
      let build = builds[random.below(builds.count)]
      note("\(device.name): quit, then run build \(build.rawValue)")
      await device.sync?.settle()
      device.quit()
      device.build = build
      await coldStart(device)
    case 86..<89:
      let policies: [(String, ConflictPolicy)] = [
        ("recent", .mostRecent), ("playtime", .longestPlayTime), ("progress", .highestProgress),
        ("last-known-good", .lastKnownGood), ("merge", .merge(rules: MergeRules(), fallback: .mostRecent)),
      ]
      let (name, policy) = policies[random.below(policies.count)]
      device.policy = policy
      note("\(device.name): conflict policy \(name) (from the next launch)")
    case 89..<92:
      await discard(device)
    default:
      note("\(device.name): sync")
      await synchronize(device)
    }
  }

  private func play(_ device: SimulatedDevice, frames: Int) {
    guard var model = device.model else { return }
    for _ in 0..<frames {
      model.frame += 1
      model.score = model.score &* 31 &+ Int64(random.below(1000))
    }
    device.model = model
    note("\(device.name): play \(frames) frames (frame \(model.frame))")
  }

  /// A save handed to the store: its handle, its snapshot's number and digest, and the SHA-256
  /// of the file it wrote, read the moment it was reported durable.
  private struct PendingSave {
    var handle: SaveHandle
    var number: Int
    var digest: String
    var file: FileDigest
  }

  /// Starts a save of the model as it is now; the snapshot's number is taken here.
  private func startSave(_ device: SimulatedDevice) -> PendingSave? {
    guard let store = device.store, let model = device.model else { return nil }
    snapshot += 1
    let file = FileDigest()
    let handle = device.build.save(
      model, store: store, slot: SimulatedDevice.slot, unreadableNewest: device.unreadableNewest)
    let disk = device.disk
    // Runs on the save's worker before its next write can prune anything.
    handle.onCompletion { result in
      guard case .success(let receipt) = result, receipt.outcome == .written else { return file.set(nil) }
      file.set(disk.contents(of: receipt.path).map(hex))
    }
    return PendingSave(handle: handle, number: snapshot, digest: model.digest, file: file)
  }

  /// Waits for a save, records what it reported, and queues its upload.
  private func finish(_ device: SimulatedDevice, _ save: PendingSave, reason: String, upload: Bool = true) async {
    let handle = save.handle
    let number = save.number
    let digest = save.digest
    switch handle.wait() {
    case .success(let receipt):
      switch receipt.outcome {
      case .written:
        guard let sha = save.file.value else { return fail("a durable save's file was not there when reported") }
        checker.recordDurable(
          device: device.name,
          save: .init(generation: receipt.generation, sha256: sha, schema: device.build.schema, snapshot: number),
          digest: digest)
        note("\(device.name): \(reason) snapshot \(number) durable as generation \(receipt.generation)")
      case .unchanged:
        note("\(device.name): \(reason) snapshot \(number) unchanged (generation \(receipt.generation))")
      case .superseded:
        note("\(device.name): \(reason) snapshot \(number) superseded (generation \(receipt.generation))")
      }
    case .failure(let error):
      note("\(device.name): \(reason) snapshot \(number) failed: \(error.kind)")
    }
    if upload, let sync = device.sync {
      sync.upload(after: handle)
      await sync.settle()
      collectEvents(device)
    }
  }

  private func save(_ device: SimulatedDevice, reason: String) async {
    guard let started = startSave(device) else { return }
    await finish(device, started, reason: reason)
  }

  /// An autosave held mid-write by the disk while the game goes on and saves again.
  private func overlap(_ device: SimulatedDevice) async {
    play(device, frames: 1 + random.below(30))
    let reached = DispatchSemaphore(value: 0)
    device.disk.holdNextWrite(notify: reached)
    guard let first = startSave(device) else { return }
    first.handle.onCompletion { _ in reached.signal() }
    reached.wait()
    guard device.disk.isHolding else {
      device.disk.releaseHold()
      return await finish(device, first, reason: "autosave")
    }
    note("\(device.name): autosave snapshot \(first.number) held mid-write by the disk")
    var later: [PendingSave] = []
    for _ in 0..<(1 + random.below(3)) {
      play(device, frames: 1 + random.below(30))
      if let next = startSave(device) { later.append(next) }
      if let store = device.store, store.heldSnapshots(of: SimulatedDevice.slot) > 2 {
        fail("held snapshots: \(store.heldSnapshots(of: SimulatedDevice.slot)) (at most 2)")
      }
    }
    if random.chance(25) {
      let lost = device.kill(&random)
      result.kills += 1
      note("\(device.name): SIGKILL while the write is held (\(lost) unflushed changes lost)")
      for save in [first] + later { _ = save.handle.wait() }
      return
    }
    device.disk.releaseHold()
    await finish(device, first, reason: "autosave", upload: false)
    for (index, save) in later.enumerated() {
      await finish(device, save, reason: index == later.count - 1 ? "background" : "autosave", upload: false)
    }
    if let sync = device.sync {
      for save in [first] + later { sync.upload(after: save.handle) }
      await sync.settle()
      collectEvents(device)
    }
  }

  /// A background save whose budget runs out at a random point (or not at all).
  private func background(_ device: SimulatedDevice) async {
    play(device, frames: 1 + random.below(30))
    let expires = random.chance(50)
    note("\(device.name): background, the budget \(expires ? "expires mid-save" : "lasts")")
    guard expires else { return await save(device, reason: "background") }
    let reached = DispatchSemaphore(value: 0)
    device.disk.holdNextWrite(notify: reached)
    guard let started = startSave(device) else { return }
    started.handle.onCompletion { _ in reached.signal() }
    reached.wait()
    started.handle.cancel()
    device.sync?.cancelUploads()
    device.disk.releaseHold()
    await finish(device, started, reason: "background")
  }

  private func coldStart(_ device: SimulatedDevice) async {
    device.launch()
    restore(device, after: "cold start")
    if device.network.isOnline, server.isUp { await synchronize(device) }
  }

  /// Loads the slot's newest state into the game, checking its digest against the save's.
  private func restore(_ device: SimulatedDevice, after: String) {
    guard let store = device.store else { return }
    let newestDurable =
      (checker.durable[device.name] ?? []).filter {
        !(checker.discarded[device.name] ?? []).contains($0.generation) && $0.schema <= device.build.schema
      }.map(\.generation).max() ?? 0
    do throws(SaveFileError) {
      let loaded = try device.build.load(store: store, slot: SimulatedDevice.slot, fallback: .pastDamaged)
      device.model = loaded.model
      note("\(device.name): \(after): restored generation \(loaded.generation) (frame \(loaded.model.frame))")
      checkDigest(device, generation: loaded.generation, model: loaded.model)
      checker.checks += 1
      if loaded.generation < newestDurable, loaded.skipped == 0,
        device.sha256(of: newestDurable) != nil
      {
        fail(
          "cold start: \(device.name) restored generation \(loaded.generation), not the newest durable \(newestDurable)"
        )
      }
    } catch {
      guard error.kind != .notFound else {
        return note("\(device.name): \(after): nothing to restore, a new game")
      }
      // The restore failure is answered: play on from the older generation that loads (or
      // start over), alongside the ones this build cannot read, which stay.
      device.unreadableNewest = .saveAlongside
      if let older = try? device.build.load(store: store, slot: SimulatedDevice.slot, fallback: .pastUnreadable) {
        device.model = older.model
        checkDigest(device, generation: older.generation, model: older.model)
        note("\(device.name): \(after): restore failed (\(error.kind)); played on from generation \(older.generation)")
      } else {
        device.model = GameModel()
        note("\(device.name): \(after): restore failed (\(error.kind)); started over")
      }
    }
  }

  private func checkDigest(_ device: SimulatedDevice, generation: Int, model: GameModel) {
    guard let sha = device.sha256(of: generation), let expected = checker.digests[sha] else { return }
    checker.checks += 1
    if expected != model.digest {
      fail("digest: \(device.name) restored generation \(generation) whose state differs from the state saved")
    }
  }

  /// Syncs the device; with `answering`, a conflict its policy leaves to the player (the
  /// base is gone) is answered as a player would, by the most recent side.
  private func synchronize(_ device: SimulatedDevice, answering: Bool = false) async {
    guard let sync = device.sync else { return }
    var report = await sync.synchronize()
    collectEvents(device)
    if answering, report.state == .conflict, report.error == nil {
      note("\(device.name): the player settles the pending conflict: recent")
      report = await sync.resolve(with: .mostRecent, named: "recent")
      collectEvents(device)
    }
    if let generation = report.restore {
      note("\(device.name): sync wrote generation \(generation); restoring it")
      restore(device, after: "sync")
    } else {
      let error = report.error.map { " (\($0.kind): \($0.message))" } ?? ""
      note("\(device.name): sync: \(report.state?.rawValue ?? "unknown")\(error)")
    }
  }

  private func collectEvents(_ device: SimulatedDevice) {
    for event in device.takeEvents() {
      guard case .conflict(let report) = event else { continue }
      result.conflicts += 1
      note("\(device.name): conflict: \(report.summary)")
      checker.checks += 1
      let own = device.network.committed.contains { $0.revision == report.theirs }
      if own { fail("self-conflict: \(device.name) conflicted with its own upload r\(report.theirs)") }
    }
  }

  private func discard(_ device: SimulatedDevice) async {
    guard let store = device.store else { return }
    let kept = store.keptGenerations(of: SimulatedDevice.slot).map(\.generation)
    let unreadable = device.generationsOnDisk().filter { generation in
      (checker.durable[device.name] ?? []).contains { $0.generation == generation && $0.schema > device.build.schema }
    }
    if let generation = (kept + unreadable).sorted().first, generation != device.generationsOnDisk().first {
      do throws(SaveFileError) {
        try store.discard(generation: generation, slot: SimulatedDevice.slot)
        checker.discarded[device.name, default: []].insert(generation)
        note("\(device.name): discard generation \(generation)")
      } catch {
        note("\(device.name): discard generation \(generation) failed: \(error.kind)")
      }
      return
    }
    guard let loser = checker.losers.subtracting(checker.discardedRevisions).sorted().first, server.isUp,
      device.network.isOnline
    else { return note("\(device.name): nothing to discard") }
    let client = CloudClient(
      server: CloudServer(url: "sim://server", token: InProcessServer.token, device: device.name),
      transport: device.network)
    do throws(CloudError) {
      try await client.discard(slot: SimulatedDevice.slot, revision: Int(loser))
      checker.discardedRevisions.insert(loser)
      note("\(device.name): discard the server's loser r\(loser)")
    } catch {
      // An answer lost after the server carried it out: the revision may well be gone.
      if error.kind == .offline, !error.neverSent { checker.discardedRevisions.insert(loser) }
      note("\(device.name): discard r\(loser) failed: \(error.kind)")
    }
  }

  /// Everyone online, the server up, no new play: the devices reach the same head.
  private func converge() async {
    note("converge: all online, no new play")
    if !server.isUp {
      do { try server.start() } catch { return fail("the server could not restart: \(error)") }
    }
    for device in devices {
      device.network.isOnline = true
      device.disk.clearFaults()
      if !device.isRunning { await coldStart(device) }
    }
    // Unsaved progress is saved first (as a quit would): what is only in memory cannot sync.
    for device in devices { await save(device, reason: "manual") }
    let builds = Set(devices.map(\.build.schema))
    // A head uploaded by a newer build is refused by older ones (named, never overwritten), so
    // the devices cannot meet until they update: nothing to compare.
    let headSchema = await server.headSchema(slot: SimulatedDevice.slot.name) ?? 0
    let comparable =
      builds.count == 1 && headSchema <= Int64(builds.first ?? 0)
      && devices.allSatisfy { $0.unreadableNewest == .refuse }
    let rounds = 5
    for round in 1...rounds {
      for device in devices { await synchronize(device, answering: true) }
      guard comparable else { continue }
      let digests = devices.map { $0.model?.digest ?? "" }
      if Set(digests).count == 1 { return note("converge: the same state after \(round) rounds") }
    }
    guard comparable else {
      return note(
        "converge: the builds differ (or the head is of a newer schema, or one plays alongside saves it cannot read); not compared"
      )
    }
    checker.checks += 1
    let frames = devices.map { "\($0.name) at frame \($0.model?.frame ?? -1)" }.joined(separator: ", ")
    fail("convergence: after \(rounds) rounds of sync the devices differ: \(frames)")
  }
}

/// The simulated wall clock, in milliseconds since the Unix epoch: the devices' save headers
/// and the server's upload times read it; it jumps back and forward when told to.
final class WallClock: Sendable {
  private let milliseconds = Mutex<Int64>(1_800_000_000_000)

  /// The time now.
  var read: @Sendable () -> Int64 { { self.milliseconds.withLock { $0 } } }

  /// Moves the clock by `amount` milliseconds (negative: back).
  func advance(by amount: Int64) { milliseconds.withLock { $0 += amount } }
}

/// The SHA-256 of a save's file, set on the save's worker when it is reported durable.
private final class FileDigest: Sendable {
  private let sha = Mutex<String?>(nil)
  private let done = DispatchSemaphore(value: 0)

  /// The SHA-256, once the save's completion ran (nil: nothing was written).
  var value: String? {
    done.wait()
    done.signal()
    return sha.withLock { $0 }
  }

  func set(_ value: String?) {
    sha.withLock { $0 = value }
    done.signal()
  }
}
