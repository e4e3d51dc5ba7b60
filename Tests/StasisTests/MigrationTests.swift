import Foundation
import Stasis
import Testing

/// Schema v1 of a small game, as it shipped: the fixture `Fixtures/schema-v1.stasis` was
/// written with these types (set STASIS_WRITE_FIXTURES=1 to write it again).
private enum V1 {
  struct Score: Codable { var points: Int64 }
  // v1 saved its camera fields in snake case; v2 renames them.
  struct Camera: Codable {
    var posX: Double
    var posY: Double
    var shake: Double
    enum CodingKeys: String, CodingKey {
      case posX = "pos_x"
      case posY = "pos_y"
      case shake
    }
  }
  struct State: Codable, Sendable {
    var score: Score
    var camera: Camera
  }
  static let codec = SaveCodec<State>(game: GameIdentity(name: "migration-demo", build: "1.0", schemaVersion: 1))
  static let state = State(score: Score(points: 4200), camera: Camera(posX: 12.5, posY: -4, shake: 0.3))
}

/// Schema v2: `score.multiplier` added, `camera.shake` removed, `pos_x`/`pos_y` renamed `x`/`y`,
/// `camera.zoom` added.
private enum V2 {
  struct Score: Codable, Equatable, SaveDefaults {
    var points: Int64 = 0
    var multiplier: Double = 1
    static var saveDefault: Score { Score() }
  }
  struct Camera: Codable, Equatable, SaveDefaults {
    var x: Double = 0
    var y: Double = 0
    var zoom: Double = 2
    static var saveDefault: Camera { Camera() }
  }
  struct State: Codable, Equatable, Sendable {
    var score: Score
    var camera: Camera
  }

  static var codec: SaveCodec<State> {
    var migrations = SchemaMigrations()
    migrations.register(from: 1) { tree in
      guard var camera = tree[field: "camera"] else { return }
      camera.renameField("pos_x", to: "x")
      camera.renameField("pos_y", to: "y")
      camera.removeField("shake")
      tree[field: "camera"] = camera
    }
    return SaveCodec<State>(
      game: GameIdentity(name: "migration-demo", build: "2.0", schemaVersion: 2), migrations: migrations)
  }
}

@Suite("Schema migration")
struct MigrationTests {
  static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures/schema-v1.stasis")

  @Test("the committed fixture is a format-1 file holding what the v1 types write; its header reads as format 2's")
  func fixtureIsCurrent() throws {
    // The fixture was written by format 1 (before the game's own summary) and stays so: it is
    // what `stasis reformat` rewrites, and what every reader must still read.
    let committed = try [UInt8](Data(contentsOf: Self.fixture))
    let document = try SaveFileFormat.decode(committed)
    let header = try committed.withUnsafeBytes { try SaveFileFormat.readHeader($0) }
    #expect(header.formatVersion == 1)
    #expect(header.createdAt == 1_763_800_000_000)
    #expect(document.summary.slot == "fixture")
    #expect(document.summary.details == .object(SaveObject([("level", .int64(0)), ("score", .int64(4200))])))
    #expect(document.summary.progress == nil && document.summary.device == "")
    let sections = try V1.codec.document(for: V1.state, summary: SaveSummary(), createdAt: 0).sections
    #expect(document.sections == sections, "the v1 types no longer write what the fixture holds")
  }

  @Test("a v1 save loads into v2: the added field takes its default, the removed is dropped, the renamed moves")
  func v1LoadsIntoV2() throws {
    let bytes = try [UInt8](Data(contentsOf: Self.fixture))
    let document = try SaveFileFormat.decode(bytes, path: "schema-v1.stasis")
    #expect(document.game.schemaVersion == 1)
    let (state, report) = try V2.codec.load(from: document)
    #expect(state == V2.State(score: .init(points: 4200, multiplier: 1), camera: .init(x: 12.5, y: -4, zoom: 2)))
    #expect(report.migrations == [LoadReport.MigrationStep(from: 1, to: 2)])
    #expect(report.defaultedFields == ["score.multiplier", "camera.zoom"])
    #expect(report.droppedFields.isEmpty)
    #expect(report.lines.first == "schema 1 → 2: 1 → 2")
  }

  @Test("without the rename migration, loading fails naming the field instead of losing it")
  func withoutMigration() throws {
    let bytes = try [UInt8](Data(contentsOf: Self.fixture))
    let plain = SaveCodec<V2.State>(game: GameIdentity(name: "migration-demo", schemaVersion: 2))
    let error = #expect(throws: SaveFileError.self) { try plain.state(from: try SaveFileFormat.decode(bytes)) }
    #expect(error?.kind == .droppedField)
    #expect(error?.context.part == "camera")
    #expect(error?.context.field == "pos_x")
    #expect(error?.message.contains("camera.pos_y, camera.shake") == true)
  }

  @Test("a save from a newer schema is refused with its own error")
  func newerRefused() throws {
    let bytes = SaveFileFormat.encode(
      try V2.codec.document(for: V2.State(score: .init(), camera: .init()), summary: SaveSummary(), createdAt: 0))
    do {
      _ = try V1.codec.state(from: try SaveFileFormat.decode(bytes), path: "new.stasis")
      Issue.record("a v2 save loaded into v1")
    } catch {
      #expect(error.kind == .newerSchema)
      #expect(
        error.description
          == "new.stasis: newer schema version in header: schema version 2; this build of migration-demo knows up to 1 (update the game to load it)"
      )
    }
  }

  @Test("a failing migration is a migrationFailed error")
  func failingMigration() throws {
    struct Refusal: Error {}
    var migrations = SchemaMigrations()
    migrations.register(from: 1) { _ in throw Refusal() }
    let codec = SaveCodec<V2.State>(
      game: GameIdentity(name: "migration-demo", schemaVersion: 2), migrations: migrations)
    let bytes = try [UInt8](Data(contentsOf: Self.fixture))
    let error = #expect(throws: SaveFileError.self) { try codec.state(from: try SaveFileFormat.decode(bytes)) }
    #expect(error?.kind == .migrationFailed)
    #expect(error?.underlyingError is Refusal, "the migration's own error, as a value")
  }

  @Test("a field the type cannot decode keeps the DecodingError, with its coding path")
  func decodingErrorKept() throws {
    struct Renamed: Codable { var health: Int }
    let value = SaveValue.object(SaveObject([("hp", .int64(3))]))
    let error = #expect(throws: SaveFileError.self) { try SaveValueDecoder().decode(Renamed.self, from: value) }
    #expect(error?.kind == .missingField)
    #expect(error?.context.field == "health")
    guard case .keyNotFound(let key, _)? = error?.underlyingError as? DecodingError else {
      Issue.record("not the DecodingError: \(String(describing: error?.underlyingError))")
      return
    }
    #expect(key.stringValue == "health")
  }
}
