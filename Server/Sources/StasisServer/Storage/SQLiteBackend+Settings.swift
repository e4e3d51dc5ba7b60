import Foundation
import GRDB
@_spi(Simulation) import Stasis

extension SQLiteBackend {
  package func mergeSettings(player: Player, _ settings: SettingsFile, limits: PlayerLimits) async throws
    -> SettingsMerge
  {
    do {
      return try await pool.write { db in
        var taken = 0
        for entry in settings.entries {
          let row = StoredSetting(entry)
          try db.execute(
            sql: ServerSchema.settingsUpsert(conditional: settingsUpsertIsConditional) { "?\($0)" },
            arguments: [player.id, row.name, row.milliseconds, row.counter, row.device, Data(row.value)])
          taken += db.changesCount
        }
        let usage = try Row.fetchOne(db, sql: ServerSchema.settingsUsage("?"), arguments: [player.id])
        let bytes: Int64 = usage?[0] ?? 0
        let keys: Int64 = usage?[1] ?? 0
        if bytes > limits.settingsBytes {
          // Thrown, so the transaction rolls back: nothing of this merge stays.
          throw SettingsOverLimit(
            message: "the player's \(keys) settings would take \(bytes) bytes; the limit is \(limits.settingsBytes)")
        }
        return .merged(try Self.settings(db, player: player), taken: taken)
      }
    } catch let over as SettingsOverLimit {
      return .overLimit(over.message)
    }
  }

  package func settings(player: Player) async throws -> SettingsFile {
    try await pool.read { db in try Self.settings(db, player: player) }
  }

  static func settings(_ db: Database, player: Player) throws -> SettingsFile {
    let rows = try Row.fetchAll(db, sql: ServerSchema.settingsRows("?"), arguments: [player.id])
    return SettingsFile(
      entries: try rows.map { row in
        try StoredSetting(
          name: row["name"], milliseconds: row["milliseconds"], counter: row["counter"], device: row["device"],
          value: [UInt8](row["value"] as Data)
        ).entry()
      })
  }
}

/// A merge that would pass the player's settings limit: thrown inside the transaction to roll
/// it back.
struct SettingsOverLimit: Error {
  var message: String
}
