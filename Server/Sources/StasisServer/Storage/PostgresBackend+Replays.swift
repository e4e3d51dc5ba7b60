import Foundation
import Logging
import PostgresNIO

extension PostgresBackend {
  package func putReplay(player: Player, _ draft: ReplayDraft, keep: Int) async throws -> (StoredReplay, created: Bool)
  {
    let logger = self.logger
    return try await writeTransaction { connection in
      // The player's row, as an upload locks it: one player's replays are stored one at a time,
      // so the pruning sees every replay stored before it.
      try await connection.query("SELECT 1 FROM players WHERE id = \(player.id) FOR UPDATE", logger: logger)
      var existed = false
      let found = try await connection.query(
        "SELECT 1::BIGINT FROM replays WHERE player_id = \(player.id) AND name = \(draft.name)", logger: logger)
      for try await _ in found.decode(Int64.self) { existed = true }
      try await connection.query(
        PostgresQuery(
          unsafeSQL: ServerSchema.replayUpsert { "$\($0)" },
          binds: try Self.binds(
            player.id, draft.name, draft.updatedAt, draft.game, draft.build, draft.startTick, draft.ticks,
            Int64(draft.bytes.count), Data(draft.sha256), Data(draft.bytes))), logger: logger)
      try await connection.query(
        PostgresQuery(
          unsafeSQL: ServerSchema.replayPrune { "$\($0)" },
          binds: try Self.binds(player.id, Int64(max(1, keep)), draft.name)),
        logger: logger)
      let rows = try await connection.query(
        PostgresQuery(
          unsafeSQL: "SELECT \(ServerSchema.replayColumns) FROM replays WHERE player_id = $1 AND name = $2",
          binds: try Self.binds(player.id, draft.name)), logger: logger)
      for try await columns in rows.decode(ReplayColumns.self) { return (Self.replay(columns), !existed) }
      throw StorageError(.damaged, "the replay just stored is not there")
    }
  }

  package func replays(player: Player) async throws -> [StoredReplay] {
    let rows = try await client.query(
      PostgresQuery(
        unsafeSQL:
          "SELECT \(ServerSchema.replayColumns) FROM replays WHERE player_id = $1 ORDER BY updated_at DESC, id DESC",
        binds: try Self.binds(player.id)), logger: logger)
    var replays: [StoredReplay] = []
    for try await columns in rows.decode(ReplayColumns.self) { replays.append(Self.replay(columns)) }
    return replays
  }

  package func replay(player: Player, id: Int64) async throws -> (StoredReplay, [UInt8])? {
    let rows = try await client.query(
      PostgresQuery(
        unsafeSQL: "SELECT \(ServerSchema.replayColumns), bytes FROM replays WHERE player_id = $1 AND id = $2",
        binds: try Self.binds(player.id, id)), logger: logger)
    for try await c in rows.decode((Int64, String, Int64, String, String, Int64, Int64, Int64, Data, Data).self) {
      return (Self.replay((c.0, c.1, c.2, c.3, c.4, c.5, c.6, c.7, c.8)), [UInt8](c.9))
    }
    return nil
  }

  typealias ReplayColumns = (Int64, String, Int64, String, String, Int64, Int64, Int64, Data)

  static func replay(_ c: ReplayColumns) -> StoredReplay {
    StoredReplay(
      id: c.0, name: c.1, updatedAt: c.2, game: c.3, build: c.4, startTick: c.5, ticks: c.6, length: c.7,
      sha256: [UInt8](c.8))
  }
}
