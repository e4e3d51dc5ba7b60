// The cloud-save articles' Swift, compiled (GuideTests checks every block is here).
import Stasis
import StasisCloud

/// A game for the snippets: its state is the snippets' `GameState`.
@MainActor
final class SnippetGame: SaveableGame {
  var state = GameState(score: Score(), level: Level(), camera: Camera(), physics: Physics())
  var isPaused = false
  func snapshot() -> GameState { state }
  func restore(_ saved: GameState) throws { state = saved }
}

@MainActor
func cloudSaves(coordinator: SaveCoordinator<SnippetGame>, token: String) -> CloudSync {
  let cloud = CloudSync(
    coordinator: coordinator,  // becomes coordinator.sync: every save goes up, launch and return catch up
    credentials: CloudCredentials(url: "https://saves.example.com", token: token, device: "steam-deck"),
    configuration: CloudSyncConfiguration(
      policy: .merge(rules: mergeRules(), fallback: .longestPlayTime)))
  cloud.onEvent { event in print("cloud: \(event)") }  // "cloud: uploaded generation 3 as r12 (base r11)"
  let hud = cloud.status.hud  // "synced r12", "offline, 2 waiting", "conflict"
  print(hud)
  return cloud
}

func manualConflicts() -> CloudSyncConfiguration {
  var configuration = CloudSyncConfiguration(policy: .manual)
  configuration.onConflict = { conflict in
    // Base, ours and theirs, whole and verified: ask the player, or decide here. nil: later.
    .side(conflict.theirs.summary.playTime > conflict.ours.summary.playTime ? .theirs : .ours)
  }
  return configuration
}

/// The snippets' game declares how two devices' saves merge.
func mergeRules() -> MergeRules {
  // Declared: these merge on their own. Anything else both devices changed comes whole
  // from the fallback's side, section by section.
  let rules = MergeRules(
    ["score.points": .max, "level.index": .max],
    groups: [["physics", "camera"]])  // the world and the camera that follows it: one device's
  return rules
}

/// A city builder's declarations: entities by a struct id, one group, the summary's treasury.
func cityMergeRules() -> MergeRules {
  var rules = MergeRules([
    "agents": .byKey("id"),  // id is a struct {index, generation}: compared by its encoded value
    "ledger.entries": .union,  // each device's transactions, both kept
  ])
  rules.group(["map", "buildings"])  // the map and what stands on it: one device's, never a mix
  rules.summarize("treasury", from: "ledger.balance")  // `stasis merge`'s summary; a sync uses summary(of:)
  return rules
}

/// A roguelike's declarations: every kind of rule.
func roguelikeMergeRules() -> MergeRules {
  let rules = MergeRules(
    [
      "player.gold": .max,  // numbers: max, min; Booleans too
      "inventory": .byKey("id"),  // entities by id: what either device picked up or used up
      "inventory[*].charges": .min,  // an item both devices used: the fewer charges left
      "log": .union,  // messages from both devices; a set, the same way
      "settings": .ours,  // this device's, whole (or .theirs)
      "player.name": .custom { field in field.ours },  // the game decides; nil: the fallback
    ],
    groups: [["map", "monsters", "stairs"]])  // one level, always from one device
  return rules
}

@MainActor
func syncSettings(settings: SettingsStore<GameOptions>, app: Application, token: String) -> SettingsSync<GameOptions> {
  let credentials = CloudCredentials(url: "https://saves.example.com", token: token, device: "steam-deck")
  // A round trip on launch, on every return, after a change, and on the way to the background.
  let settingsSync = SettingsSync(settings: settings, credentials: credentials, application: app)
  return settingsSync  // keep it for as long as the game runs
}

/// A merged save's summary, made from the merged document.
func summarizingMerges() -> CloudSyncConfiguration {
  let configuration = CloudSyncConfiguration(
    policy: .merge(rules: mergeRules(), fallback: .longestPlayTime),
    summarize: { document in  // the merged document, not the state
      let state = try snippetCodec.state(from: document)
      return try SaveSummary(LevelSummary(level: state.level.index, score: state.score.points))
    })
  return configuration
}

/// A server whose database fails over answers 503: `unavailable`, retried (CloudSaves.md).
func failingOver(sync: CloudSync) async {
  let report = await sync.synchronize()
  if let error = report.error, error.kind == .unavailable {
    // The server is there but cannot store now; the upload is queued and retried.
    print("cloud busy, retrying in \(error.retryAfter ?? .seconds(1))")
  }
}

#if AsyncHTTPClient
  import AsyncHTTPClient
  import NIOSSL

  /// A transport for a studio whose server's certificate comes from its own CA.
  func studioTrustedTransport() -> HTTPCloudTransport {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .file("/etc/mygame/studio-ca.pem")
    let transport = HTTPCloudTransport(
      http: HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls)))
    return transport
  }
#endif

/// A conflict left to the player, shown by what differs (CloudSaves.md, "Show the player what differs").
@MainActor
func showWhatDiffers(sync: CloudSync, application: Application) {
  sync.onEvent(in: application) { event in
    guard case .conflict(let report) = event, report.outcome == .pending,
      let comparison = report.comparison
    else { return }
    // "laptop: level 3, 2 h 10 min · phone: level 2, 3 h 05 min; gold 1,200 against 450"
    print("which save? \(comparison)")
    for field in comparison.differences where !field.inSummary { print(field.text) }
  }
}
