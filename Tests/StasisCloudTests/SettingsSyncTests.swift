import Foundation
import Stasis
import StasisCloud
import StasisTesting
import Synchronization
import Testing

private struct Volume: Codable, Sendable {
  var volume: Int64 = 8
}

/// The server's settings routes in memory: each `PUT /v1/settings` merged and answered, as
/// `stasis-server` does. With `holding` set, a request waits until its task is cancelled (a
/// link that never answers); `arrived` is signalled when one is waiting.
private final class MemoryServer: CloudTransport {
  private let state = Mutex((settings: SettingsFile(), puts: 0, holding: false))
  let arrived = DispatchSemaphore(value: 0)
  /// Called with each request before it is answered, on the request's task: a test moves its
  /// clock here to give the answer a latency.
  let beforeAnswer = Mutex<(@Sendable () -> Void)?>(nil)

  var puts: Int { state.withLock { $0.puts } }
  var settings: SettingsFile { state.withLock { $0.settings } }
  func hold(_ holding: Bool) { state.withLock { $0.holding = holding } }

  func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
    guard request.method == "PUT", request.path == "/v1/settings", let body = request.body,
      let sent = try? SettingsFile(bytes: body)
    else { return CloudResponse(status: 404, body: Array(#"{"error": "no route"}"#.utf8)) }
    if state.withLock({ $0.holding }) {
      arrived.signal()
      // No answer until the request is cancelled: the background budget's expiry.
      let (stream, continuation) = AsyncStream<Void>.makeStream()
      defer { continuation.finish() }
      for await _ in stream {}
      throw CloudError(.cancelled, "PUT /v1/settings was cancelled")
    }
    beforeAnswer.withLock { $0 }?()
    let merged = state.withLock { state in
      state.puts += 1
      state.settings.merge(sent)
      return state.settings
    }
    return CloudResponse(status: 200, body: merged.encoded())
  }
}

@Suite("SettingsSync on an application's clock, against a server in memory")
@MainActor
struct SettingsSyncUnitTests {
  private func device(_ server: MemoryServer, clock: ManualClock) throws -> (
    Application, SettingsStore<Volume>, SettingsSync<Volume>
  ) {
    let folder = NSTemporaryDirectory() + "stasis-settings-sync-\(UUID().uuidString)"
    let application = Application(configuration: .init(backgroundBudget: .seconds(10), clock: clock))
    application.launch()
    let settings = try SettingsStore(
      store: SaveStore(directory: folder, device: "phone"), defaults: Volume(), application: application)
    let sync = SettingsSync(
      settings: settings, credentials: CloudCredentials(url: "memory://", token: "t", device: "phone"),
      application: application, transport: server)
    return (application, settings, sync)
  }

  @Test("a change goes up changeDelay after it, with every change made meanwhile: one round trip")
  func coalesced() async throws {
    let server = MemoryServer()
    let clock = ManualClock()
    let (application, settings, sync) = try device(server, clock: clock)
    await sync.settle()
    #expect(server.puts == 1, "the launch's round trip")
    for volume in Int64(1)...4 {
      try settings.update { $0.volume = volume }
      clock.advance(by: .milliseconds(200))
      application.update()
      await sync.settle()
    }
    #expect(server.puts == 1, "a slider dragged: nothing yet")
    clock.advance(by: .milliseconds(200))
    application.update()
    await sync.settle()
    #expect(server.puts == 2, "one round trip for four changes")
    #expect(server.settings["volume"]?.value == .int64(4))
  }

  @Test("in the background, an upload the link never answers is cancelled when the budget runs out")
  func budgetExpires() async throws {
    let server = MemoryServer()
    let clock = ManualClock()
    let (application, settings, sync) = try device(server, clock: clock)
    await sync.settle()
    try settings.update { $0.volume = 2 }
    server.hold(true)
    application.enterBackground()
    #expect(application.runningBackgroundTasks == ["settings upload"])
    await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        server.arrived.wait()
        continuation.resume()
      }
    }
    clock.advance(by: .seconds(11))
    application.update()  // the budget is spent: the expiration handler cancels the round trip
    #expect(application.runningBackgroundTasks.isEmpty)
    await sync.settle()
    #expect(sync.lastOutcome == .failed(CloudError(.cancelled, "PUT /v1/settings was cancelled")))
    #expect(settings.value.volume == 2, "the change stays on the device")

    // Back in the foreground, the change goes up.
    server.hold(false)
    application.enterForeground()
    await sync.settle()
    #expect(server.settings["volume"]?.value == .int64(2))
  }

  @Test("a change made a moment before the quit goes up inside the quit's budget")
  func quit() async throws {
    let server = MemoryServer()
    let clock = ManualClock()
    let (application, settings, sync) = try device(server, clock: clock)
    await sync.settle()
    try settings.update { $0.volume = 7 }  // inside changeDelay: not sent yet
    let began = Mutex<[String]>([])
    application.addBackgroundTaskObserver { event in
      if case .began(_, let name) = event { began.withLock { $0.append(name) } }
    }
    application.terminate()
    #expect(began.withLock { $0 }.contains("settings upload"))
    await sync.settle()
    #expect(server.settings["volume"]?.value == .int64(7))
    #expect(!application.runningBackgroundTasks.contains("settings upload"), "ended once it went up")
  }

  @Test(
    "case 1: a quit with a settings upload in flight, in a loop that never yields, ends with the upload's answer"
  )
  func quitInALoopThatNeverYields() async throws {
    let server = MemoryServer()
    let clock = ManualClock()
    let (application, settings, sync) = try device(server, clock: clock)
    await sync.settle()
    // The answer takes 300 ms on the application's clock.
    server.beforeAnswer.withLock { $0 = { clock.advance(by: .milliseconds(300)) } }
    // Bounds the test, not the quit: were the answer never taken, the budget would run out
    // (on the test's clock) instead of the test hanging, and the episode would say so.
    let quitReturned = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
      if quitReturned.wait(timeout: .now() + 60) == .timedOut { clock.advance(by: .seconds(11)) }
    }
    try settings.update { $0.volume = 3 }  // inside changeDelay: not sent yet
    // From here to its end the loop holds the thread: no await, no main queue, no run loop.
    let started = ContinuousClock.now
    let episode = application.quit()
    let waited = ContinuousClock.now - started
    quitReturned.signal()
    // The budget is 10 s: a quit that slept until it ran out (on any clock) did not hear the answer.
    #expect(waited < .seconds(9), "quit() returned after \(waited) of real time")
    #expect(episode?.outcome == .completed, "\(String(describing: episode))")
    let took = try #require(episode?.duration)
    #expect(took >= .milliseconds(300) && took < .milliseconds(300) + .seconds(1), "within 1 s of the answer: \(took)")
    #expect(server.settings["volume"]?.value == .int64(3), "the change went up")
    #expect(server.puts == 2, "the launch's round trip and the quit's")
    #expect(sync.lastOutcome == .merged(changed: []), "the answer was taken on the game's thread, inside quit()")
  }
}
