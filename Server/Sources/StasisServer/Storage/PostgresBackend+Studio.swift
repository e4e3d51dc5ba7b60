import Foundation
import Logging
import PostgresNIO

extension PostgresBackend {
  // MARK: Staff

  package func addStaff(name: String, role: StaffRole, passwordHash: String, at time: Int64) async throws
    -> StaffMember
  {
    let rows = try await client.query(
      """
      INSERT INTO staff (name, role, password_hash, created_at) VALUES (\(name), \(role.rawValue), \(passwordHash), \(time))
      ON CONFLICT (name) DO NOTHING RETURNING id
      """, logger: logger)
    for try await id in rows.decode(Int64.self) {
      return StaffMember(id: id, name: name, role: role, createdAt: time)
    }
    throw StaffError("a staff member named '\(name)' exists")
  }

  package func staffMembers() async throws -> [StaffMember] {
    var members: [StaffMember] = []
    let rows = try await client.query(
      "SELECT id, name, role, created_at, disabled FROM staff ORDER BY name", logger: logger)
    for try await row in rows { members.append(try Self.staff(row)) }
    return members
  }

  package func staffCredentials(name: String) async throws -> (StaffMember, passwordHash: String)? {
    let rows = try await client.query(
      "SELECT id, name, role, created_at, disabled, password_hash FROM staff WHERE name = \(name)", logger: logger)
    for try await row in rows {
      let columns = try row.decode((Int64, String, String, Int64, Bool, String).self)
      return (try Self.staff(row), columns.5)
    }
    return nil
  }

  package func setStaffKey(name: String, keyHash: [UInt8]) async throws -> Bool {
    let rows = try await client.query(
      "UPDATE staff SET key_hash = \(Data(keyHash)) WHERE name = \(name) RETURNING id", logger: logger)
    for try await _ in rows.decode(Int64.self) { return true }
    return false
  }

  package func staff(keyHash: [UInt8]) async throws -> StaffMember? {
    let rows = try await client.query(
      "SELECT id, name, role, created_at, disabled FROM staff WHERE key_hash = \(Data(keyHash)) AND NOT disabled",
      logger: logger)
    for try await row in rows { return try Self.staff(row) }
    return nil
  }

  package func disableStaff(name: String) async throws -> Bool {
    let rows = try await client.query(
      """
      WITH gone AS (UPDATE staff SET disabled = TRUE, key_hash = NULL WHERE name = \(name) RETURNING id),
      ended AS (DELETE FROM staff_sessions WHERE staff_id IN (SELECT id FROM gone))
      SELECT id FROM gone
      """, logger: logger)
    for try await _ in rows.decode(Int64.self) { return true }
    return false
  }

  // MARK: Sessions

  package func createSession(
    idHash: [UInt8], staff: StaffMember, csrf: String, at time: Int64, expiresAt: Int64
  ) async throws {
    try await client.query(
      """
      WITH ended AS (DELETE FROM staff_sessions WHERE expires_at <= \(time))
      INSERT INTO staff_sessions (id_hash, staff_id, csrf, created_at, expires_at)
      VALUES (\(Data(idHash)), \(staff.id), \(csrf), \(time), \(expiresAt))
      """, logger: logger)
  }

  package func session(idHash: [UInt8], at time: Int64) async throws -> StaffSession? {
    let rows = try await client.query(
      """
      SELECT s.id, s.name, s.role, s.created_at, s.disabled, x.csrf, x.expires_at
      FROM staff_sessions x JOIN staff s ON s.id = x.staff_id
      WHERE x.id_hash = \(Data(idHash)) AND x.expires_at > \(time) AND NOT s.disabled
      """, logger: logger)
    for try await row in rows {
      let columns = try row.decode((Int64, String, String, Int64, Bool, String, Int64).self)
      return StaffSession(staff: try Self.staff(row), csrf: columns.5, expiresAt: columns.6)
    }
    return nil
  }

  package func endSession(idHash: [UInt8]) async throws {
    try await client.query("DELETE FROM staff_sessions WHERE id_hash = \(Data(idHash))", logger: logger)
  }

  // MARK: Players and tokens

  package func findPlayers(query: String, limit: Int) async throws -> [Player] {
    let pattern = "%" + SQLiteBackend.escapeLike(query.lowercased()) + "%"
    let id = query.trimmingCharacters(in: .whitespaces)
    let rows = try await client.query(
      """
      SELECT id, name, created_at, revoked FROM players
      WHERE lower(name) LIKE \(pattern) ESCAPE '\\' OR id::text = \(id) ORDER BY name LIMIT \(Int64(limit))
      """, logger: logger)
    return try await Self.players(rows)
  }

