import Foundation
import Logging
import Stasis
import StasisCloud
import StasisTesting
import Synchronization
import Testing

@testable import ServerTestSupport

/// A game's settings, as a device keeps them.
struct DeviceOptions: Codable, Sendable, Equatable {
  var volume: Int64 = 8
  var palette = "standard"
}

/// A game's settings on one device (a ``TestDevice``): its application (on a manual clock),
/// settings store and settings sync.
@MainActor
final class SettingsDevice {
  let clock = ManualClock()
  let device: TestDevice
  var time: SettableTime { device.time }
  let application: Application
  let settings: SettingsStore<DeviceOptions>
  let sync: SettingsSync<DeviceOptions>
  var heard: [SettingsChange] = []

  init(
    _ name: String, server url: String, token: String, transport: any CloudTransport = testTransport(),
    logger: Logger = Logger(label: "stasis.cloud.settings")
  ) throws {
    device = TestDevice(name, server: url, token: token)
    let store = device.store()
    application = Application(configuration: .init(clock: clock))
    application.launch()
    settings = try SettingsStore(store: store, defaults: DeviceOptions(), application: application)
    sync = SettingsSync(
      settings: settings, credentials: device.credentials,
      application: application, transport: transport, logger: logger)
    settings.addObserver { [unowned self] change in heard.append(change) }
  }

  /// Changes the settings at wall-clock time `at`.
  func change(at milliseconds: Int64, _ body: (inout DeviceOptions) -> Void) throws {
    time.now = milliseconds
    try settings.update(body)
  }

  /// Leaves and comes back: `willEnterForeground` runs a round trip.
  func returns() {
    application.enterBackground()
    application.enterForeground()
  }
}

@Suite("Settings carried between devices by a real stasis-server", .serialized)
@MainActor
struct SettingsSyncTests {
  @Test(
    "two devices' settings converge: on launch, after a change (coalesced), on return, in the background",
    arguments: Backend.allCases)
  func converge(backend: Backend) async throws {
    let database = try Database(backend)
    let token = try database.addPlayer().token
    let server = try ServerProcess(database)
    defer { server.stop() }
    let raw = Client(base: server.base, token: token)
    func stored() async throws -> SettingsFile {
      try SettingsFile(bytes: try await raw.send(.GET, "/v1/settings").body)
    }

    // Launch: A's defaults go up.
    let a = try SettingsDevice("phone", server: server.base, token: token)
    await a.sync.settle()
    #expect(a.sync.lastOutcome == .merged(changed: []))
    #expect(try await stored() == a.settings.entries)

    // A change waits for the delay, on the application's clock; two changes go up together.
    try a.change(at: 2000) { $0.volume = 3 }
    try a.change(at: 2100) { $0.palette = "tritanopia" }
    a.application.update()
    await a.sync.settle()
    #expect(try await stored()["volume"]?.value == .int64(8), "not before the delay")
    a.clock.advance(by: .seconds(1))
    a.application.update()
    await a.sync.settle()
    #expect(try await stored()["volume"]?.value == .int64(3))
    #expect(try await stored()["palette"]?.value == .string("tritanopia"))

    // Launch on a second device: A's settings arrive, told as the cloud's.
    let b = try SettingsDevice("deck", server: server.base, token: token)
    await b.sync.settle()
    #expect(b.settings.value == DeviceOptions(volume: 3, palette: "tritanopia"))
    #expect(b.sync.lastOutcome == .merged(changed: ["palette", "volume"]))
    #expect(b.heard.map(\.source) == [.cloud, .cloud])

    // B changes a key and goes to the background before the delay: it goes up in a background task.
    try b.change(at: 3000) { $0.volume = 5 }
    b.application.enterBackground()
    #expect(b.application.runningBackgroundTasks == ["settings upload"])
    await b.sync.settle()
    b.application.update()
    #expect(b.application.runningBackgroundTasks.isEmpty, "the task ended with the round trip")
    #expect(try await stored()["volume"]?.value == .int64(5))
    b.application.enterForeground()
    await b.sync.settle()
    #expect(b.sync.lastOutcome == .merged(changed: []))

    // A returns to the foreground: B's change arrives.
    a.returns()
    await a.sync.settle()
    #expect(a.settings.value.volume == 5)
    #expect(a.heard.last == SettingsChange(key: "volume", oldValue: .int64(3), newValue: .int64(5), source: .cloud))

    // Both change the same key; the later stamp wins on both, whichever reaches the server first.
    try b.change(at: 9000) { $0.palette = "protanopia" }
    try a.change(at: 8000) { $0.palette = "deuteranopia" }
    a.clock.advance(by: .seconds(1))
    b.clock.advance(by: .seconds(1))
    a.application.update()
    b.application.update()  // both round trips in flight at once
    await a.sync.settle()
    await b.sync.settle()
    // Whichever committed first, one more round trip each brings both to the server's merge.
    for device in [a, b] {
      let outcome = await device.sync.synchronize()
      if case .merged = outcome {} else { Issue.record("a round trip came to \(outcome)") }
    }
    #expect(a.settings.value == DeviceOptions(volume: 5, palette: "protanopia"))
    #expect(a.settings.entries == b.settings.entries, "the two devices agree, stamps and all")
    #expect(try await stored() == a.settings.entries, "and the server with them")
  }

