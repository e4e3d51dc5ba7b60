import Foundation
import Logging
import PostgresNIO
import Stasis

extension PostgresBackend {
  package func mergeSettings(player: Player, _ settings: SettingsFile, limits: PlayerLimits) async throws
    -> SettingsMerge
  {
    let logger = self.logger
    do {
      return try await writeTransaction { connection in
        // The player's row, as an upload locks it: two merges of one player's settings take
        // turns, so the limit below is exact. The upserts alone already keep every key's
        // latest stamp, whatever order merges commit in.
        try await connection.query("SELECT 1 FROM players WHERE id = \(player.id) FOR UPDATE", logger: logger)
        var taken = 0
        for entry in settings.entries {  // in key order, as every merge takes them
          let row = StoredSetting(entry)
          let rows = try await connection.query(
            PostgresQuery(
              unsafeSQL: ServerSchema.settingsUpsert(conditional: settingsUpsertIsConditional) { "$\($0)" }
                + " RETURNING 1::BIGINT",
              binds: try Self.binds(
                player.id, row.name, row.milliseconds, row.counter, row.device, Data(row.value))),
            logger: logger)
          for try await _ in rows.decode(Int64.self) { taken += 1 }
        }
        let usage = try await connection.query(
          PostgresQuery(unsafeSQL: ServerSchema.settingsUsage("$1"), binds: try Self.binds(player.id)),
          logger: logger)
        for try await (bytes, keys) in usage.decode((Int64, Int64).self) where bytes > limits.settingsBytes {
          // Thrown, so the transaction rolls back: nothing of this merge stays.
          throw SettingsOverLimit(
            message: "the player's \(keys) settings would take \(bytes) bytes; the limit is \(limits.settingsBytes)")
        }
        return .merged(try await Self.settings(connection, player, logger), taken: taken)
      }
    } catch let error as PostgresTransactionError {
      if let over = error.closureError as? SettingsOverLimit { return .overLimit(over.message) }
      throw error
    }
  }

  package func settings(player: Player) async throws -> SettingsFile {
    let logger = self.logger
    return try await client.withConnection { connection in try await Self.settings(connection, player, logger) }
  }

  static func settings(_ connection: PostgresConnection, _ player: Player, _ logger: Logger) async throws
    -> SettingsFile
  {
    let rows = try await connection.query(
      PostgresQuery(unsafeSQL: ServerSchema.settingsRows("$1"), binds: try binds(player.id)), logger: logger)
    var entries: [SettingsFile.Entry] = []
    for try await (name, milliseconds, counter, device, value) in rows.decode(
      (String, Int64, Int64, String, Data).self)
    {
      entries.append(
        try StoredSetting(
          name: name, milliseconds: milliseconds, counter: counter, device: device, value: [UInt8](value)
        ).entry())
    }
    return SettingsFile(entries: entries)
  }
}
