import Foundation
import GRDB

extension SQLiteBackend {
  package func createUpload(
    player: Player, slot: String, id: String, at time: Int64, length: Int64, headers: String, deltaRevision: Int64?
  ) async throws -> UploadCreation {
    try await pool.write { db in
      var piece: Int64?
      if let deltaRevision {
        // Read and pinned under the one writer, so no collection runs between.
        guard
          let row = try Row.fetchOne(
            db, sql: "SELECT piece FROM revisions WHERE player_id = ? AND slot = ? AND revision = ?",
            arguments: [player.id, slot, deltaRevision])
        else { return .baseGone }
        piece = row["piece"]
      }
      try db.execute(
        sql: """
          INSERT INTO uploads (id, player_id, slot, created_at, length, received, headers, delta_piece)
          VALUES (?, ?, ?, ?, ?, 0, ?, ?)
          """, arguments: [id, player.id, slot, time, length, headers, piece])
      return .created(deltaPiece: piece)
    }
  }

  package func upload(player: Player, id: String) async throws -> PendingUpload? {
    try await pool.read { db in
      try Row.fetchOne(
        db,
        sql: """
          SELECT id, slot, created_at, length, received, headers, delta_piece FROM uploads
          WHERE id = ? AND player_id = ?
          """, arguments: [id, player.id]
      ).map {
        PendingUpload(
          id: $0["id"], slot: $0["slot"], createdAt: $0["created_at"], length: $0["length"], received: $0["received"],
          headers: $0["headers"], deltaPiece: $0["delta_piece"])
      }
    }
  }

  package func appendToUpload(player: Player, id: String, offset: Int64, bytes: [UInt8]) async throws -> UploadAppend {
    try await pool.write { db in
      guard
        let row = try Row.fetchOne(
          db, sql: "SELECT length, received FROM uploads WHERE id = ? AND player_id = ?", arguments: [id, player.id])
      else { return .notFound }
      let received: Int64 = row["received"]
      let length: Int64 = row["length"]
      guard offset == received else { return .mismatch(received: received) }
      guard Int64(bytes.count) <= length - received else { return .tooLong(length: length) }
      guard !bytes.isEmpty else { return .appended(received: received) }
      try db.execute(
        sql: "INSERT INTO upload_parts (player_id, upload_id, position, data) VALUES (?, ?, ?, ?)",
        arguments: [player.id, id, offset, Data(bytes)])
      try db.execute(
        sql: "UPDATE uploads SET received = ? WHERE player_id = ? AND id = ?",
        arguments: [received + Int64(bytes.count), player.id, id])
      return .appended(received: received + Int64(bytes.count))
    }
  }

  package func uploadBody(player: Player, id: String) async throws -> [UInt8]? {
    try await pool.read { db in
      guard
        try Row.fetchOne(db, sql: "SELECT 1 FROM uploads WHERE id = ? AND player_id = ?", arguments: [id, player.id])
          != nil
      else { return nil }
      var body: [UInt8] = []
      for data in try Data.fetchAll(
        db, sql: "SELECT data FROM upload_parts WHERE player_id = ? AND upload_id = ? ORDER BY position",
        arguments: [player.id, id])
      {
        body.append(contentsOf: data)
      }
      return body
    }
  }

  package func removeUpload(player: Player, id: String) async throws -> Bool {
    try await pool.write { db in
      try db.execute(sql: "DELETE FROM uploads WHERE id = ? AND player_id = ?", arguments: [id, player.id])
      guard db.changesCount > 0 else { return false }
      try db.execute(
        sql: "DELETE FROM upload_parts WHERE player_id = ? AND upload_id = ?", arguments: [player.id, id])
      return true
    }
  }

  package func expireUploads(before time: Int64) async throws {
    try await pool.write { db in
      try db.execute(
        sql: """
          DELETE FROM upload_parts WHERE (player_id, upload_id) IN (
            SELECT player_id, id FROM uploads WHERE created_at < ?)
          """,
        arguments: [time])
      try db.execute(sql: "DELETE FROM uploads WHERE created_at < ?", arguments: [time])
    }
  }

  package func pieceFile(player: Player, slot: String, piece: Int64) async throws -> [UInt8]? {
    try await pool.read { db in
      guard
        try Row.fetchOne(
          db, sql: "SELECT 1 FROM pieces WHERE id = ? AND player_id = ? AND slot = ?",
          arguments: [piece, player.id, slot]) != nil
      else { return nil }
      return try Self.rebuild(db, piece: piece)
    }
  }

  package func storedBytes(player: Player, slot: String) async throws -> Int64 {
    try await pool.read { db in
      try Int64.fetchOne(
        db,
        sql: """
          SELECT (SELECT COALESCE(SUM(length(data)), 0) FROM pieces WHERE player_id = ?1 AND slot = ?2)
            + (SELECT COALESCE(SUM(length(file)), 0) FROM revisions WHERE player_id = ?1 AND slot = ?2)
          """, arguments: [player.id, slot]) ?? 0
    }
  }
}
