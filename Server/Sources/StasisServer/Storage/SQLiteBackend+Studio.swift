import Foundation
import GRDB

extension SQLiteBackend {
  // MARK: Staff

  package func addStaff(name: String, role: StaffRole, passwordHash: String, at time: Int64) async throws
    -> StaffMember
  {
    try await pool.write { db in
      guard try Row.fetchOne(db, sql: "SELECT 1 FROM staff WHERE name = ?", arguments: [name]) == nil else {
        throw StaffError("a staff member named '\(name)' exists")
      }
      try db.execute(
        sql: "INSERT INTO staff (name, role, password_hash, created_at) VALUES (?, ?, ?, ?)",
        arguments: [name, role.rawValue, passwordHash, time])
      return StaffMember(id: db.lastInsertedRowID, name: name, role: role, createdAt: time)
    }
  }

  package func staffMembers() async throws -> [StaffMember] {
    try await pool.read { db in
      try Row.fetchAll(db, sql: "SELECT id, name, role, created_at, disabled FROM staff ORDER BY name").map(
        Self.staff)
    }
  }

  package func staffCredentials(name: String) async throws -> (StaffMember, passwordHash: String)? {
    try await pool.read { db in
      try Row.fetchOne(
        db, sql: "SELECT id, name, role, created_at, disabled, password_hash FROM staff WHERE name = ?",
        arguments: [name]
      ).map { (Self.staff($0), $0["password_hash"]) }
    }
  }

  package func setStaffKey(name: String, keyHash: [UInt8]) async throws -> Bool {
    try await pool.write { db in
      try db.execute(sql: "UPDATE staff SET key_hash = ? WHERE name = ?", arguments: [Data(keyHash), name])
      return db.changesCount > 0
    }
  }

  package func staff(keyHash: [UInt8]) async throws -> StaffMember? {
    try await pool.read { db in
      try Row.fetchOne(
        db, sql: "SELECT id, name, role, created_at, disabled FROM staff WHERE key_hash = ? AND disabled = 0",
        arguments: [Data(keyHash)]
      ).map(Self.staff)
    }
  }

  package func disableStaff(name: String) async throws -> Bool {
    try await pool.write { db in
      try db.execute(sql: "UPDATE staff SET disabled = 1, key_hash = NULL WHERE name = ?", arguments: [name])
      guard db.changesCount > 0 else { return false }
      try db.execute(
        sql: "DELETE FROM staff_sessions WHERE staff_id = (SELECT id FROM staff WHERE name = ?)", arguments: [name])
      return true
    }
  }

  // MARK: Sessions

  package func createSession(
    idHash: [UInt8], staff: StaffMember, csrf: String, at time: Int64, expiresAt: Int64
  ) async throws {
    try await pool.write { db in
      try db.execute(sql: "DELETE FROM staff_sessions WHERE expires_at <= ?", arguments: [time])
      try db.execute(
        sql: "INSERT INTO staff_sessions (id_hash, staff_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
        arguments: [Data(idHash), staff.id, csrf, time, expiresAt])
    }
  }

  package func session(idHash: [UInt8], at time: Int64) async throws -> StaffSession? {
    try await pool.read { db in
      try Row.fetchOne(
        db,
        sql: """
          SELECT s.id, s.name, s.role, s.created_at, s.disabled, x.csrf, x.expires_at
          FROM staff_sessions x JOIN staff s ON s.id = x.staff_id
          WHERE x.id_hash = ? AND x.expires_at > ? AND s.disabled = 0
          """, arguments: [Data(idHash), time]
      ).map { StaffSession(staff: Self.staff($0), csrf: $0["csrf"], expiresAt: $0["expires_at"]) }
    }
  }

  package func endSession(idHash: [UInt8]) async throws {
    try await pool.write { db in
      try db.execute(sql: "DELETE FROM staff_sessions WHERE id_hash = ?", arguments: [Data(idHash)])
    }
  }

  // MARK: Players and tokens

