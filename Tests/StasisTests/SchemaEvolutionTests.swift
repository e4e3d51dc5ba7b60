import Stasis
import Testing

/// A settings screen's state, before and after a build that renamed `map` to `mapName`.
enum Before {
  struct Settings: Codable {
    var map = "desert"
    var volume = 0.4
    var legacyFlag = true
  }
  struct Player: Codable {
    var name = "ada"
    var hp = 12
  }
  struct World: Codable {
    var player = Player()
    var seed: UInt64 = 7
  }
  struct Body: BulkStorable, Equatable {
    var x: Float = 0
    var spin: Float = 0
    var id: UInt32 = 0
    static let bulkLayout = BulkLayout(of: Body.self, [.field("x", \.x), .field("spin", \.spin), .field("id", \.id)])
  }
  struct Physics: Codable { var bodies: [Body] = (0..<5).map { Body(x: Float($0), spin: 1, id: UInt32($0)) } }
  struct State: Codable, Sendable {
    var settings = Settings()
    var world = World()
    var physics = Physics()
    var achievements = [3, 5]
  }
  static let codec = SaveCodec<State>(game: GameIdentity(name: "evolving", schemaVersion: 1))
  static func document(_ state: State = State(), raw: [(name: String, bytes: [UInt8])] = []) throws -> SaveDocument {
    try codec.document(for: state, summary: SaveSummary(), createdAt: 0, rawSections: raw)
  }
}

struct EvolvedSettings: Codable, Equatable, SaveDefaults {
  var mapName = ""
  var volume = 0.8
  var legacyFlag = false
  static var saveDefault: EvolvedSettings { EvolvedSettings() }
}
struct EvolvedPlayer: Codable, Equatable { var name = "" }
struct EvolvedWorld: Codable, Equatable {
  var player = EvolvedPlayer()
  var seed: UInt64 = 0
}
struct EvolvedBody: BulkStorable, Equatable {
  var x: Float = 0
  var id: UInt32 = 0
  var z: Float = -1
  static let bulkLayout = BulkLayout(of: EvolvedBody.self, [.field("x", \.x), .field("id", \.id), .field("z", \.z)])
}
struct EvolvedPhysics: Codable, Equatable { var bodies: [EvolvedBody] = [] }

func evolvingCodec<State>(_: State.Type, migrations: SchemaMigrations = SchemaMigrations()) -> SaveCodec<State> {
  SaveCodec(game: GameIdentity(name: "evolving", schemaVersion: 2), migrations: migrations)
}

@Suite("Schema evolution: no field lost silently")
struct SchemaEvolutionTests {
  struct Renamed: Codable, Sendable {
    var settings: EvolvedSettings
    var world: Before.World
    var physics: Before.Physics
    var achievements: [Int]
  }

