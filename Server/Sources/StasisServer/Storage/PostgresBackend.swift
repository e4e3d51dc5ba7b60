import Foundation
import Logging
import PostgresNIO

/// The backend for real deployments: PostgreSQL through postgres-nio's pooled client. Each
/// upload is one transaction that locks the player's row (so per-player limits are exact)
/// and the slot's row (so of two uploads on the same base exactly one commits: the second
/// waits for the lock, then reads the new head). Any number of servers can share the database.
public final class PostgresBackend: SaveBackend {
  /// The pooled client; run it (``run()``) for as long as the backend is used.
  public let client: PostgresClient
  let logger: Logger

  /// A backend for `url` (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`), with at most
  /// `connections` pooled connections. With `statementTimeout`, PostgreSQL cancels any
  /// statement that runs longer (`statement_timeout`): a request past its deadline leaves no
  /// query running behind it.
  public init(url: String, connections: Int = 20, statementTimeout: Duration? = nil, logger: Logger) throws {
    guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme ?? ""),
      let user = parts.user
    else {
      throw PlayerError("--postgres takes postgres://USER:PASSWORD@HOST:PORT/DATABASE")
    }
    var configuration = PostgresClient.Configuration(
      host: parts.host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1", port: parts.port ?? 5432, username: user,
      password: parts.password, database: String(parts.path.drop { $0 == "/" }), tls: .disable)
    configuration.options.maximumConnections = connections
    if let statementTimeout {
      let milliseconds = max(
        1, statementTimeout.components.seconds * 1000 + statementTimeout.components.attoseconds / 1_000_000_000_000_000)
      configuration.options.additionalStartupParameters = [("statement_timeout", "\(milliseconds)")]
    }
    client = PostgresClient(configuration: configuration, backgroundLogger: logger)
    self.logger = logger
  }

  /// Runs the connection pool until cancelled.
  public func run() async { await client.run() }

  /// Creates the tables when they are missing (every statement is `IF NOT EXISTS`, so two
  /// servers starting together both succeed; the advisory lock keeps them from interleaving).
  public func migrate() async throws {
    try await client.withTransaction(logger: logger) { connection in
      try await connection.query("SELECT pg_advisory_xact_lock(7817001)", logger: logger)
      // stasis_put_v1 pruned conflict losers: it is dropped, so no server of any version calls it.
      for statement in ServerSchema.postgres + [Self.dropPutFunctionV1, Self.putFunctionV3, Self.putFunctionV2] {
        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
      }
    }
  }

  public func addPlayer(name: String, tokenHash: [UInt8], at time: Int64) async throws -> Player {
    let rows = try await client.query(
      """
      INSERT INTO players (name, token_hash, created_at) VALUES (\(name), \(Data(tokenHash)), \(time))
      ON CONFLICT (name) DO NOTHING RETURNING id
      """, logger: logger)
    for try await id in rows.decode(Int64.self) {
      return Player(id: id, name: name, createdAt: time, revoked: false)
    }
    throw PlayerError("a player named '\(name)' exists")
  }

  public func players() async throws -> [Player] {
    var players: [Player] = []
    let rows = try await client.query("SELECT id, name, created_at, revoked FROM players ORDER BY name", logger: logger)
    for try await (id, name, createdAt, revoked) in rows.decode((Int64, String, Int64, Bool).self) {
      players.append(Player(id: id, name: name, createdAt: createdAt, revoked: revoked))
    }
    return players
  }

  public func revokePlayer(name: String) async throws -> Bool {
    let rows = try await client.query(
      "UPDATE players SET revoked = TRUE WHERE name = \(name) RETURNING id", logger: logger)
    for try await _ in rows.decode(Int64.self) { return true }
    return false
  }

  public func player(tokenHash: [UInt8]) async throws -> Player? {
    for try await player in try await client.execute(PlayerByTokenStatement(tokenHash: tokenHash), logger: logger) {
      return player
    }
    return nil
  }

  public func put(
    player: Player, precondition: WritePrecondition, loser: Int64?, metadata: RevisionMetadata, file: [UInt8],
    keep: Int, limits: PlayerLimits
  ) async throws -> PutOutcome {
    // One statement, one round trip: the function (`putFunctionV3`) is the whole transaction.
    let expected: Int64? = if case .head(let head) = precondition { head } else { nil }
    let statement = PutStatement(
      player: player.id, metadata: metadata, expected: expected, keep: Int64(max(1, keep)),
      maxSlots: Int64(limits.slots), maxBytes: limits.totalBytes, file: file, loser: loser)
    let rows = try await client.execute(statement, logger: logger)
    var result: (String, Int64?, Int64)?
    for try await row in rows { result = row }
    guard let (outcome, revision, amount) = result else { throw PlayerError("stasis_put_v3 returned no row") }
    switch outcome {
    case "created":
      var stored = metadata
      stored.revision = revision ?? 0
      return .created(stored)
    case "stale":
      // The head that made it stale, or the newer one if that was pruned since.
      guard let revision else { return .stale(head: nil) }
      let head = try await client.withConnection { connection in
        try await Self.metadata(connection, player, metadata.slot, revision, self.logger)
      }
      if let head { return .stale(head: head) }
      return .stale(head: try await self.head(player: player, slot: metadata.slot))
    case "loser":
      return .unknownLoser(loser ?? 0)
    case "slots":
      return .tooManySlots("the player has \(amount) slots; the limit is \(limits.slots)")
    default:
      return .overLimit(
        "the player's saves take \(amount) bytes; this one would pass the limit of \(limits.totalBytes)")
    }
  }

  /// The first upload function, whose pruning deleted conflict losers: dropped at migration.
  static let dropPutFunctionV1 = """
    DROP FUNCTION IF EXISTS stasis_put_v1(BIGINT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, BIGINT, TEXT, BIGINT, TEXT,
      TEXT, TEXT, BIGINT, BIGINT, DOUBLE PRECISION, DOUBLE PRECISION, TEXT, BYTEA)
    """

  /// An upload as one PL/pgSQL function, so it costs one round trip and plans that PostgreSQL
  /// caches, instead of nine statements planned each time. It locks the player's row (one
  /// upload per player at a time, so the limits hold exactly), then the slot's row (of two
  /// uploads on the same base exactly one commits: the second waits for the lock, then reads the
  /// new head), checks the precondition, the loser and the limits, stores the revision and
  /// prunes the slot to its newest `keep`, never a revision marked as a conflict's loser.
  /// `expected` is null for `If-None-Match: *`; `p_loser` is a revision of the slot that lost
  /// the conflict this upload resolves (null: none), marked as lost to the new revision;
  /// `p_parent` the revision whose state it continues (null: none; ``RevisionMetadata/parent``).
  /// A pruned revision's children take its parent, newest first, so the chain stays exact. The
  /// outcome is `created` (with the revision), `stale` (with the head's revision; none when the
  /// slot does not exist), `loser`, `slots` or `bytes` (with the count or bytes in use).
  static let putFunctionV3 = """
    CREATE OR REPLACE FUNCTION stasis_put_v3(
      p_player BIGINT, p_slot TEXT, p_expected BIGINT, p_keep BIGINT, p_max_slots BIGINT, p_max_bytes BIGINT,
      p_size BIGINT, p_sha256 TEXT, p_uploaded_at BIGINT, p_device TEXT, p_game TEXT, p_build TEXT,
      p_schema BIGINT, p_created_at BIGINT, p_play_time DOUBLE PRECISION, p_progress DOUBLE PRECISION,
      p_summary TEXT, p_file BYTEA, p_loser BIGINT, p_parent BIGINT,
      OUT outcome TEXT, OUT revision BIGINT, OUT amount BIGINT)
    LANGUAGE plpgsql AS $$
    #variable_conflict use_column
    DECLARE
      v_next BIGINT;
      v_head BIGINT;
      v_gone RECORD;
    BEGIN
      amount := 0;
      PERFORM 1 FROM players WHERE id = p_player FOR UPDATE;
      IF p_expected IS NULL THEN
        INSERT INTO slots (player_id, name, next_revision, head_revision) VALUES (p_player, p_slot, 1, NULL)
        ON CONFLICT DO NOTHING;
      END IF;
      SELECT s.next_revision, s.head_revision INTO v_next, v_head FROM slots s
      WHERE s.player_id = p_player AND s.name = p_slot FOR UPDATE;
      IF v_head IS DISTINCT FROM p_expected THEN
        outcome := 'stale';
        revision := v_head;
        RETURN;
      END IF;
      IF p_loser IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM revisions r WHERE r.player_id = p_player AND r.slot = p_slot AND r.revision = p_loser
      ) THEN
        outcome := 'loser';
        RETURN;
      END IF;
      IF v_head IS NULL THEN
        SELECT COUNT(*) INTO amount FROM slots s WHERE s.player_id = p_player AND s.head_revision IS NOT NULL;
        IF amount >= p_max_slots THEN
          outcome := 'slots';
          RETURN;
        END IF;
      END IF;
      SELECT COALESCE(SUM(r.size), 0) INTO amount FROM revisions r WHERE r.player_id = p_player;
      IF amount + p_size > p_max_bytes THEN
        outcome := 'bytes';
        RETURN;
      END IF;
      amount := 0;
      UPDATE slots s SET next_revision = v_next + 1, head_revision = v_next
      WHERE s.player_id = p_player AND s.name = p_slot;
      INSERT INTO revisions AS r (player_id, slot, revision, base_revision, parent, size, sha256, uploaded_at, device,
        game, build, schema_version, created_at, play_time, progress, summary, file)
      VALUES (p_player, p_slot, v_next, p_expected, p_parent, p_size, p_sha256, p_uploaded_at, p_device, p_game,
        p_build, p_schema, p_created_at, p_play_time, p_progress, p_summary, p_file);
      IF p_loser IS NOT NULL THEN
        UPDATE revisions r SET lost_to = v_next WHERE r.player_id = p_player AND r.slot = p_slot AND r.revision = p_loser;
      END IF;
      FOR v_gone IN
        SELECT r.revision, r.parent FROM revisions r
        WHERE r.player_id = p_player AND r.slot = p_slot AND r.revision <= v_next - p_keep AND r.lost_to IS NULL
        ORDER BY r.revision DESC
      LOOP
        UPDATE revisions r SET parent = v_gone.parent
        WHERE r.player_id = p_player AND r.slot = p_slot AND r.parent = v_gone.revision;
        DELETE FROM revisions r WHERE r.player_id = p_player AND r.slot = p_slot AND r.revision = v_gone.revision;
      END LOOP;
      outcome := 'created';
      revision := v_next;
    END
    $$
    """

  /// The upload function of the servers before ``putFunctionV3``, kept while one of them may
  /// still run beside a newer one: it is v3 with the parent its clients meant, the base.
  static let putFunctionV2 = """
    CREATE OR REPLACE FUNCTION stasis_put_v2(
      p_player BIGINT, p_slot TEXT, p_expected BIGINT, p_keep BIGINT, p_max_slots BIGINT, p_max_bytes BIGINT,
      p_size BIGINT, p_sha256 TEXT, p_uploaded_at BIGINT, p_device TEXT, p_game TEXT, p_build TEXT,
      p_schema BIGINT, p_created_at BIGINT, p_play_time DOUBLE PRECISION, p_progress DOUBLE PRECISION,
      p_summary TEXT, p_file BYTEA, p_loser BIGINT,
      OUT outcome TEXT, OUT revision BIGINT, OUT amount BIGINT)
    LANGUAGE sql AS $$
      SELECT * FROM stasis_put_v3(p_player, p_slot, p_expected, p_keep, p_max_slots, p_max_bytes, p_size, p_sha256,
        p_uploaded_at, p_device, p_game, p_build, p_schema, p_created_at, p_play_time, p_progress, p_summary, p_file,
        p_loser, p_expected)
    $$
    """

  public func head(player: Player, slot: String) async throws -> RevisionMetadata? {
    for try await head in try await client.execute(HeadStatement(player: player.id, slot: slot), logger: logger) {
      return head
    }
    return nil
  }

  public func file(player: Player, slot: String, revision: Int64?) async throws -> (RevisionMetadata, [UInt8])? {
    let query =
      if let revision {
        PostgresQuery(
          unsafeSQL: "SELECT \(Self.columns), file FROM revisions WHERE player_id = $1 AND slot = $2 AND revision = $3",
          binds: try Self.binds(player.id, slot, revision))
      } else {
        PostgresQuery(
          unsafeSQL: "SELECT \(Self.headColumns), r.file \(Self.headJoin)", binds: try Self.binds(player.id, slot))
      }
    let rows = try await client.query(query, logger: logger)
    for try await row in rows {
      let metadata = try Self.metadata(row)
      let data = try row.decode(
        (
          String, Int64, Int64?, Int64, String, Int64, String, String, String, Int64, Int64, Double, Double?, String,
          Int64?, Int64?, Data
        ).self
      ).16
      return (metadata, [UInt8](data))
    }
    return nil
  }

  public func revisions(player: Player, slot: String) async throws -> [RevisionMetadata]? {
    try await client.withConnection { connection in
      guard try await Self.headRevision(connection, player, slot, self.logger) != nil else { return nil }
      let rows = try await connection.query(
        PostgresQuery(
          unsafeSQL:
            "SELECT \(Self.columns) FROM revisions WHERE player_id = $1 AND slot = $2 ORDER BY revision DESC",
          binds: try Self.binds(player.id, slot)), logger: self.logger)
      var list: [RevisionMetadata] = []
      for try await row in rows { list.append(try Self.metadata(row)) }
      return list
    }
  }

  public func slots(player: Player) async throws -> [RevisionMetadata] {
    let columns = Self.columns.split(separator: ",").map { "r." + $0.trimmingCharacters(in: .whitespaces) }
      .joined(separator: ", ")
    let rows = try await client.query(
      PostgresQuery(
        unsafeSQL: """
          SELECT \(columns) FROM slots s
          JOIN revisions r ON r.player_id = s.player_id AND r.slot = s.name AND r.revision = s.head_revision
          WHERE s.player_id = $1 ORDER BY s.name
          """, binds: try Self.binds(player.id)), logger: logger)
    var list: [RevisionMetadata] = []
    for try await row in rows { list.append(try Self.metadata(row)) }
    return list
  }

  public func discard(player: Player, slot: String, revision: Int64) async throws -> DiscardOutcome {
    let logger = self.logger
    return try await client.withTransaction(logger: logger) { connection in
      var head: Int64??
      let rows = try await connection.query(
        "SELECT head_revision FROM slots WHERE player_id = \(player.id) AND name = \(slot) FOR UPDATE", logger: logger)
      for try await value in rows.decode(Int64?.self) { head = value }
      guard let head, let head else { return .notFound }
      if head == revision { return .head }
      // Its children take its parent, so the chain among the revisions that remain stays
      // exact: one statement, the delete and the hand-down together.
      let deleted = try await connection.query(
        """
        WITH gone AS (
          DELETE FROM revisions WHERE player_id = \(player.id) AND slot = \(slot) AND revision = \(revision)
          RETURNING parent
        ), handed AS (
          UPDATE revisions SET parent = (SELECT parent FROM gone)
          WHERE player_id = \(player.id) AND slot = \(slot) AND parent = \(revision) AND EXISTS (SELECT 1 FROM gone)
        )
        SELECT COUNT(*) FROM gone
        """, logger: logger)
      for try await count in deleted.decode(Int64.self) { return count > 0 ? .discarded : .notFound }
      return .notFound
    }
  }

  public func delete(player: Player, slot: String, head expected: Int64) async throws -> DeleteOutcome {
    let logger = self.logger
    return try await client.withTransaction(logger: logger) { connection in
      var head: Int64?
      let rows = try await connection.query(
        "SELECT head_revision FROM slots WHERE player_id = \(player.id) AND name = \(slot) FOR UPDATE", logger: logger)
      for try await value in rows.decode(Int64?.self) { head = value }
      guard let head else { return .notFound }
      guard head == expected else {
        guard let metadata = try await Self.metadata(connection, player, slot, head, logger) else { return .notFound }
        return .stale(head: metadata)
      }
      try await connection.query(
        "UPDATE slots SET head_revision = NULL WHERE player_id = \(player.id) AND name = \(slot)", logger: logger)
      try await connection.query(
        "DELETE FROM revisions WHERE player_id = \(player.id) AND slot = \(slot)", logger: logger)
      return .deleted
    }
  }

  public func ping() async throws {
    try await client.query("SELECT 1", logger: logger)
  }

  // MARK: Rows

  static let columns =
    "slot, revision, base_revision, size, sha256, uploaded_at, device, game, build, schema_version, created_at, play_time, progress, summary, lost_to, parent"
  /// The columns, from `revisions r`.
  static let headColumns = columns.split(separator: ",").map { "r." + $0.trimmingCharacters(in: .whitespaces) }
    .joined(separator: ", ")
  /// A slot's head revision, `$1` the player and `$2` the slot.
  static let headJoin = """
    FROM slots s JOIN revisions r ON r.player_id = s.player_id AND r.slot = s.name AND r.revision = s.head_revision
    WHERE s.player_id = $1 AND s.name = $2
    """

  private static func binds(_ values: any PostgresEncodable & Sendable...) throws -> PostgresBindings {
    var bindings = PostgresBindings()
    for value in values { try bindings.append(value) }
    return bindings
  }

  private static func headRevision(_ connection: PostgresConnection, _ player: Player, _ slot: String, _ logger: Logger)
    async throws -> Int64?
  {
    let rows = try await connection.query(
      "SELECT head_revision FROM slots WHERE player_id = \(player.id) AND name = \(slot)", logger: logger)
    var head: Int64?
    for try await value in rows.decode(Int64?.self) { head = value }
    return head
  }

  private static func metadata(
    _ connection: PostgresConnection, _ player: Player, _ slot: String, _ revision: Int64, _ logger: Logger
  ) async throws -> RevisionMetadata? {
    let rows = try await connection.query(
      PostgresQuery(
        unsafeSQL: "SELECT \(columns) FROM revisions WHERE player_id = $1 AND slot = $2 AND revision = $3",
        binds: try binds(player.id, slot, revision)), logger: logger)
    for try await row in rows { return try metadata(row) }
    return nil
  }

  static func metadata(_ row: PostgresRow) throws -> RevisionMetadata {
    let (
      slot, revision, base, size, sha, uploaded, device, game, build, schema, created, playTime, progress, summary,
      lostTo, parent
    ) =
      try row.decode(
        (
          String, Int64, Int64?, Int64, String, Int64, String, String, String, Int64, Int64, Double, Double?, String,
          Int64?, Int64?
        ).self)
    var metadata = RevisionMetadata(
      slot: slot, revision: revision, baseRevision: base, bytes: size, sha256: sha, uploadedAt: uploaded,
      device: device, game: game, build: build, schema: schema, createdAt: created, playTime: playTime,
      progress: progress, summaryJSON: summary, lostTo: lostTo)
    metadata.parent = parent
    return metadata
  }
}
