import Foundation
import Stasis
@_spi(Plumbing) import StasisCloud
import Testing

@testable import ServerTestSupport

@Suite("A device never conflicts with its own upload", .serialized)
struct OwnUploadTests {
  @Test(
    "a 201 lost after the commit, then two more saves: no conflict, no rollback, the head ends at the newest save",
    arguments: ConflictPolicy.names)
  func lostAnswer(policyName: String) async throws {
    let policy = try #require(ConflictPolicy(name: policyName))
    let database = try Database(.sqlite)
    let player = try database.addPlayer()
    let server = try ServerProcess(database)
    defer { server.stop() }
    let proxy = try FaultProxy(upstream: server.port)
    // One generation kept: the save whose answer is lost is gone from the disk by the time the
    // device reconnects, so only what the device remembers of its upload can tell it is its own.
    let device = Device(server: proxy.url, token: player.token, name: "A", policy: policy, generationsToKeep: 1)
    let raw = Client(base: server.base, token: player.token)
    var state = PlayerState()
    var playTime = 10.0
    try device.save(state, playTime: playTime, progress: 0.5, at: 100)
    #expect(await device.sync.synchronize().error == nil)  // r1
    var time: Int64 = 100

    // Twice: first the retry's 412 finds it, then a catch-up's fetch of the moved head does.
    for catchUp in [false, true] {
      let base = try #require(try await history(raw).first?.revision)
      // The lost save has the higher progress and the later ones the longer play time, so
      // that `progress` and `last-known-good` would roll back if this were a conflict.
      state.score.points += 1
      playTime += 10
      time += 100
      let lostGeneration = try device.save(state, playTime: playTime, progress: 0.9, at: time)
      let lostSHA = try fileSHA(device, lostGeneration)
      proxy.setRule(.cutUploadAnswer {})
      let lost = await device.sync.push()
      proxy.setRule(.pass)
      #expect(lost.error?.kind == .offline, "\(String(describing: lost.error))")
      let committed = try await history(raw)
      #expect(committed.first?.revision == base + 1, "committed; only the answer was lost")
      #expect(committed.first?.sha == lostSHA)

      var newest = 0
      for _ in 0..<2 {  // two more saves before it reconnects
        state.score.points += 1
        playTime += 10
        time += 100
        newest = try device.save(state, playTime: playTime, progress: 0.2, at: time)
      }
      #expect(device.generations == [newest], "the lost save's generation is pruned locally")

      if catchUp {
        let report = await device.sync.synchronize()
        #expect(report.error == nil, "\(String(describing: report.error))")
        #expect(report.state == .synced)
        #expect(report.restore == nil, "nothing to restore: nothing was written under the game")
      } else {
        device.sync.retryNow()
        await device.sync.settle()
        #expect(await device.sync.synchronize().state == .synced)
      }

      #expect(device.sync.status.conflicts.isEmpty, "\(device.sync.status.conflicts.map(\.summary))")
      #expect(!device.sync.status.events.contains { if case .conflict = $0 { true } else { false } })
      #expect(device.kept.isEmpty, "no loser: nothing lost")
      #expect(device.generations == [newest], "no generation written over the newest (no rollback)")
      #expect(try device.newest() == state)
      let log = try await history(raw)
      #expect(log.map(\.revision).prefix(2) == [base + 2, base + 1], "one upload on top of its own revision")
      #expect(log.first?.base == base + 1, "a fast-forward over its own revision")
      #expect(log.first?.sha == (try fileSHA(device, newest)), "the head is the newest local save")
      #expect(device.sync.status.base == base + 2)
      #expect(device.sync.status.pending == 0)
    }
  }

