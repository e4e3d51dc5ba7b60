// The Swift that was the README's guide before it moved to the DocC articles, compiled: every
// ```swift block of README.md and of the articles appears in this folder (ReadmeTests and
// GuideTests check it), in a context that makes it build.
import Logging
import Stasis
import StasisCloud

// MARK: - Saving and loading

struct Score: Codable, Sendable { var points: Int64 = 0 }
struct Level: Codable, Sendable { var index = 1 }
struct Camera: Codable, Sendable { var x = 0.0, y = 0.0 }
struct Body: BulkStorable {
  var x: Float = 0
  var y: Float = 0
  static let bulkLayout = BulkLayout(of: Body.self, [.field("x", \.x), .field("y", \.y)])
}
struct Physics: Codable, Sendable { var bodies: [Body] = [] }
struct LevelSummary: Codable { var level: Int, score: Int64 }

struct GameState: Codable, Sendable {  // each top-level field becomes a section
  var score: Score
  var level: Level
  var camera: Camera
  var physics: Physics  // holds [Body], a BulkStorable: raw bytes on disk
}

func savingAndLoading(state: GameState, migrations: SchemaMigrations) throws {
  let store = SaveStore(directory: "Saves")  // generationsToKeep: 3
  let codec = SaveCodec<GameState>(
    game: GameIdentity(name: "my-game", build: "1.0", schemaVersion: 2), migrations: migrations)

  // Off the main thread: encode, checksum, temp file, fsync, rename, fsync the folder.
  let summary = try SaveSummary(LevelSummary(level: 2, score: 1234), playTime: 754, progress: 0.4)  // the picker's
  let handle = store.save(state, codec: codec, slot: "autosave", summary: summary)
  handle.onCompletion { result in print(result) }  // or handle.wait(), or handle.cancel()

  // The newest generation that passes every check; says which newer ones failed and why.
  let loaded = try store.load(codec: codec, slot: "autosave")
  if let fallback = loaded.fallbackDescription { print(fallback) }  // "generation 5 is damaged (…); …"
}

// MARK: - The lifecycle, by hand (SaveCoordinator does all of this)

@MainActor
final class HandMadeDelegate: ApplicationDelegate {
  var engine = Engine()
  let store = SaveStore(directory: "Saves")
  let codec = SaveCodec<GameState>(game: GameIdentity(name: "my-game"))

  struct Engine {
    var isPaused = false
    var state = GameState(score: Score(), level: Level(), camera: Camera(), physics: Physics())
    func snapshot() -> GameState { state }
  }

  func applicationDidEnterBackground(_ application: Application) {
    engine.isPaused = true
    let snapshot = engine.snapshot()  // a value copy, on the main thread
    // A background task that ends when the save is durable; if the budget runs out first,
    // its expiration handler cancels the save and the previous generation stays the newest.
    application.saveInBackground(named: "save autosave") {
      store.save(snapshot, codec: codec, slot: "autosave")
    }
  }
}

// MARK: - Versions, migrations and newer builds

let logger = Logger(label: "my-game")
func showUpdatePrompt(_ message: String) { print(message) }

func loadingAcrossVersions(store: SaveStore, codec: SaveCodec<GameState>) {
  do {
    let loaded = try store.load(codec: codec, slot: "autosave")
    for line in loaded.report.lines { logger.info("\(line)") }  // "schema 1 → 2: 1 → 2", "defaulted: camera.zoom"
    if let fallback = loaded.fallbackDescription { logger.warning("\(fallback)") }
  } catch {
    // error is a SaveFileError. With a newer build's save on top, its description reads:
    // "…/0000000007.stasis: newer schema version in header: generation 7: schema version 3;
    //  this build of my-game knows up to 2 (update the game to load it; it is kept; to play on
    //  from generation 6 instead, `stasis recover autosave --generation 6`)"
    if error.kind == .newerSchema { showUpdatePrompt(error.description) }
  }
}

func declaringChanges() -> SchemaMigrations {
  var migrations = SchemaMigrations()
  migrations.register(from: 1) { state in  // v1 → v2
    state[field: "settings"]?.renameField("map", to: "mapName")
    state[field: "settings"]?.removeField("legacyFlag")
  }
  return migrations
}

struct Particle: BulkStorable, SaveRemovedFields {  // or declare a removal on the type
  static let removedSaveFields = ["spin"]  // bulk layouts too
  var x: Float = 0
  static let bulkLayout = BulkLayout(of: Particle.self, [.field("x", \.x)])
}

// MARK: - Turning signing on, rotating a key

func signingPolicies(key: SigningKey, newKey: SigningKey, oldKey: SigningKey) -> [SaveStore] {
  // No signing (the default): saves unsigned, signatures not checked.
  let plain = SaveStore(directory: "Saves")  // signing: .none

  // Turning signing on in an update: new saves are signed, the players' unsigned saves still load.
  let turningOn = SaveStore(directory: "Saves", signing: .signed(with: key, acceptingUnsigned: true))

  // Rotating the key: sign with the new one, verify with both.
  let rotating = SaveStore(
    directory: "Saves", signing: .signed(with: newKey, retired: [oldKey], acceptingUnsigned: true))

  // Once every player has saved again (or when unsigned saves must be refused): `unsigned` errors.
  let strict = SaveStore(directory: "Saves", signing: .signed(with: newKey))
  return [plain, turningOn, rotating, strict]
}

// MARK: - Hostile values

struct Player: Codable, Sendable {
  var health = 100.0
}
struct PlayerState: Codable, Sendable {
  var player = Player()
}

extension PlayerState: ValidatedSaveState {
  func validate() throws(InvalidStateError) {
    guard player.health.isFinite, player.health >= 0 else {
      throw InvalidStateError(field: "player.health", value: "\(player.health)", reason: "must be finite and ≥ 0")
    }
  }
}

func levelAwareCodec(levelCount: Int) -> SaveCodec<GameState> {
  var codec = SaveCodec<GameState>(game: GameIdentity(name: "my-game"))
  codec.validator = { state throws(InvalidStateError) in  // checks that need the game's content
    guard (1...levelCount).contains(state.level.index) else {
      throw InvalidStateError(field: "level.index", value: "\(state.level.index)", reason: "no such level")
    }
  }
  return codec
}

// MARK: - What a sync sends

func wholeFilesOnly() -> CloudSyncConfiguration {
  var configuration = CloudSyncConfiguration(policy: .mostRecent)
  configuration.transfer.deltas = false  // whole files up and down; a large upload still goes in resumable parts
  return configuration
}
