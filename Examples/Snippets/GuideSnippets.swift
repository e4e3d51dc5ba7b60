// The DocC articles' Swift, compiled: every ```swift block of Sources/Core/Stasis/Stasis.docc
// appears in a file under Examples/ (GuideTests checks it), in a context that makes it build.
import Foundation
import Logging
import Stasis
import StasisCloud
import StasisTesting

let snippetCodec = SaveCodec<GameState>(game: GameIdentity(name: "my-game", build: "1.0", schemaVersion: 2))

// MARK: - The landing page, and the articles' first examples

@MainActor
func landingPage(game: SnippetGame, folder: String, codec: SaveCodec<GameState>) -> Application {
  let coordinator = SaveCoordinator(game: game, store: SaveStore(directory: folder), codec: codec, slot: "autosave")
  let app = Application(delegate: coordinator)
  app.launch(options: LaunchOptions(restoreSlot: "autosave"))
  return app
}

@MainActor
final class BudgetDelegate: ApplicationDelegate {
  let engine = HandMadeDelegate.Engine()
  let store = SaveStore(directory: "Saves")
  let codec = snippetCodec

  func applicationDidEnterBackground(_ application: Application) {
    let snapshot = engine.snapshot()
    application.saveInBackground(named: "save autosave") {
      store.save(snapshot, codec: codec, slot: "autosave")
    }
  }
}

func faultsWithoutRoot(folder: String) -> SaveStore {
  let disk = FaultInjectingFileSystem()
  disk.fail(.fsync, times: 2, with: .ioError)
  let store = SaveStore(directory: folder, fileSystem: disk)
  return store
}

// MARK: - LoadReport's doc comment

func reportingTheLineage(store: SaveStore, codec: SaveCodec<GameState>, logger: Logger) throws {
  let loaded = try store.load(codec: codec, slot: "autosave")
  for line in loaded.report.lines { logger.info("\(line)") }  // "schema 1 → 2: 1 → 2", "defaulted: tank.armor"
}

// MARK: - LifecycleAndBudget: the budget, the clock, and headless loops

/// A loop that holds its thread: everything arrives at `app.update()`.
@MainActor
func loopThatHoldsItsThread(
  app: Application, game: SnippetGame, coordinator: SaveCoordinator<SnippetGame>, pollInput: () -> Bool,
  draw: () -> Void
) {
  var running = true
  var frame: Int64 = 0
  while running {
    running = pollInput()
    if app.state == .active, !game.isPaused {
      frame += 1
      coordinator.didStep(frame: frame)
    }
    app.update()  // saves that ended, cloud events, settings, timers, records: all here, in order
    draw()
  }
}

@MainActor
func configuredApplication(coordinator: SaveCoordinator<SnippetGame>) -> Application {
  let app = Application(
    delegate: coordinator,
    configuration: Application.Configuration(backgroundBudget: .seconds(5), clock: SystemClock()))
  return app
}

@MainActor
func headlessLoop(game: SnippetGame, coordinator: SaveCoordinator<SnippetGame>, app: Application, frames: Int64) {
  app.launch(options: LaunchOptions(restoreSlot: "autosave"))
  coordinator.waitForCatchUp()  // nothing to draw: block until the sync caught up, or its patience ran out
  var frame: Int64 = 0
  while frame < frames {
    if coordinator.isCatchingUp {  // back from the background: the game is held while the sync catches up
      coordinator.waitForCatchUp()
      continue
    }
    if !game.isPaused {
      frame += 1
      coordinator.didStep(frame: frame)
    }
    app.update()
  }
  let episode = app.quit()  // the quit's save and its upload, both ended (or cut by the budget) before it returns
  print(episode?.description ?? "not running")
}

// MARK: - TestingYourSavePath: a save the budget cuts off

@MainActor
func saveCutOffByTheBudget(game: SnippetGame, folder: String) throws -> Bool {
  let disk = FaultInjectingFileSystem()
  let clock = ManualClock()
  let coordinator = SaveCoordinator(
    game: game, store: SaveStore(directory: folder, fileSystem: disk), codec: snippetCodec, slot: "autosave")
  let app = Application(delegate: coordinator, configuration: Application.Configuration(clock: clock))
  app.launch()
  let first = try coordinator.saveNow().wait()  // generation 1, whole
  let again = try coordinator.saveNow().wait()  // the same state: nothing to write
  guard first.outcome == .written, again.outcome == .unchanged else { return false }
  game.state.score.points += 1  // a new state: the background save writes, so it reaches the gate
  disk.closeGate()  // the next write waits at the gate
  app.enterBackground()  // the background save starts, as a background task
  disk.reachedGate.wait()  // it is writing now
  clock.advance(by: .seconds(11))  // past the 10-second budget
  app.update()  // the expiration handler cancels the save
  disk.openGate()
  coordinator.waitForSaves()
  // The save failed with `cancelled`, and generation 1 is still the newest, whole.
  return try coordinator.store.generations(of: "autosave") == [1]
}

