// The upgrading guide's Swift (Stasis.docc/Upgrading.md), compiled (GuideTests checks every block is here).
import Stasis
import StasisCloud

/// A loop that handles a hold: it steps only while the game plays, draws meanwhile, and answers
/// a failed restore (here at once; a real game asks the player).
@MainActor
func heldLoop(app: Application, game: SnippetGame, coordinator: SaveCoordinator<SnippetGame>, frames: Int64) {
  coordinator.onEvent = { event in
    switch event {
    case .held(let reason, let duration):  // when the hold begins, then every 10 s
      print("held for \(duration): \(reason)")
    case .loadFailed(let error):
      print("nothing restored: \(error)")
    default:
      break
    }
  }
  var frame: Int64 = 0
  while frame < frames {
    if app.state == .active, !game.isPaused {
      frame += 1
      coordinator.didStep(frame: frame)
    } else if case .restoreFailure? = coordinator.heldReason, let failure = coordinator.restoreFailure {
      let choice: RestoreChoice = failure.olderGeneration.map { .loadGeneration($0) } ?? .startOver
      try? coordinator.resolveRestoreFailure(choice)  // the generations that failed stay kept
    }
    app.update()  // draw here: a held game is paused, not frozen
  }
}

/// 0.10's names for 0.9's: the sync is the coordinator's, its status one vocabulary, its
/// outcomes enums.
@MainActor
func upgradedCloud(coordinator: SaveCoordinator<SnippetGame>, token: String) -> CloudSync {
  let cloud = CloudSync(
    coordinator: coordinator,
    credentials: CloudCredentials(url: "https://saves.example.com", token: token, device: "steam-deck"))
  cloud.onEvent { event in print("cloud: \(event)") }
  switch cloud.status.state {
  case .offline, .unauthorized: print("playing offline")
  default: print(cloud.status.hud)
  }
  let merged = cloud.status.conflicts.filter { $0.outcome == .merged && $0.decidedBy == .merge }
  print("\(merged.count) conflicts merged")
  return cloud
}

// MARK: - GettingStarted: the main actor, and what a bulk array's element requires

@MainActor  // the game, its loop and its coordinator: the lifecycle's thread
final class Arena: SaveableGame {
  var state = ArenaState()
  var isPaused = false
  func snapshot() -> ArenaState { state }  // a value copy: the only work on the main thread
  func restore(_ saved: ArenaState) throws { state = saved }
}

func newestFrame(in folder: String) async throws -> Int64 {  // any thread: the store is Sendable
  try SaveStore(directory: folder).load(codec: arenaCodec, slot: "autosave").document.summary.frame
}

struct Agent: BulkStorable {
  var x: Float = 0, y: Float = 0
  var home: UInt32 = 0, mood: UInt8 = 0
  static let bulkLayout = BulkLayout(
    of: Agent.self, [.field("x", \.x), .field("y", \.y), .field("home", \.home), .field("mood", \.mood)])
}

struct ArenaState: Codable, Sendable {
  var agents: [Agent] = []  // the declared fields' bytes: 13 an agent, not its stride of 16
  var tick: Int64 = 0
}

let arenaCodec = SaveCodec<ArenaState>(game: GameIdentity(name: "arena", schemaVersion: 1))

struct Rock: BulkStorable {  // stride 16: 8 + 1 bytes of fields, 7 of padding; 9 bytes an element in a file
  var x: Double = 0
  var dead: UInt8 = 0
  static let bulkLayout = BulkLayout(of: Rock.self, [.field("x", \.x), .field("dead", \.dead)])
}

// MARK: - From 0.10 to 0.11

func receiptOfASave(store: SaveStore, state: GameState) throws {
  let codec = snippetCodec
  let receipt = try store.save(state, codec: codec, slot: "autosave").wait()
  print("saved generation \(receipt.generation)")
}
