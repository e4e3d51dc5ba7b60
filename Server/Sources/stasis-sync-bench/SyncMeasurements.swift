import ArgumentParser
import Dispatch
import Foundation
import Hummingbird
import Logging
import Stasis
import StasisCloud
import StasisDemoGame
import StasisServer

/// What cloud sync costs the main thread: the same autosave with and without its upload
/// handed to the sync, against a real `stasis-server` (its router, SQLite backend) on a
/// loopback port in this process; and a trip to the background whose save then goes up.
struct CloudReport: Codable {
  /// The autosave's main-thread part without cloud sync (snapshot, summary, hand-off).
  var autosaveMainThreadMs: Double
  /// The same with the upload handed to the sync (every autosave uploaded: no throttle).
  var autosaveWithUploadMainThreadMs: Double
  /// didEnterBackground until the save is durable and uploaded (both background tasks ended).
  var backgroundSaveAndUploadMs: Double
  /// Uploads that reached the server during the measurement (each one a new revision).
  var uploads: Int
}

extension StasisSyncBench {
  @MainActor
  func measureCloud(folder: String) throws -> CloudReport? {
    guard let levels = LevelLibrary.locate() else { return nil }
    let (url, token, _) = try startServer(database: folder + "/cloud/server.sqlite")
    func makeGame(_ name: String, cloud: Bool) throws -> (Game, Stasis.Application, CloudSync?) {
      let game = Game(
        engine: try Engine(library: levels, level: 2, seed: 1), store: SaveStore(directory: folder + "/cloud/" + name),
        slot: "bench")
      game.coordinator.autosaveInterval = 0
      let sync =
        cloud
        ? CloudSync(
          coordinator: game.coordinator, credentials: CloudCredentials(url: url, token: token, device: "bench"),
          configuration: CloudSyncConfiguration(autosaveUploadInterval: .zero), transport: transport.make()) : nil
      let app = Stasis.Application(delegate: game.coordinator)
      app.launch()
      for _ in 0..<300 { game.tick(app) }
      return (game, app, sync)
    }
    // One step between saves (untimed), so each save, and each upload, is a new state.
    func autosaveMs(_ game: Game, _ app: Stasis.Application) -> Double {
      let clock = SystemClock()
      var times: [Double] = []
      for _ in 0..<31 {
        game.tick(app)
        let start = clock.now()
        game.coordinator.saveNow(.autosave)
        times.append((clock.now() - start).inMilliseconds)
      }
      game.coordinator.waitForSaves()
      return times.sorted()[times.count / 2]
    }
    let (plain, plainApp, _) = try makeGame("plain", cloud: false)
    let without = autosaveMs(plain, plainApp)
    let (synced, app, sync) = try makeGame("synced", cloud: true)
    let with = autosaveMs(synced, app)
    // Every upload so far has gone up before the trips (read here: the main actor waits below).
    let cloudSync = sync!
    let settled = DispatchSemaphore(value: 0)
    Task.detached {
      await cloudSync.settle()
      settled.signal()
    }
    settled.wait()
    var trips: [Double] = []
    for _ in 0..<5 {
      for _ in 0..<30 { synced.tick(app) }
      app.enterBackground()
      while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
      if let episode = app.backgroundEpisodes.last { trips.append(episode.duration.inMilliseconds) }
      app.enterForeground()
      synced.coordinator.waitForCatchUp()
    }
    trips.sort()
    return CloudReport(
      autosaveMainThreadMs: without, autosaveWithUploadMainThreadMs: with, backgroundSaveAndUploadMs: trips[2],
      uploads: sync!.status.uploaded.count)
  }

  func printCloud(_ report: CloudReport) {
    func ms(_ value: Double) -> String { String(format: "%.3f ms", value) }
    print("")
    print("| cloud sync, level 2 (medians) | measured | target |")
    print("| --- | ---: | ---: |")
    print("| autosave, main-thread part, no cloud | \(ms(report.autosaveMainThreadMs)) | < 0.05 ms |")
    print(
      "| autosave, main-thread part, its upload handed to the sync | \(ms(report.autosaveWithUploadMainThreadMs)) | < 0.05 ms |"
    )
    print(
      "| didEnterBackground → durable and uploaded (\(report.uploads) uploads in all) | \(ms(report.backgroundSaveAndUploadMs)) | < 10 s budget |"
    )
  }

  /// A stasis-server (the real router and SQLite backend) on a free loopback port, with one
  /// player; its URL, the player's token and the backend.
  func startServer(database: String) throws -> (url: String, token: String, backend: SQLiteBackend) {
    let backend = try SQLiteBackend(path: database)
    let token = BearerToken.generate()
    let ready = DispatchSemaphore(value: 0)
    let port = LockedPort()
    Task.detached {
      _ = try await backend.addPlayer(name: "bench", tokenHash: BearerToken.hash(token), at: 0)
      let server = SaveServer(backend: backend, options: ServerOptions(port: 0))
      var logger = Logger(label: "bench-server")
      logger.logLevel = .error
      let app = Hummingbird.Application(
        router: server.router(), configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { channel in
          port.set(channel.localAddress?.port ?? 0)
          ready.signal()
        }, logger: logger)
      try await app.runService(gracefulShutdownSignals: [])
    }
    guard ready.wait(timeout: .now() + 30) == .success else {
      throw ValidationError("the bench's server did not start")
    }
    return ("http://127.0.0.1:\(port.value)", token, backend)
  }
}

/// The port the server chose, set on its thread, read on the main one.
final class LockedPort: @unchecked Sendable {
  private let lock = NSLock()
  private var port = 0
  func set(_ value: Int) { lock.withLock { port = value } }
  var value: Int { lock.withLock { port } }
}