  package func findPlayers(query: String, limit: Int) async throws -> [Player] {
    try await pool.read { db in
      let pattern = "%" + Self.escapeLike(query.lowercased()) + "%"
      return try Row.fetchAll(
        db,
        sql: """
          SELECT id, name, created_at, revoked FROM players
          WHERE lower(name) LIKE ? ESCAPE '\\' OR CAST(id AS TEXT) = ? ORDER BY name LIMIT ?
          """, arguments: [pattern, query.trimmingCharacters(in: .whitespaces), limit]
      ).map(Self.player)
    }
  }

  package func player(id: Int64) async throws -> Player? {
    try await pool.read { db in
      try Row.fetchOne(db, sql: "SELECT id, name, created_at, revoked FROM players WHERE id = ?", arguments: [id])
        .map(Self.player)
    }
  }

  package func devices(player: Player) async throws -> [PlayerDevice] {
    try await pool.read { db in
      try Row.fetchAll(
        db,
        sql: """
          SELECT device, COUNT(*) AS revisions, MAX(uploaded_at) AS last FROM revisions WHERE player_id = ?
          GROUP BY device ORDER BY last DESC, device
          """, arguments: [player.id]
      ).map { PlayerDevice(name: $0["device"], revisions: $0["revisions"], lastUpload: $0["last"]) }
    }
  }

  package func tokens(player: Player) async throws -> [DeviceToken] {
    try await pool.write { db in
      try db.execute(sql: ServerSchema.adoptToken("?"), arguments: [player.id])
      return try Self.tokens(db, player: player)
    }
  }

  package func issueToken(player: Player, label: String, tokenHash: [UInt8], audit: AuditDraft) async throws -> (
    DeviceToken, AuditEntry
  ) {
    try await pool.write { db in
      try db.execute(
        sql: "INSERT INTO tokens (player_id, token_hash, label, created_at) VALUES (?, ?, ?, ?)",
        arguments: [player.id, Data(tokenHash), label, audit.at])
      let token = DeviceToken(
        id: db.lastInsertedRowID, playerId: player.id, label: label, fingerprint: DeviceToken.fingerprint(tokenHash),
        createdAt: audit.at, revokedAt: nil)
      var audit = audit
      audit.revision = token.id
      return (token, try Self.append(db, audit))
    }
  }

  package func revokeToken(player: Player, id: Int64, audit: AuditDraft) async throws -> AuditEntry? {
    try await pool.write { db in
      try db.execute(sql: ServerSchema.adoptToken("?"), arguments: [player.id])
      try db.execute(
        sql: "UPDATE tokens SET revoked_at = ? WHERE id = ? AND player_id = ? AND revoked_at IS NULL",
        arguments: [audit.at, id, player.id])
      guard db.changesCount > 0 else { return nil }
      var audit = audit
      audit.revision = id
      return try Self.append(db, audit)
    }
  }

  // MARK: Staff actions on slots

  package func staffPut(
    player: Player, precondition: WritePrecondition, loser: Int64?, metadata: RevisionMetadata, file: [UInt8],
    delta: StoredDelta?, keep: Int, limits: PlayerLimits, audit: AuditDraft
  ) async throws -> (PutOutcome, AuditEntry?) {
    try await pool.write { db in
      let outcome = try self.put(
        db, player: player, precondition: precondition, loser: loser, metadata: metadata, file: file, delta: delta,
        keep: keep, limits: limits)
      guard case .created(let stored) = outcome else { return (outcome, nil) }
      var audit = audit
      audit.headAfter = stored.revision
      return (outcome, try Self.append(db, audit))
    }
  }

  package func staffDiscard(player: Player, slot: String, revision: Int64, audit: AuditDraft) async throws -> (
    DiscardOutcome, AuditEntry?
  ) {
    try await pool.write { db in
      guard
        try Row.fetchOne(
          db,
          sql: "SELECT 1 FROM revisions WHERE player_id = ? AND slot = ? AND revision = ? AND lost_to IS NOT NULL",
          arguments: [player.id, slot, revision]) != nil
      else { return (.notFound, nil) }
      let outcome = try self.discard(db, player: player, slot: slot, revision: revision)
      guard outcome == .discarded else { return (outcome, nil) }
      return (outcome, try Self.append(db, audit))
    }
  }