// MARK: - TestingYourSavePath: comparing states

@MainActor
func restoredBitForBit(game: SnippetGame, coordinator: SaveCoordinator<SnippetGame>) throws -> Bool {
  let before = try StateDigest.sha256(game.state)
  try coordinator.saveNow().wait()  // durable
  let restored = try coordinator.store.load(codec: snippetCodec, slot: "autosave").state
  return try StateDigest.sha256(restored) == before  // restored bit for bit
}

// MARK: - VersionsAndMigrations: building values, and the signing key

func splittingPosition() -> SchemaMigrations {
  var migrations = SchemaMigrations()
  // Schema 1 kept a monster's tile as one number, `pos` (y * 256 + x); schema 2 has `x` and `y`.
  migrations.register(from: 1) { state in
    guard case .array(let monsters)? = state[field: "monsters"] else { return }
    state[field: "monsters"] = .array(
      try monsters.map { monster in
        guard case .object(var fields) = monster, let pos = fields["pos"]?.int64Value else {
          throw InvalidStateError(field: "monsters", value: "\(monster)", reason: "no pos")
        }
        fields["pos"] = nil
        fields["x"] = .int64(pos % 256)  // new values are built from SaveValue's cases
        fields["y"] = .int64(pos / 256)
        fields.renameField("hp", to: "health")
        return .object(fields)
      })
  }
  return migrations
}

func signingWithTheGamesKey() throws -> SaveStore {
  // 32 random bytes made once (`head -c 32 /dev/urandom > game.key`), shipped with the build,
  // never committed; the same file is what `stasis verify --key-file game.key` takes.
  let secret = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "game.key")))
  let key = SigningKey(bytes: secret)
  return SaveStore(directory: "Saves", signing: .signed(with: key, acceptingUnsigned: true))
}

// MARK: - CloudSaves: the login, the device, merge rules and a policy by name

@MainActor
func cloudForThisDevice(game: SnippetGame, conflictPolicy: String) throws -> CloudSync {
  let token = try CloudCredentials.token(fromFile: "alice.token")  // the line `stasis-server players add alice` printed
  let store = SaveStore(directory: "Saves", device: "steam-deck")  // every save says where it was made
  let coordinator = SaveCoordinator(game: game, store: store, codec: snippetCodec, slot: "autosave")
  let rules: MergeRules = [
    "score.points": .max,
    "level.index": .custom { field in  // the game decides; nil leaves the field to the fallback
      guard let ours = field.ours?.int64Value, let theirs = field.theirs?.int64Value else { return nil }
      return .int64(Swift.max(ours, theirs))
    },
  ]
  let policy = ConflictPolicy(name: conflictPolicy, rules: rules, fallback: .longestPlayTime) ?? .mostRecent
  return CloudSync(
    coordinator: coordinator,
    credentials: CloudCredentials(url: "https://saves.example.com", token: token, device: "steam-deck"),
    configuration: CloudSyncConfiguration(policy: policy))
}

// MARK: - CloudSaves: deltas, parts, and what went over the wire

@MainActor
func deltasAndParts(coordinator: SaveCoordinator<SnippetGame>, server: CloudCredentials, wholeFiles: Bool) -> CloudSync
{
  var configuration = CloudSyncConfiguration(policy: .mostRecent)
  configuration.transfer = TransferOptions(partSize: 512 * 1024)  // a cut upload sends at most one part again
  if wholeFiles { configuration.transfer.deltas = false }  // whole files up and down, as before
  let cloud = CloudSync(coordinator: coordinator, credentials: server, configuration: configuration)
  let counts = cloud.client.transferred  // what this client sent and fetched so far
  print("sent \(counts.bytesSent) bytes for \(counts.fileBytesUploaded) bytes of saves")
  return cloud
}

// MARK: - Where builds meet: the hold on every path

@MainActor
func answeringTheHold(coordinator: SaveCoordinator<SnippetGame>, pickNewer: Bool) {
  coordinator.onEvent = { event in
    if case .held(let reason, _) = event { print("held \(reason)") }  // saves would fail: the game waits
  }
  if let failure = coordinator.restoreFailure, case .savedAlongside(let mine) = failure.reason,
    let older = failure.olderGeneration
  {
    // An older build saved beside this build's save: both are kept; the player picks one.
    try? coordinator.resolveRestoreFailure(.loadGeneration(pickNewer ? mine : older))
  }
}

// MARK: - GettingStarted: autosave a large state often

@MainActor
func largeStateAutosave(_ coordinator: SaveCoordinator<SnippetGame>) {
  coordinator.autosaveInterval = 1
  coordinator.autosaveOverlap = .skip  // at most one snapshot besides the game's state
}