  @Test("a rename without its migration, on a type with SaveDefaults, is a droppedField error naming the field")
  func renameWithoutMigration() throws {
    let error = #expect(throws: SaveFileError.self) {
      try evolvingCodec(Renamed.self).state(from: try Before.document(), path: "slot/0000000001.stasis")
    }
    #expect(error?.kind == .droppedField)
    #expect(error?.context.part == "settings")
    #expect(error?.context.field == "map")
    #expect(error?.context.file == "slot/0000000001.stasis")
    #expect(error?.suggestion?.contains("migration") == true)
  }

  @Test("the same rename with its migration loads, and the report says what ran and what took defaults")
  func renameWithMigration() throws {
    var migrations = SchemaMigrations()
    migrations.register(from: 1) { tree in
      tree[field: "settings"]?.renameField("map", to: "mapName")
      tree[field: "settings"]?.removeField("legacyFlag")
    }
    var before = Before.State()
    before.settings.volume = 0.25
    let (state, report) = try evolvingCodec(Renamed.self, migrations: migrations).load(
      from: try Before.document(before))
    #expect(state.settings == EvolvedSettings(mapName: "desert", volume: 0.25, legacyFlag: false))
    #expect(report.migrations == [LoadReport.MigrationStep(from: 1, to: 2)])
    #expect(report.defaultedFields == ["settings.legacyFlag"])
    #expect(report.droppedFields.isEmpty)
    #expect(!report.isClean)
  }

  struct DeclaredSettings: Codable, Equatable, SaveRemovedFields {
    var map = ""
    var volume = 0.0
    static let removedSaveFields = ["legacyFlag"]
  }
  struct Declared: Codable, Sendable {
    var settings: DeclaredSettings
    var world: Before.World
    var physics: Before.Physics
    var achievements: [Int]
  }

  @Test("a field the type declares removed is dropped on purpose and reported")
  func declaredRemoval() throws {
    let (state, report) = try evolvingCodec(Declared.self).load(from: try Before.document())
    #expect(state.settings == DeclaredSettings(map: "desert", volume: 0.4))
    #expect(report.droppedFields == ["settings.legacyFlag"])
    #expect(report.lines.contains("dropped by declaration: settings.legacyFlag"))
  }

  struct NestedDrop: Codable, Sendable {
    var settings: Before.Settings
    var world: EvolvedWorld
    var physics: Before.Physics
    var achievements: [Int]
  }

  @Test("a field removed from a nested object is an error naming its whole path")
  func nested() throws {
    let error = #expect(throws: SaveFileError.self) {
      try evolvingCodec(NestedDrop.self).state(from: try Before.document())
    }
    #expect(error?.kind == .droppedField)
    #expect(error?.context.part == "world")
    #expect(error?.context.field == "player.hp")
  }

  struct BulkDrop: Codable, Sendable {
    var settings: Before.Settings
    var world: Before.World
    var physics: EvolvedPhysics
    var achievements: [Int]
  }

  @Test("a field removed from a BulkStorable struct is an error; an added one takes init()'s value and is reported")
  func bulkField() throws {
    let error = #expect(throws: SaveFileError.self) {
      try evolvingCodec(BulkDrop.self).state(from: try Before.document())
    }
    #expect(error?.kind == .droppedField)
    #expect(error?.context.part == "physics")
    #expect(error?.context.field == "bodies[].spin")
  }

  struct DeclaredBody: BulkStorable, Equatable, SaveRemovedFields {
    var x: Float = 0
    var id: UInt32 = 0
    var z: Float = -1
    static let bulkLayout = BulkLayout(of: DeclaredBody.self, [.field("x", \.x), .field("id", \.id), .field("z", \.z)])
    static let removedSaveFields = ["spin"]
  }
  struct DeclaredPhysics: Codable { var bodies: [DeclaredBody] }
  struct BulkDeclared: Codable, Sendable {
    var settings: Before.Settings
    var world: Before.World
    var physics: DeclaredPhysics
    var achievements: [Int]
  }

  @Test("a bulk field declared removed is dropped and reported; the added one is reported as defaulted")
  func bulkDeclared() throws {
    let (state, report) = try evolvingCodec(BulkDeclared.self).load(from: try Before.document())
    #expect(state.physics.bodies.map(\.x) == [0, 1, 2, 3, 4])
    #expect(state.physics.bodies.allSatisfy { $0.z == -1 })
    #expect(report.droppedFields == ["physics.bodies[].spin"])
    #expect(report.defaultedFields == ["physics.bodies[].z"])
  }

  struct SectionGone: Codable, Sendable {
    var settings: Before.Settings
    var world: Before.World
    var physics: Before.Physics
  }
  struct SectionDeclaredGone: Codable, Sendable, SaveRemovedFields {
    var settings: Before.Settings
    var world: Before.World
    var physics: Before.Physics
    static let removedSaveFields = ["achievements"]
  }

  @Test("a whole section the state no longer has is an error unless the state declares it removed")
  func removedSection() throws {
    let error = #expect(throws: SaveFileError.self) {
      try evolvingCodec(SectionGone.self).state(from: try Before.document())
    }
    #expect(error?.kind == .droppedField)
    #expect(error?.context.part == "achievements")
    let (_, report) = try evolvingCodec(SectionDeclaredGone.self).load(from: try Before.document())
    #expect(report.droppedFields == ["achievements"])
  }

  @Test("a save written by the same schema reports nothing; an unknown raw section is reported and kept")
  func cleanAndUnknownSections() throws {
    let same = SaveCodec<Before.State>(game: GameIdentity(name: "evolving", schemaVersion: 1))
    #expect(try same.load(from: try Before.document()).report.isClean)
    let document = try Before.document(raw: [("thumbnail", [1, 2]), ("replay", [9, 9, 9])])
    let (_, report) = try same.load(from: document)
    #expect(report.unknownSections == ["replay"])
    #expect(document[section: "replay"] != nil)
  }
}
