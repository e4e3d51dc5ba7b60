import Foundation
import Stasis
import StasisDemoGame

#if Cloud
  import StasisCloud
#endif

// With ThrottledCloudTransport.swift, the only file of the demo that knows StasisCloud: built
// without the package's `Cloud` trait (the release build `scripts/test.sh` makes for the stress
// runs), `--cloud` is refused.

/// The HUD's colour for the cloud's state.
typealias HUDColor = (UInt8, UInt8, UInt8)

#if Cloud
  /// `--cloud URL`: the demo's slot synced with a stasis-server through the coordinator.
  @MainActor
  final class DemoCloud {
    private let sync: CloudSync
    /// The settings carried between the player's devices (F2's), once the window has them.
    private var settingsSync: SettingsSync<DemoSettings>?

    private init(sync: CloudSync) { self.sync = sync }

    /// Carries the settings between the player's devices through the same server: a round trip
    /// now, on each return, and a moment after each change.
    func syncSettings(_ settings: SettingsStore<DemoSettings>, application: Application) {
      settingsSync = SettingsSync(settings: settings, client: sync.client, application: application)
    }

    /// The cloud's state for the HUD: "synced r12", "offline, 2 waiting", "conflict".
    var hud: (text: String, color: HUDColor) {
      let status = sync.status
      let color: HUDColor =
        switch status.state {
        case .synced, .idle, .ahead, .behind, .remoteOnly: (140, 230, 150)
        case .syncing: (200, 200, 200)
        case .offline: (255, 220, 120)
        case .conflict, .unauthorized: (255, 120, 100)
        }
      return (status.hud, color)
    }

    /// A conflict left to the player, as the "which save?" dialog shows it; nil when none waits.
    var pendingChoice: ConflictChoice? {
      let status = sync.status
      guard status.state == .conflict, let report = status.conflicts.last, report.outcome == .pending,
        let comparison = report.comparison
      else { return nil }
      let clock = DateFormatter()
      clock.dateFormat = "HH:mm"
      func line(_ side: ConflictSide) -> String {
        "\(side.text), saved at \(clock.string(from: Date(timeIntervalSince1970: Double(side.savedAt) / 1000)))"
      }
      return ConflictChoice(
        id: "\(report.ours)-\(report.theirs)", ours: line(comparison.ours), theirs: line(comparison.theirs),
        fields: comparison.differences.filter { !$0.inSummary }.prefix(5).map(\.text))
    }

    /// Settles the conflict with the player's choice: this device's save, or the cloud's. The
    /// other is kept (a kept generation, or a revision on the server). `done` runs at the
    /// application's `update()` with the generation written here to restore (the cloud's save),
    /// or nil (ours stays, and goes up on top of theirs), and the error if it failed.
    func resolve(
      keepingOurs: Bool, application: Application, done: @escaping @MainActor @Sendable (Int?, String?) -> Void
    ) {
      let sync = self.sync
      // Off the main thread: the window's loop never yields to the main actor's queue.
      Task.detached {
        let report = await sync.resolve(taking: .side(keepingOurs ? .ours : .theirs))
        let error = report.error.map { "\($0)" }
        application.deliverOnUpdate { done(report.restore, error) }
      }
    }

    /// The `cloud` object of `--json`.
    var json: [String: Any] {
      var json = Self.json(sync.status)
      json["transferred"] = Self.json(sync.client.transferred)
      return json
    }

    /// Attaches cloud sync to `game` when `--cloud` is given; nil without it. A token that
    /// cannot be read is an error line, not a crash: the game plays on without the cloud.
    /// `onEvent` gets each event's line.
    static func attach(_ options: StasisDemo, to game: Game, onEvent: (@Sendable (String) -> Void)? = nil)
      -> DemoCloud?
    {
      guard let url = options.cloud else { return nil }
      let token: String
      if let file = options.tokenFile {
        do {
          token = try LoginFile.token(fromFile: file)
        } catch {
          FileHandle.standardError.write(Data("stasis-demo: \(error)\n".utf8))
          return nil
        }
      } else {
        token = ProcessInfo.processInfo.environment["STASIS_TOKEN"] ?? ""
      }
      let device = options.device ?? ProcessInfo.processInfo.hostName
      var configuration = CloudSyncConfiguration(policy: DemoSaveFormat.conflictPolicy(named: options.conflictPolicy)!)
      configuration.transfer.deltas = !options.wholeUploads
      let transport: any CloudTransport =
        options.uploadRate.map { ThrottledCloudTransport(wrapped: URLSessionCloudTransport(), bytesPerSecond: $0) }
        ?? URLSessionCloudTransport()
      let cloud = CloudSync(
        coordinator: game.coordinator, credentials: CloudCredentials(url: url, token: token, device: device),
        configuration: configuration, transport: transport)
      game.coordinator.syncPatience = .milliseconds(Int64((options.syncPatience * 1000).rounded()))
      if let onEvent { cloud.onEvent { onEvent("cloud: \($0)") } }
      return DemoCloud(sync: cloud)
    }

    private static func json(_ status: CloudStatus) -> [String: Any] {
      [
        "base": status.base ?? NSNull(), "uploaded": status.uploaded, "downloaded": status.downloaded,
        "pending": status.pending, "state": status.hud,
        "conflicts": status.conflicts.map { conflict in
          [
            "base": conflict.base ?? NSNull(), "ours": conflict.ours, "theirs": conflict.theirs,
            "policy": conflict.decidedBy.rawValue, "result": conflict.outcome.rawValue,
            "revision": conflict.revision ?? NSNull(),
            "keptGeneration": conflict.keptGeneration ?? NSNull(), "fields": Array(conflict.fields.prefix(20)),
            "fieldCount": conflict.fields.count, "sections": conflict.sections.map(\.description),
            "fromOurs": conflict.takenFromOurs, "fromTheirs": conflict.takenFromTheirs,
            "note": conflict.note ?? NSNull(),
          ] as [String: Any]
        },
        "events": status.events.map { "cloud: \($0)" },
      ]
    }

    /// What went over the wire, for `--json`: the files uploaded and their sizes (what whole
    /// uploads would have sent), the bodies really sent (deltas, parts, a cut part again), and
    /// the downloads that came as deltas.
    private static func json(_ counts: TransferCounts) -> [String: Any] {
      [
        "filesUploaded": counts.filesUploaded, "fileBytesUploaded": counts.fileBytesUploaded,
        "bytesSent": counts.bytesSent, "deltasReceived": counts.deltasReceived,
        "fileBytesReceived": counts.fileBytesReceived, "bytesReceived": counts.bytesReceived,
      ]
    }
  }
#else
  /// A build without the `Cloud` trait: `--cloud` is refused when the options are checked.
  @MainActor
  final class DemoCloud {
    var hud: (text: String, color: HUDColor) { ("", (0, 0, 0)) }
    var json: [String: Any] { [:] }
    var pendingChoice: ConflictChoice? { nil }
    func resolve(
      keepingOurs: Bool, application: Application, done: @escaping @MainActor @Sendable (Int?, String?) -> Void
    ) {}
    func syncSettings(_ settings: SettingsStore<DemoSettings>, application: Application) {}

    static func attach(_ options: StasisDemo, to game: Game, onEvent: (@Sendable (String) -> Void)? = nil)
      -> DemoCloud?
    { nil }
  }
#endif