  // MARK: The audit log

  package func appendAudit(_ draft: AuditDraft) async throws -> AuditEntry {
    try await pool.write { db in try Self.append(db, draft) }
  }

  package func audit(_ filter: AuditFilter) async throws -> [AuditEntry] {
    try await pool.read { db in
      var conditions: [String] = []
      var arguments: [(any DatabaseValueConvertible)?] = []
      if let player = filter.player {
        conditions.append("a.player_name = ?")
        arguments.append(player)
      }
      if let staff = filter.staff {
        conditions.append("a.staff_name = ?")
        arguments.append(staff)
      }
      if let before = filter.before {
        conditions.append("a.id < ?")
        arguments.append(before)
      }
      arguments.append(max(1, min(filter.limit, 1000)))
      let condition = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
      return try Row.fetchAll(
        db, sql: "SELECT \(ServerSchema.auditColumns) FROM audit a \(condition) ORDER BY a.id DESC LIMIT ?",
        arguments: StatementArguments(arguments)
      ).map(Self.auditEntry)
    }
  }

  package func auditEntry(id: Int64) async throws -> AuditEntry? {
    try await pool.read { db in
      try Row.fetchOne(db, sql: "SELECT \(ServerSchema.auditColumns) FROM audit a WHERE a.id = ?", arguments: [id])
        .map(Self.auditEntry)
    }
  }

  // MARK: Rows

  static func append(_ db: Database, _ draft: AuditDraft) throws -> AuditEntry {
    try db.execute(
      sql: """
        INSERT INTO audit (at, staff_id, staff_name, action, player_id, player_name, slot, revision, head_before,
          head_after, reason, undoes)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """,
      arguments: [
        draft.at, draft.staff.id, draft.staff.name, draft.action.rawValue, draft.player?.id, draft.player?.name,
        draft.slot, draft.revision, draft.headBefore, draft.headAfter, draft.reason, draft.undoes,
      ])
    return AuditEntry(
      id: db.lastInsertedRowID, at: draft.at, staff: draft.staff.name, action: draft.action, playerId: draft.player?.id,
      player: draft.player?.name, slot: draft.slot, revision: draft.revision, headBefore: draft.headBefore,
      headAfter: draft.headAfter, reason: draft.reason, undoes: draft.undoes, undoneBy: nil)
  }

  private static func tokens(_ db: Database, player: Player) throws -> [DeviceToken] {
    try Row.fetchAll(
      db,
      sql:
        "SELECT id, player_id, token_hash, label, created_at, revoked_at FROM tokens WHERE player_id = ? ORDER BY id",
      arguments: [player.id]
    ).map {
      let hash: Data = $0["token_hash"]
      return DeviceToken(
        id: $0["id"], playerId: $0["player_id"], label: $0["label"],
        fingerprint: DeviceToken.fingerprint([UInt8](hash)),
        createdAt: $0["created_at"], revokedAt: $0["revoked_at"])
    }
  }

  private static func staff(_ row: Row) -> StaffMember {
    StaffMember(
      id: row["id"], name: row["name"], role: StaffRole(rawValue: row["role"]) ?? .viewer,
      createdAt: row["created_at"], disabled: row["disabled"])
  }

  static func player(_ row: Row) -> Player {
    Player(id: row["id"], name: row["name"], createdAt: row["created_at"], revoked: row["revoked"])
  }

  private static func auditEntry(_ row: Row) -> AuditEntry {
    AuditEntry(
      id: row["id"], at: row["at"], staff: row["staff_name"],
      action: AuditAction(rawValue: row["action"]) ?? .download, playerId: row["player_id"],
      player: row["player_name"], slot: row["slot"], revision: row["revision"], headBefore: row["head_before"],
      headAfter: row["head_after"], reason: row["reason"], undoes: row["undoes"], undoneBy: row["undone_by"])
  }

  /// `text` with LIKE's wildcards escaped by `\`.
  static func escapeLike(_ text: String) -> String {
    text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
      .replacingOccurrences(of: "_", with: "\\_")
  }
}
