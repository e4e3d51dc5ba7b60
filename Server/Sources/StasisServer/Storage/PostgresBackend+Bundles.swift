import Foundation
import Logging
import PostgresNIO

extension PostgresBackend {
  package func addBundle(player: Player, _ draft: BundleDraft, keep: Int) async throws -> (StoredBundle, created: Bool)
  {
    let logger = self.logger
    let sha256 = Data(draft.sha256)
    return try await writeTransaction { connection in
      // The player's row, as an upload locks it: one player's bundles are stored one at a
      // time, so the pruning sees every bundle stored before it and never the one it stores.
      try await connection.query("SELECT 1 FROM players WHERE id = \(player.id) FOR UPDATE", logger: logger)
      var created = false
      let inserted = try await connection.query(
        PostgresQuery(
          unsafeSQL: ServerSchema.bundleInsert { "$\($0)" },
          binds: try Self.binds(
            player.id, draft.createdAt, draft.game, draft.build, draft.tick, draft.summary, Int64(draft.bytes.count),
            sha256, Data(draft.bytes))), logger: logger)
      for try await _ in inserted.decode(Int64.self) { created = true }
      if created {
        try await connection.query(
          PostgresQuery(
            unsafeSQL: ServerSchema.bundlePrune { "$\($0)" }, binds: try Self.binds(player.id, Int64(max(1, keep)))),
          logger: logger)
      }
      let rows = try await connection.query(
        PostgresQuery(
          unsafeSQL: "SELECT \(ServerSchema.bundleColumns) FROM desync_bundles WHERE player_id = $1 AND sha256 = $2",
          binds: try Self.binds(player.id, sha256)), logger: logger)
      for try await columns in rows.decode(BundleColumns.self) { return (Self.bundle(columns), created) }
      throw StorageError(.damaged, "the bundle just stored is not there")
    }
  }

  package func bundles(player: Player) async throws -> [StoredBundle] {
    let rows = try await client.query(
      PostgresQuery(
        unsafeSQL: "SELECT \(ServerSchema.bundleColumns) FROM desync_bundles WHERE player_id = $1 ORDER BY id DESC",
        binds: try Self.binds(player.id)), logger: logger)
    var bundles: [StoredBundle] = []
    for try await columns in rows.decode(BundleColumns.self) { bundles.append(Self.bundle(columns)) }
    return bundles
  }

  package func bundle(player: Player, id: Int64) async throws -> (StoredBundle, [UInt8])? {
    let rows = try await client.query(
      PostgresQuery(
        unsafeSQL: "SELECT \(ServerSchema.bundleColumns), bytes FROM desync_bundles WHERE player_id = $1 AND id = $2",
        binds: try Self.binds(player.id, id)), logger: logger)
    for try await c in rows.decode((Int64, Int64, String, String, Int64, String, Int64, Data, Data).self) {
      return (Self.bundle((c.0, c.1, c.2, c.3, c.4, c.5, c.6, c.7)), [UInt8](c.8))
    }
    return nil
  }

  typealias BundleColumns = (Int64, Int64, String, String, Int64, String, Int64, Data)

  static func bundle(_ c: BundleColumns) -> StoredBundle {
    StoredBundle(
      id: c.0, createdAt: c.1, game: c.2, build: c.3, tick: c.4, summary: c.5, length: c.6, sha256: [UInt8](c.7))
  }
}