  package func player(id: Int64) async throws -> Player? {
    let rows = try await client.query(
      "SELECT id, name, created_at, revoked FROM players WHERE id = \(id)", logger: logger)
    return try await Self.players(rows).first
  }

  package func devices(player: Player) async throws -> [PlayerDevice] {
    let rows = try await client.query(
      """
      SELECT device, COUNT(*), MAX(uploaded_at) AS last FROM revisions WHERE player_id = \(player.id)
      GROUP BY device ORDER BY last DESC, device
      """, logger: logger)
    var devices: [PlayerDevice] = []
    for try await (name, count, last) in rows.decode((String, Int64, Int64).self) {
      devices.append(PlayerDevice(name: name, revisions: count, lastUpload: last))
    }
    return devices
  }

  package func tokens(player: Player) async throws -> [DeviceToken] {
    let logger = self.logger
    return try await writeTransaction { connection in
      try await Self.adoptToken(connection, player, logger)
      let rows = try await connection.query(
        """
        SELECT id, player_id, token_hash, label, created_at, revoked_at FROM tokens WHERE player_id = \(player.id)
        ORDER BY id
        """, logger: logger)
      var tokens: [DeviceToken] = []
      for try await (id, playerId, hash, label, created, revoked) in rows.decode(
        (Int64, Int64, Data, String, Int64, Int64?).self)
      {
        tokens.append(
          DeviceToken(
            id: id, playerId: playerId, label: label, fingerprint: DeviceToken.fingerprint([UInt8](hash)),
            createdAt: created, revokedAt: revoked))
      }
      return tokens
    }
  }

  package func issueToken(player: Player, label: String, tokenHash: [UInt8], audit: AuditDraft) async throws -> (
    DeviceToken, AuditEntry
  ) {
    let logger = self.logger
    return try await writeTransaction { connection in
      let rows = try await connection.query(
        """
        INSERT INTO tokens (player_id, token_hash, label, created_at)
        VALUES (\(player.id), \(Data(tokenHash)), \(label), \(audit.at)) RETURNING id
        """, logger: logger)
      var id: Int64 = 0
      for try await value in rows.decode(Int64.self) { id = value }
      var audit = audit
      audit.revision = id
      let token = DeviceToken(
        id: id, playerId: player.id, label: label, fingerprint: DeviceToken.fingerprint(tokenHash),
        createdAt: audit.at, revokedAt: nil)
      return (token, try await Self.append(connection, audit, logger))
    }
  }

  package func revokeToken(player: Player, id: Int64, audit: AuditDraft) async throws -> AuditEntry? {
    let logger = self.logger
    return try await writeTransaction { connection in
      try await Self.adoptToken(connection, player, logger)
      let rows = try await connection.query(
        """
        UPDATE tokens SET revoked_at = \(audit.at) WHERE id = \(id) AND player_id = \(player.id) AND revoked_at IS NULL
        RETURNING id
        """, logger: logger)
      var found = false
      for try await _ in rows.decode(Int64.self) { found = true }
      guard found else { return nil }
      var audit = audit
      audit.revision = id
      return try await Self.append(connection, audit, logger)
    }
  }

  // MARK: Staff actions on slots

  package func staffPut(
    player: Player, precondition: WritePrecondition, loser: Int64?, metadata: RevisionMetadata, file: [UInt8],
    delta: StoredDelta?, keep: Int, limits: PlayerLimits, audit: AuditDraft
  ) async throws -> (PutOutcome, AuditEntry?) {
    let logger = self.logger
    let rule = uploadRule(precondition, loser: loser, metadata: metadata, delta: delta, keep: keep, limits: limits)
    // The same retry as a player's upload: a staff restore is an upload with a precondition.
    return try await uploadTransaction { connection in
      let outcome = try await Self.put(
        connection, rule, player: player, metadata: metadata, file: file, delta: delta, logger: logger)
      guard case .created(let stored) = outcome else { return (outcome, nil) }
      var audit = audit
      audit.headAfter = stored.revision
      return (outcome, try await Self.append(connection, audit, logger))
    }
  }

  package func staffDiscard(player: Player, slot: String, revision: Int64, audit: AuditDraft) async throws -> (
    DiscardOutcome, AuditEntry?
  ) {
    let logger = self.logger
    return try await writeTransaction { connection in
      let outcome = try await Self.discard(
        connection, player: player, slot: slot, revision: revision, keptOnly: true, followsChains: followsChains,
        logger: logger)
      guard outcome == .discarded else { return (outcome, nil) }
      return (outcome, try await Self.append(connection, audit, logger))
    }
  }

