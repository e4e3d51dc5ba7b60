import Logging
import Stasis
import StasisCloud
import StasisMerge
import StasisTesting

/// The simulated game's state, whichever build holds it: what the checker's digests are of.
public struct GameModel: Codable, Sendable, Equatable {
  /// Steps played on this lineage.
  public var frame: Int64 = 0
  /// A score that changes with every step, from the seed.
  public var score: Int64 = 0
  /// The dungeon level the player is on: its map.
  public var depth: Int64 = 1
  /// The creatures of the level, each `depth * 1000 + position`: a creature of another level
  /// stands in a wall of this one (the roguelike's merge bug).
  public var creatures: [Int64] = [1000, 1001, 1002]
  /// The city builder's ledger: one entry per turn played, never removed, each unique in the
  /// run. A declared merge takes it as a union, so a merged state holds every entry of both
  /// sides; a merge against a base that one side does not continue drops the base's entries.
  public var ledger: [Int64] = []

  /// The game's own check of its world: every creature belongs to the level it is on.
  public var creaturesInWalls: Int { creatures.filter { $0 / 1000 != depth }.count }
  /// Play time in seconds (frame / 60), for the `playtime` policy.
  public var playTime: Double { Double(frame) / 60 }

  /// A fresh game.
  public init() {}

  /// The digest the checker compares: a restored state must have its digest when saved.
  public var digest: String { (try? StateDigest.sha256(self)) ?? "" }

  /// The game's summary of a state (its `summary(of:)`): what every save of it must carry.
  static func summary(of model: GameModel) -> SaveSummary {
    var summary = SaveSummary()
    summary.frame = model.frame
    summary.playTime = model.playTime
    summary.progress = Double(model.frame % 1000) / 1000
    return summary
  }
}

/// A build's state type: the model in that build's shape.
protocol BuildState: Codable, Sendable {
  init(_ model: GameModel)
  var model: GameModel { get }
}

/// Schema 1: the state as the first build saves it.
struct StateV1: BuildState {
  var frame: Int64
  var score: Int64
  var depth: Int64
  var creatures: [Int64]
  var ledger: [Int64]

  init(_ model: GameModel) {
    frame = model.frame
    score = model.score
    depth = model.depth
    creatures = model.creatures
    ledger = model.ledger
  }

  var model: GameModel {
    var model = GameModel()
    model.frame = frame
    model.score = score
    model.depth = depth
    model.creatures = creatures
    model.ledger = ledger
    return model
  }
}

/// Schema 2: `score` is renamed `points`, with a migration (or, in the broken build, without).
struct StateV2: BuildState {
  var frame: Int64
  var points: Int64
  var depth: Int64
  var creatures: [Int64]
  var ledger: [Int64]

  init(_ model: GameModel) {
    frame = model.frame
    points = model.score
    depth = model.depth
    creatures = model.creatures
    ledger = model.ledger
  }

  var model: GameModel {
    var model = GameModel()
    model.frame = frame
    model.score = points
    model.depth = depth
    model.creatures = creatures
    model.ledger = ledger
    return model
  }
}

/// Which build of the game a device runs.
public enum GameBuild: String, Sendable, CaseIterable {
  /// Schema 1.
  case v1
  /// Schema 2, with the migration from schema 1.
  case v2
  /// Schema 2 that forgot the migration: schema-1 saves are byte-valid but unreadable.
  case v2WithoutMigration = "v2-no-migration"
  /// Schema 3, the game moved to an entity-component system (``SimWorlds``): its creatures and
  /// its ledger are entity worlds, with the migrations from schemas 1 and 2. A quit that runs
  /// v2 runs it instead in part of the runs, from a generator of its own
  /// (``Simulation/worldsRandom``), so the builds the other draws choose are as they were.
  case v3World = "v3-world"

  /// The builds a quit draws from (the world build comes instead of v2, by its own draw).
  static let drawn: [GameBuild] = [.v1, .v2, .v2WithoutMigration]

  var schema: UInt32 {
    switch self {
    case .v1: 1
    case .v2, .v2WithoutMigration: 2
    case .v3World: 3
    }
  }

  /// The declared merge's rules as the world build has them: its ledger is a world, merged by
  /// entity (a union of the entries both sides spawned); the level still goes with its creatures.
  static let worldRules = MergeRules(["ledger": .byEntity], groups: [["depth", "creatures"]])

  /// `policy` as this build declares it: the world build's declared merge names its ledger's rule.
  func policy(_ policy: ConflictPolicy, declared: Bool) -> ConflictPolicy {
    guard self == .v3World, declared, case .merge(_, let fallback) = policy else { return policy }
    return .merge(rules: Self.worldRules, fallback: fallback)
  }

