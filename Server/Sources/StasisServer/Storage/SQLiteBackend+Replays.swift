import Foundation
import GRDB

extension SQLiteBackend {
  package func putReplay(player: Player, _ draft: ReplayDraft, keep: Int) async throws -> (StoredReplay, created: Bool)
  {
    try await pool.write { db in
      let existed =
        try Row.fetchOne(
          db, sql: "SELECT 1 FROM replays WHERE player_id = ? AND name = ?", arguments: [player.id, draft.name]) != nil
      try db.execute(
        sql: ServerSchema.replayUpsert(withID: true) { "?\($0)" },
        arguments: [
          player.id, draft.name, draft.updatedAt, draft.game, draft.build, draft.startTick, draft.ticks,
          draft.bytes.count, Data(draft.sha256), Data(draft.bytes), try Self.nextID(db, "replays"),
        ])
      try db.execute(sql: ServerSchema.replayPrune { "?\($0)" }, arguments: [player.id, max(1, keep), draft.name])
      guard
        let row = try Row.fetchOne(
          db, sql: "SELECT \(ServerSchema.replayColumns) FROM replays WHERE player_id = ? AND name = ?",
          arguments: [player.id, draft.name])
      else { throw StorageError(.damaged, "the replay just stored is not there") }
      return (Self.replay(row), !existed)
    }
  }

  package func replays(player: Player) async throws -> [StoredReplay] {
    try await pool.read { db in
      try Row.fetchAll(
        db,
        sql: "SELECT \(ServerSchema.replayColumns) FROM replays WHERE player_id = ? ORDER BY updated_at DESC, id DESC",
        arguments: [player.id]
      ).map(Self.replay)
    }
  }

  package func replay(player: Player, id: Int64) async throws -> (StoredReplay, [UInt8])? {
    try await pool.read { db in
      try Row.fetchOne(
        db, sql: "SELECT \(ServerSchema.replayColumns), bytes FROM replays WHERE player_id = ? AND id = ?",
        arguments: [player.id, id]
      ).map { (Self.replay($0), [UInt8]($0["bytes"] as Data)) }
    }
  }

  static func replay(_ row: Row) -> StoredReplay {
    StoredReplay(
      id: row["id"], name: row["name"], updatedAt: row["updated_at"], game: row["game"], build: row["build"],
      startTick: row["start_tick"], ticks: row["ticks"], length: row["length"], sha256: [UInt8](row["sha256"] as Data))
  }
}