  @Test("against a server without /v1/settings: one request, one log line, and slot sync goes on")
  func olderServer() async throws {
    let database = try Database(.sqlite)
    let token = try database.addPlayer().token
    let server = try ServerProcess(database)
    defer { server.stop() }
    // The real server's answer to a route it does not have, as a server from before settings gives it.
    let transport = WithoutSettings()
    let log = CapturedLog()
    let logger = Logger(label: "stasis.cloud.settings") { _ in CapturingLogHandler(log: log) }
    let device = try SettingsDevice("phone", server: server.base, token: token, transport: transport, logger: logger)
    await device.sync.settle()
    #expect(device.sync.lastOutcome == .unsupported)
    #expect(!device.sync.serverHasSettings)

    try device.change(at: 2000) { $0.volume = 1 }
    device.clock.advance(by: .seconds(5))
    device.application.update()
    device.returns()
    device.application.enterBackground()
    #expect(device.application.runningBackgroundTasks.isEmpty, "no background task for a server without settings")
    device.application.update()
    device.application.enterForeground()
    #expect(await device.sync.synchronize() == .unsupported)
    #expect(transport.settingsRequests == 1, "asked once, then never again in the session")
    #expect(device.settings.value.volume == 1, "the change stays on the device")
    let notices = log.text.split(separator: "\n").filter { $0.contains("/v1/settings") }
    #expect(notices.count == 1, "\(log.text)")

    // The same transport's slot sync is untouched.
    let sync = CloudSync(
      client: device.device.client(transport: transport),
      store: device.settings.store, slot: "autosave")
    _ = try device.settings.store.save(
      CounterState(count: 3), codec: counterCodec, slot: "autosave", summary: SaveSummary()
    ).wait()
    let report = await sync.synchronize()
    #expect(report.error == nil)
    #expect(report.state == .synced)
  }
}

/// HTTP to the real server, with `/v1/settings` sent to a path it has no route for: the
/// answer a server from before settings gives (its JSON `404`).
final class WithoutSettings: CloudTransport {
  private let http = testTransport()
  private let count = Mutex(0)

  /// Requests made to `/v1/settings`.
  var settingsRequests: Int { count.withLock { $0 } }

  func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
    var request = request
    if request.path.hasPrefix("/v1/settings") {
      count.withLock { $0 += 1 }
      request.path = "/v1/no-such-route"
    }
    return try await http.send(request, to: server)
  }
}