  static let gameName = "stasis-sim"

  var codecV1: SaveCodec<StateV1> {
    SaveCodec<StateV1>(game: GameIdentity(name: Self.gameName, build: rawValue, schemaVersion: 1))
  }

  var codecV2: SaveCodec<StateV2> {
    var migrations = SchemaMigrations()
    if self == .v2 { migrations.register(from: 1) { tree in tree.renameField("score", to: "points") } }
    return SaveCodec<StateV2>(
      game: GameIdentity(name: Self.gameName, build: rawValue, schemaVersion: 2), migrations: migrations)
  }

  /// Schema 3, with the migrations from 1 (through 2) and from 2: a schema-2 state's
  /// creatures and ledger are spawned as entities, in their order.
  static let codecV3: SaveCodec<StateV3> = {
    var migrations = SchemaMigrations()
    migrations.register(from: 1) { tree in tree.renameField("score", to: "points") }
    migrations.register(from: 2) { tree in
      let old = try SaveValueDecoder().decode(StateV2.self, from: tree)
      tree = try SaveValueEncoder().encode(StateV3(old.model))
    }
    return SaveCodec<StateV3>(
      game: GameIdentity(name: gameName, build: GameBuild.v3World.rawValue, schemaVersion: 3), migrations: migrations)
  }()

  /// A process of this build: its coordinator saves and loads with this build's codec. The
  /// world build's ECS ids start at `firstID`; with `rawReferences` its schema saves the leader
  /// a creature follows as a plain number (``SimWorlds/init(firstID:rawReferences:)``).
  @MainActor
  func process(
    store: SaveStore, disk: SimulatedDisk, slot: SaveSlot, server: CloudCredentials, transport: any CloudTransport,
    configuration: CloudSyncConfiguration, logger: Logger, firstID: UInt64, rawReferences: Bool
  ) -> any DeviceProcess {
    switch self {
    case .v1:
      return CoordinatedProcess(
        game: CoordinatedGame<StateV1>(), codec: codecV1, store: store, disk: disk, slot: slot, server: server,
        transport: transport, configuration: configuration, logger: logger)
    case .v2, .v2WithoutMigration:
      return CoordinatedProcess(
        game: CoordinatedGame<StateV2>(), codec: codecV2, store: store, disk: disk, slot: slot, server: server,
        transport: transport, configuration: configuration, logger: logger)
    case .v3World:
      let codec = Self.codecV3
      return CoordinatedProcess(
        game: WorldGame(worlds: SimWorlds(firstID: firstID, rawReferences: rawReferences), codec: codec),
        codec: codec, store: store, disk: disk, slot: slot, server: server, transport: transport,
        configuration: configuration, logger: logger)
    }
  }

  /// The model a file's bytes hold, for any build's file (the checker's reading).
  static func model(ofFile bytes: [UInt8]) -> GameModel? {
    guard let document = try? SaveFileFormat.decode(bytes, path: "sim") else { return nil }
    return model(of: document)
  }

  /// A save edited by a player's tool: its state changed (the score), written back without its
  /// signature, in the same schema. Nil when the bytes are not a save the checker reads.
  static func editedUnsigned(_ bytes: [UInt8]) -> [UInt8]? {
    guard let document = try? SaveFileFormat.decode(bytes, path: "edit"), var model = model(of: document) else {
      return nil
    }
    model.score &+= 1_000_000
    let edited: SaveDocument?
    switch document.game.schemaVersion {
    case 1:
      edited = try? SaveCodec<StateV1>(game: document.game).document(
        for: StateV1(model), summary: document.summary, createdAt: document.createdAt)
    case 2:
      edited = try? SaveCodec<StateV2>(game: document.game).document(
        for: StateV2(model), summary: document.summary, createdAt: document.createdAt)
    default:  // the worlds as they were, entity by entity; only the points change
      guard var state = try? codecV3.state(from: document) else { return nil }
      state.points = model.score
      edited = try? SaveCodec<StateV3>(game: document.game).document(
        for: state, summary: document.summary, createdAt: document.createdAt)
    }
    return edited.map { SaveFileFormat.encode($0) }
  }

  /// The model a document holds, for any build's document.
  static func model(of document: SaveDocument) -> GameModel? {
    switch document.game.schemaVersion {
    case 1: return (try? GameBuild.v1.codecV1.state(from: document))?.model
    case 2: return (try? GameBuild.v2.codecV2.state(from: document))?.model
    default: return (try? codecV3.state(from: document))?.model
    }
  }
}
