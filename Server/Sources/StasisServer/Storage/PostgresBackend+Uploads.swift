import Foundation
import Logging
import PostgresNIO

extension PostgresBackend {
  package func createUpload(
    player: Player, slot: String, id: String, at time: Int64, length: Int64, headers: String, deltaRevision: Int64?
  ) async throws -> UploadCreation {
    let logger = self.logger
    return try await writeTransaction { connection in
      var piece: Int64?
      if let deltaRevision {
        // The slot's row shared: a writer of its revisions (which collects its pieces) holds it
        // for update, so the piece read here is pinned before any collection can see it unpinned.
        try await connection.query(
          "SELECT 1 FROM slots WHERE player_id = \(player.id) AND name = \(slot) FOR SHARE", logger: logger)
        var found = false
        let rows = try await connection.query(
          """
          SELECT piece FROM revisions WHERE player_id = \(player.id) AND slot = \(slot) AND revision = \(deltaRevision)
          """, logger: logger)
        for try await value in rows.decode(Int64?.self) {
          found = true
          piece = value
        }
        guard found else { return .baseGone }
      }
      try await connection.query(
        """
        INSERT INTO uploads (id, player_id, slot, created_at, length, received, headers, delta_piece)
        VALUES (\(id), \(player.id), \(slot), \(time), \(length), 0, \(headers), \(piece))
        """, logger: logger)
      return .created(deltaPiece: piece)
    }
  }

  package func upload(player: Player, id: String) async throws -> PendingUpload? {
    let rows = try await client.query(
      """
      SELECT id, slot, created_at, length, received, headers, delta_piece FROM uploads
      WHERE id = \(id) AND player_id = \(player.id)
      """, logger: logger)
    for try await (id, slot, createdAt, length, received, headers, piece) in rows.decode(
      (String, String, Int64, Int64, Int64, String, Int64?).self)
    {
      return PendingUpload(
        id: id, slot: slot, createdAt: createdAt, length: length, received: received, headers: headers,
        deltaPiece: piece)
    }
    return nil
  }

  package func appendToUpload(player: Player, id: String, offset: Int64, bytes: [UInt8]) async throws -> UploadAppend {
    let logger = self.logger
    return try await writeTransaction { connection in
      var found: (length: Int64, received: Int64)?
      let rows = try await connection.query(
        "SELECT length, received FROM uploads WHERE id = \(id) AND player_id = \(player.id) FOR UPDATE", logger: logger)
      for try await (length, received) in rows.decode((Int64, Int64).self) { found = (length, received) }
      guard let (length, received) = found else { return .notFound }
      guard offset == received else { return .mismatch(received: received) }
      guard Int64(bytes.count) <= length - received else { return .tooLong(length: length) }
      guard !bytes.isEmpty else { return .appended(received: received) }
      try await connection.query(
        """
        INSERT INTO upload_parts (player_id, upload_id, position, data)
        VALUES (\(player.id), \(id), \(offset), \(Data(bytes)))
        """,
        logger: logger)
      let now = received + Int64(bytes.count)
      try await connection.query(
        "UPDATE uploads SET received = \(now) WHERE player_id = \(player.id) AND id = \(id)", logger: logger)
      return .appended(received: now)
    }
  }

  package func uploadBody(player: Player, id: String) async throws -> [UInt8]? {
    guard try await upload(player: player, id: id) != nil else { return nil }
    let rows = try await client.query(
      "SELECT data FROM upload_parts WHERE player_id = \(player.id) AND upload_id = \(id) ORDER BY position",
      logger: logger)
    var body: [UInt8] = []
    for try await data in rows.decode(Data.self) { body.append(contentsOf: data) }
    return body
  }

  package func removeUpload(player: Player, id: String) async throws -> Bool {
    let logger = self.logger
    return try await writeTransaction { connection in
      let rows = try await connection.query(
        "DELETE FROM uploads WHERE id = \(id) AND player_id = \(player.id) RETURNING id", logger: logger)
      var removed = false
      for try await _ in rows.decode(String.self) { removed = true }
      if removed {
        try await connection.query(
          "DELETE FROM upload_parts WHERE player_id = \(player.id) AND upload_id = \(id)", logger: logger)
      }
      return removed
    }
  }

  package func expireUploads(before time: Int64) async throws {
    try await writeTransaction { connection in
      try await connection.query(
        """
        DELETE FROM upload_parts WHERE (player_id, upload_id) IN (
          SELECT player_id, id FROM uploads WHERE created_at < \(time))
        """,
        logger: self.logger)
      try await connection.query("DELETE FROM uploads WHERE created_at < \(time)", logger: self.logger)
    }
  }

  package func pieceFile(player: Player, slot: String, piece: Int64) async throws -> [UInt8]? {
    let rows = try await client.query(
      "SELECT 1 FROM pieces WHERE id = \(piece) AND player_id = \(player.id) AND slot = \(slot)", logger: logger)
    var found = false
    for try await _ in rows.decode(Int.self) { found = true }
    guard found else { return nil }
    return try await rebuild(piece: piece)
  }

  package func storedBytes(player: Player, slot: String) async throws -> Int64 {
    let rows = try await client.query(
      """
      SELECT (SELECT COALESCE(SUM(length(data)), 0) FROM pieces WHERE player_id = \(player.id) AND slot = \(slot))::BIGINT
        + (SELECT COALESCE(SUM(length(file)), 0) FROM revisions WHERE player_id = \(player.id) AND slot = \(slot))::BIGINT
      """, logger: logger)
    for try await total in rows.decode(Int64.self) { return total }
    return 0
  }
}
