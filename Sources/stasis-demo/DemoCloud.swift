import DemoGame
import Foundation
import Stasis
import StasisCloud

/// `--cloud URL`: the demo's slot synced with a stasis-server through the coordinator.
@MainActor
enum DemoCloud {
  /// Attaches cloud sync to `game` when `--cloud` is given; nil without it. A token that
  /// cannot be read is an error line, not a crash: the game plays on without the cloud.
  static func attach(_ options: StasisDemo, to game: Game, onEvent: (@Sendable (CloudEvent) -> Void)? = nil)
    -> CloudSaveSync?
  {
    guard let url = options.cloud else { return nil }
    let token: String
    if let file = options.tokenFile {
      do {
        token = try CloudLogin.token(fromFile: file)
      } catch {
        FileHandle.standardError.write(Data("stasis-demo: \(error)\n".utf8))
        return nil
      }
    } else {
      token = ProcessInfo.processInfo.environment["STASIS_TOKEN"] ?? ""
    }
    let device = options.device ?? ProcessInfo.processInfo.hostName
    let cloud = CloudSaveSync(
      coordinator: game.coordinator, server: CloudServer(url: url, token: token, device: device),
      configuration: CloudSyncConfiguration(policy: DemoSaveFormat.conflictPolicy(named: options.conflictPolicy)!))
    game.coordinator.syncPatience = .milliseconds(Int64((options.syncPatience * 1000).rounded()))
    if let onEvent { cloud.sync.onEvent(onEvent) }
    return cloud
  }

  /// The `cloud` object of `--json`.
  static func json(_ status: CloudStatus) -> [String: Any] {
    [
      "base": status.base ?? NSNull(), "uploaded": status.uploaded, "downloaded": status.downloaded,
      "pending": status.pending, "state": status.hud,
      "conflicts": status.conflicts.map { conflict in
        [
          "base": conflict.base ?? NSNull(), "ours": conflict.ours, "theirs": conflict.theirs,
          "policy": conflict.policy, "result": conflict.result, "revision": conflict.revision ?? NSNull(),
          "keptGeneration": conflict.keptGeneration ?? NSNull(), "fields": Array(conflict.fields.prefix(20)),
          "fieldCount": conflict.fields.count, "sections": conflict.sections.map(\.description),
          "fromOurs": conflict.takenFromOurs, "fromTheirs": conflict.takenFromTheirs, "note": conflict.note ?? NSNull(),
        ] as [String: Any]
      },
      "events": status.events.map(\.description),
    ]
  }
}