  // MARK: The audit log

  package func appendAudit(_ draft: AuditDraft) async throws -> AuditEntry {
    let logger = self.logger
    return try await client.withConnection { connection in try await Self.append(connection, draft, logger) }
  }

  package func audit(_ filter: AuditFilter) async throws -> [AuditEntry] {
    var bindings = PostgresBindings()
    var conditions: [String] = []
    if let player = filter.player {
      bindings.append(player)
      conditions.append("a.player_name = $\(conditions.count + 1)")
    }
    if let staff = filter.staff {
      bindings.append(staff)
      conditions.append("a.staff_name = $\(conditions.count + 1)")
    }
    if let before = filter.before {
      bindings.append(before)
      conditions.append("a.id < $\(conditions.count + 1)")
    }
    bindings.append(Int64(max(1, min(filter.limit, 1000))))
    let condition = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
    let rows = try await client.query(
      PostgresQuery(
        unsafeSQL:
          "SELECT \(ServerSchema.auditColumns) FROM audit a \(condition) ORDER BY a.id DESC LIMIT $\(conditions.count + 1)",
        binds: bindings), logger: logger)
    var entries: [AuditEntry] = []
    for try await row in rows { entries.append(try Self.auditEntry(row)) }
    return entries
  }

  package func auditEntry(id: Int64) async throws -> AuditEntry? {
    let rows = try await client.query(
      PostgresQuery(
        unsafeSQL: "SELECT \(ServerSchema.auditColumns) FROM audit a WHERE a.id = $1", binds: try Self.binds(id)),
      logger: logger)
    for try await row in rows { return try Self.auditEntry(row) }
    return nil
  }

  // MARK: Rows

  static func append(_ connection: PostgresConnection, _ draft: AuditDraft, _ logger: Logger) async throws
    -> AuditEntry
  {
    let rows = try await connection.query(
      """
      INSERT INTO audit (at, staff_id, staff_name, action, player_id, player_name, slot, revision, head_before,
        head_after, reason, undoes)
      VALUES (\(draft.at), \(draft.staff.id), \(draft.staff.name), \(draft.action.rawValue), \(draft.player?.id),
        \(draft.player?.name), \(draft.slot), \(draft.revision), \(draft.headBefore), \(draft.headAfter),
        \(draft.reason), \(draft.undoes))
      RETURNING id
      """, logger: logger)
    var id: Int64 = 0
    for try await value in rows.decode(Int64.self) { id = value }
    return AuditEntry(
      id: id, at: draft.at, staff: draft.staff.name, action: draft.action, playerId: draft.player?.id,
      player: draft.player?.name, slot: draft.slot, revision: draft.revision, headBefore: draft.headBefore,
      headAfter: draft.headAfter, reason: draft.reason, undoes: draft.undoes, undoneBy: nil)
  }

  private static func adoptToken(_ connection: PostgresConnection, _ player: Player, _ logger: Logger) async throws {
    try await connection.query(
      PostgresQuery(unsafeSQL: ServerSchema.adoptToken("$1"), binds: try binds(player.id)), logger: logger)
  }

  private static func players(_ rows: PostgresRowSequence) async throws -> [Player] {
    var players: [Player] = []
    for try await (id, name, createdAt, revoked) in rows.decode((Int64, String, Int64, Bool).self) {
      players.append(Player(id: id, name: name, createdAt: createdAt, revoked: revoked))
    }
    return players
  }

  private static func staff(_ row: PostgresRow) throws -> StaffMember {
    let columns = try row.decode((Int64, String, String, Int64, Bool).self)
    return StaffMember(
      id: columns.0, name: columns.1, role: StaffRole(rawValue: columns.2) ?? .viewer, createdAt: columns.3,
      disabled: columns.4)
  }

  private static func auditEntry(_ row: PostgresRow) throws -> AuditEntry {
    let columns = try row.decode(
      (
        Int64, Int64, String, String, Int64?, String?, String?, Int64?, Int64?, Int64?, String, Int64?, Int64?
      ).self)
    return AuditEntry(
      id: columns.0, at: columns.1, staff: columns.2, action: AuditAction(rawValue: columns.3) ?? .download,
      playerId: columns.4, player: columns.5, slot: columns.6, revision: columns.7, headBefore: columns.8,
      headAfter: columns.9, reason: columns.10, undoes: columns.11, undoneBy: columns.12)
  }
}