  @Test("a 201 lost, more saves, then a new process: the record it left says the revision is its own")
  func lostAnswerAcrossLaunches() async throws {
    let database = try Database(.sqlite)
    let player = try database.addPlayer()
    let server = try ServerProcess(database)
    defer { server.stop() }
    let proxy = try FaultProxy(upstream: server.port)
    let device = Device(
      server: proxy.url, token: player.token, name: "A", policy: .lastKnownGood, generationsToKeep: 1)
    try device.save(PlayerState(), playTime: 10, at: 100)
    #expect(await device.sync.synchronize().error == nil)  // r1
    try device.save(PlayerState(score: .init(points: 1)), playTime: 20, at: 200)
    proxy.setRule(.cutUploadAnswer {})
    #expect(await device.sync.push().error?.kind == .offline)  // r2 committed, unacknowledged
    proxy.setRule(.pass)
    try device.save(PlayerState(score: .init(points: 2)), playTime: 30, at: 300)
    let newest = try device.save(PlayerState(score: .init(points: 3)), playTime: 40, at: 400)

    // The game is killed and launched again: a new sync of the same folder, from its record.
    let relaunched = CloudSync(
      client: device.device.client(),
      store: device.store, slot: "autosave",
      configuration: CloudSyncConfiguration(
        policy: .lastKnownGood, validate: { _ = try playerCodec.load(from: $0) },
        sleep: { _ in try await Task.sleep(for: .seconds(3600)) }))
    let report = await relaunched.synchronize()
    #expect(report.error == nil && report.state == .synced && report.restore == nil)
    #expect(relaunched.status.conflicts.isEmpty)
    #expect(device.generations == [newest] && device.kept.isEmpty)
    #expect(try device.newest().score.points == 3, "not rolled back to the base")
    let log = try await history(Client(base: server.base, token: player.token))
    #expect(log.map(\.revision) == [3, 2, 1])
    #expect(log.first?.base == 2)
    #expect(log.first?.sha == (try fileSHA(device, newest)))
  }

  @Test("what the record remembers of its uploads stays bounded: the first and the newest")
  func sentIsBounded() async throws {
    let database = try Database(.sqlite)
    let player = try database.addPlayer()
    let server = try ServerProcess(database)
    defer { server.stop() }
    let proxy = try FaultProxy(upstream: server.port)
    proxy.setRule(.cutUploadMidway(fraction: 0.5) {})  // every upload cut: its outcome is unknown
    let device = Device(server: proxy.url, token: player.token, name: "A")
    for points in 1...12 {
      try device.save(PlayerState(score: .init(points: Int64(points))), at: Int64(points) * 100)
      #expect(await device.sync.push().error?.kind == .offline)
    }
    _ = await device.sync.push()  // the same generation again: remembered once
    let record = SyncRecord.load(store: device.store, slot: "autosave", server: device.sync.client.credentials)
    #expect(record.sent.count == SyncRecord.sentLimit)
    #expect(record.sent.map(\.generation) == [1] + Array(6...12))
    #expect(record.sent.allSatisfy { $0.base == nil && $0.sha256.count == 64 })
  }

  @Test("an upload whose connection was refused is not remembered: it never reached the server")
  func refusedIsForgotten() async throws {
    let port = try freePort()  // nothing listens there
    let device = Device(server: "http://127.0.0.1:\(port)", token: "t", name: "A")
    for points in 1...3 {
      try device.save(PlayerState(score: .init(points: Int64(points))), at: Int64(points) * 100)
      let error = await device.sync.push().error
      #expect(error?.kind == .offline && error?.neverSent == true)
    }
    let record = SyncRecord.load(store: device.store, slot: "autosave", server: device.sync.client.credentials)
    #expect(record.sent.isEmpty)
  }

  @Test("a sync record written before uploads were remembered still reads")
  func olderRecord() throws {
    let json = #"{"base":3,"baseGeneration":2,"player":"p","queued":[4],"server":"http://h","slot":"autosave"}"#
    let record = try JSONDecoder().decode(SyncRecord.self, from: Data(json.utf8))
    #expect(record.base == 3 && record.baseGeneration == 2 && record.queued == [4])
    #expect(record.sent.isEmpty && record.loser == nil)
  }
}
