import Foundation
import GRDB

extension SQLiteBackend {
  package func addBundle(player: Player, _ draft: BundleDraft, keep: Int) async throws -> (StoredBundle, created: Bool)
  {
    let sha256 = draft.sha256
    return try await pool.write { db in
      let inserted = try Int64.fetchOne(
        db, sql: ServerSchema.bundleInsert(withID: true) { "?\($0)" },
        arguments: [
          player.id, draft.createdAt, draft.game, draft.build, draft.tick, draft.summary, draft.bytes.count,
          Data(sha256), Data(draft.bytes), try Self.nextID(db, "desync_bundles"),
        ])
      if inserted != nil {
        try db.execute(sql: ServerSchema.bundlePrune { "?\($0)" }, arguments: [player.id, max(1, keep)])
      }
      guard
        let row = try Row.fetchOne(
          db,
          sql: "SELECT \(ServerSchema.bundleColumns) FROM desync_bundles WHERE player_id = ? AND sha256 = ?",
          arguments: [player.id, Data(sha256)])
      else { throw StorageError(.damaged, "the bundle just stored is not there") }
      return (Self.bundle(row), inserted != nil)
    }
  }

  package func bundles(player: Player) async throws -> [StoredBundle] {
    try await pool.read { db in
      try Row.fetchAll(
        db, sql: "SELECT \(ServerSchema.bundleColumns) FROM desync_bundles WHERE player_id = ? ORDER BY id DESC",
        arguments: [player.id]
      ).map(Self.bundle)
    }
  }

  package func bundle(player: Player, id: Int64) async throws -> (StoredBundle, [UInt8])? {
    try await pool.read { db in
      try Row.fetchOne(
        db, sql: "SELECT \(ServerSchema.bundleColumns), bytes FROM desync_bundles WHERE player_id = ? AND id = ?",
        arguments: [player.id, id]
      ).map { (Self.bundle($0), [UInt8]($0["bytes"] as Data)) }
    }
  }

  static func bundle(_ row: Row) -> StoredBundle {
    StoredBundle(
      id: row["id"], createdAt: row["created_at"], game: row["game"], build: row["build"], tick: row["tick"],
      summary: row["summary"], length: row["length"], sha256: [UInt8](row["sha256"] as Data))
  }
}
