// A small roguelike written against Stasis 0.10.0's API, as an adopter of the previous release
// wrote it: what 0.11.0 deprecated is used on purpose (a save's `Result` from `wait()`, a
// conflict resolved by a policy given a name). It must compile with deprecation warnings only,
// each saying what to write now (`scripts/compat.sh` checks that), and run (`CompatGameTests`).
// Do not update it to the new names: it is the previous release's adopter. (0.9.0's names, which
// 0.10.0 deprecated, were removed in 0.11.0 as promised.)
import Foundation
import Stasis
import StasisCloud

// MARK: The game

struct Hero: Codable, Equatable, Sendable {
  var name = "Ada"
  var gold = 0
  var depth = 1
}

struct Item: Codable, Equatable, Sendable {
  var id: Int
  var charges: Int
}

struct RunState: Codable, Equatable, Sendable {
  var hero = Hero()
  var inventory: [Item] = [Item(id: 1, charges: 3)]
  var log: [String] = []
  var turn: Int64 = 0
}

@MainActor
final class Roguelike: SaveableGame {
  var state = RunState()
  var isPaused = false
  func snapshot() -> RunState { state }
  func restore(_ saved: RunState) throws { state = saved }
  func summary(of state: RunState) throws -> SaveSummary {
    SaveSummary(frame: state.turn, progress: Double(state.hero.depth))
  }

  func step() {
    state.turn += 1
    state.hero.gold += 3
    if state.turn % 20 == 0 { state.hero.depth += 1 }
  }
}

// MARK: 0.10.0's calls

@MainActor
func attachCloud(_ coordinator: SaveCoordinator<Roguelike>, url: String) -> CloudSync {
  var configuration = CloudSyncConfiguration(
    policy: .merge(rules: MergeRules(["hero.gold": .max, "inventory": .byKey("id")]), fallback: .mostRecent))
  configuration.onConflict = { (conflict: Conflict) in
    conflict.theirs.summary.playTime > conflict.ours.summary.playTime ? .theirs : .ours
  }
  let cloud = CloudSync(
    coordinator: coordinator, credentials: CloudCredentials(url: url, token: "compat-token", device: "compat"),
    configuration: configuration)
  cloud.onEvent { event in print("cloud: \(event.message)") }
  return cloud
}

func hud(_ status: CloudStatus) -> String {
  switch status.state {
  case .idle, .synced: return status.hud
  case .syncing: return "syncing"
  case .offline: return "offline"
  case .conflict: return "conflict"
  case .unauthorized: return "token refused"
  default: return status.hud
  }
}

func merged(_ reports: [ConflictReport]) -> Int {
  reports.filter { $0.outcome == .merged && $0.decidedBy == .merge }.count
}

func settled(_ values: [ContestedValue]) -> [String] { values.map(\.path) }

func migrations(_ report: LoadReport) -> [LoadReport.MigrationStep] { report.migrations }

func token(_ path: String) -> String? { try? CloudCredentials.token(fromFile: path) }

func client(_ url: String) -> CloudClient {
  CloudClient(credentials: CloudCredentials(url: url, token: "compat-token"))
}

/// 0.10.0's `wait()`, which returned the save's `Result`.
@MainActor
func saveAndSay(_ coordinator: SaveCoordinator<Roguelike>) -> String {
  let result: Result<SaveReceipt, SaveFileError> = coordinator.saveNow().wait()
  switch result {
  case .success(let receipt): return "saved generation \(receipt.generation)"
  case .failure(let error): return "not saved: \(error.kind)"
  }
}

/// 0.10.0's resolve, with the policy's name given beside it.
func resolveByRecent(_ cloud: CloudSync) async -> SyncState? {
  await cloud.resolve(with: .mostRecent, named: "recent").state
}

// MARK: The run: launch, play, background, foreground, quit

@MainActor
func run(saves: String, cloudURL: String) -> Int32 {
  let game = Roguelike()
  let codec = SaveCodec<RunState>(game: GameIdentity(name: "compat-roguelike", build: "0.9", schemaVersion: 1))
  let coordinator = SaveCoordinator(game: game, store: SaveStore(directory: saves), codec: codec, slot: "run")
  coordinator.autosaveInterval = 10
  var restoreFailed = false
  coordinator.onEvent = { event in
    switch event {
    case .loadFailed(let error): restoreFailed = error.kind != .notFound
    default: break
    }
    print("event: \(event)")
  }
  let cloud = attachCloud(coordinator, url: cloudURL)
  let app = Application(delegate: coordinator)
  app.launch(options: LaunchOptions(restoreSlot: "run"))
  if restoreFailed, coordinator.restoreFailure != nil { try? coordinator.resolveRestoreFailure(.startOver) }
  // The loop: step while playing; a held game (catching up, a failed restore) only updates.
  var frame: Int64 = 0
  for _ in 0..<20_000 where frame < 60 {
    if app.state == .active, !game.isPaused {
      game.step()
      frame += 1
      coordinator.didStep(frame: frame)
    } else {
      usleep(1_000)  // a frame's wait: the demo draws here
    }
    app.update()
  }
  app.enterBackground()
  app.waitForBackgroundWork()
  app.enterForeground()
  coordinator.waitForSaves()
  print("hud: \(hud(cloud.status)); merged: \(merged(cloud.status.conflicts))")
  print("client: \(client(cloudURL).credentials.url)")
  _ = (saveAndSay, resolveByRecent)  // compiled as a 0.10.0 game wrote them; the run above saves as before
  print("turn \(game.state.turn), gold \(game.state.hero.gold), depth \(game.state.hero.depth)")
  _ = settled([])
  _ = token("/nonexistent/alice.token")
  _ = migrations(LoadReport(storedSchema: 1, currentSchema: 1))
  app.terminate()
  app.waitForBackgroundWork()
  return game.state.turn > 0 ? 0 : 1
}

let arguments = CommandLine.arguments
let saves = arguments.count > 1 ? arguments[1] : "CompatSaves"
let url = arguments.count > 2 ? arguments[2] : "http://127.0.0.1:9"
exit(MainActor.assumeIsolated { run(saves: saves, cloudURL: url) })
