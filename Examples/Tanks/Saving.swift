// Everything the tank game does to adopt Stasis is in this file and the lines of main.swift
// that use `store`, `coordinator` and `app` (the README counts them).
import Stasis

extension Bullet: BulkStorable {  // 2,000 bullets go to disk as raw bytes
  static let bulkLayout = BulkLayout(
    of: Bullet.self, [.field("x", \.x), .field("y", \.y), .field("dx", \.dx), .field("dy", \.dy), .field("age", \.age)])
}

extension Tank: SaveDefaults {  // `armor` is new in schema 2: older saves take 0
  static var saveDefault: Tank { Tank() }
}

extension TanksState: ValidatedSaveState {  // a save with hostile values never reaches the game
  func validate() throws(InvalidStateError) {
    guard tank.x.isFinite, tank.y.isFinite, tank.heading.isFinite, bullets.count <= 2_000 else {
      throw InvalidStateError(field: "tank", value: "\(tank)", reason: "must be finite, with at most 2000 bullets")
    }
  }
}

extension TanksGame: SaveableGame {
  func snapshot() -> TanksState { state }
  func restore(_ saved: TanksState) throws { state = saved }
  func summary(of state: TanksState) throws -> SaveSummary {  // what the load menu shows
    try SaveSummary(TanksSummary(state), frame: state.frame, playTime: Double(state.frame) / 60)
  }
}

/// The tank game's saves: schema 2, and how a schema-1 save gets there.
let tanksCodec: SaveCodec<TanksState> = {
  var migrations = SchemaMigrations()
  migrations.register(from: 1) { $0[field: "settings"]?.renameField("musicVolume", to: "music") }  // 1 → 2
  return SaveCodec(game: GameIdentity(name: "tanks", build: "1.1", schemaVersion: 2), migrations: migrations)
}()
