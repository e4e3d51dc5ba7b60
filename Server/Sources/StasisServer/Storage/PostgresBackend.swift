import Foundation
import Logging
import PostgresNIO
import Stasis

/// The backend for real deployments: PostgreSQL through postgres-nio's pooled client. Each
/// upload is one transaction that locks the player's row (so per-player limits are exact)
/// and the slot's row (so of two uploads on the same base exactly one commits: the second
/// waits for the lock, then reads the new head). Any number of servers can share the database.
package final class PostgresBackend: SaveBackend {
  /// The pooled client; run it (``run()``) for as long as the backend is used.
  package let client: PostgresClient
  let logger: Logger
  /// Files smaller than this are stored whole (``PieceRules/smallestDelta``; the simulation's
  /// small saves chain with 0). ``UploadRule`` reads it, in each server.
  package let smallestDelta: Int
  /// True when a `statement_timeout` is set: a write's transaction then sets it to 0 before
  /// `COMMIT` (``writeTransaction(_:)``). A `COMMIT` cancelled while it waits for the synchronous
  /// standby is not undone: PostgreSQL keeps the commit locally, warns "might not have been
  /// replicated" and answers success, so a timeout there would send a `201` for a save that a
  /// failover can lose.
  let resetsTimeoutBeforeCommit: Bool
  /// The storage rules (``StorageRules``): the defaults, except in the simulation's build.
  let rules: StorageRules

  /// A backend for `url` (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`), with at most
  /// `connections` pooled connections. With `statementTimeout`, PostgreSQL cancels any
  /// statement that runs longer (`statement_timeout`): a request past its deadline leaves no
  /// query running behind it.
  package convenience init(
    url: String, connections: Int = 20, statementTimeout: Duration? = nil,
    smallestDelta: Int = PieceRules.smallestDelta, logger: Logger
  ) throws {
    try self.init(
      url: url, connections: connections, statementTimeout: statementTimeout, smallestDelta: smallestDelta,
      logger: logger, rules: StorageRules())
  }

  init(
    url: String, connections: Int, statementTimeout: Duration?, smallestDelta: Int, logger: Logger,
    rules: StorageRules
  ) throws {
    self.rules = rules
    self.smallestDelta = smallestDelta
    guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme ?? ""),
      let user = parts.user
    else {
      throw StorageError(.configuration, "--postgres takes postgres://USER:PASSWORD@HOST:PORT/DATABASE")
    }
    var configuration = PostgresClient.Configuration(
      host: parts.host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1", port: parts.port ?? 5432, username: user,
      password: parts.password, database: String(parts.path.drop { $0 == "/" }), tls: .disable)
    configuration.options.maximumConnections = connections
    // A commit is acknowledged (and a `201` sent) only once it is durable where the database
    // says it must be: with a synchronous standby (Patroni's `synchronous_mode`), on both. A
    // database whose default is `local` or `off` does not weaken it for this server's writes.
    configuration.options.additionalStartupParameters = [("synchronous_commit", "on")]
    if let statementTimeout {
      let milliseconds = max(
        1, statementTimeout.components.seconds * 1000 + statementTimeout.components.attoseconds / 1_000_000_000_000_000)
      configuration.options.additionalStartupParameters.append(("statement_timeout", "\(milliseconds)"))
    }
    self.resetsTimeoutBeforeCommit = statementTimeout != nil
    client = PostgresClient(configuration: configuration, backgroundLogger: logger)
    self.logger = logger
  }

  /// Runs the connection pool until cancelled.
  package func run() async { await client.run() }

  /// Brings the schema up to date: runs every step of ``migrations()`` that `stasis_migrations`
  /// does not record with the same text, and records it (each statement is also `IF NOT EXISTS`
  /// or `CREATE OR REPLACE`, so a database made before the table existed takes every step once).
  /// A second start finds every step recorded and runs no DDL. The advisory lock keeps two
  /// servers starting together from interleaving. Without a statement timeout: a migration that
  /// rewrites a large table (v9's keys) takes as long as it takes, and a server waiting on the
  /// advisory lock waits for it. A migration that lost a deadlock (an older server's upload
  /// holding a table it locks, on the first start of a rolling upgrade) or its connection is
  /// run again, three times in all.
  @discardableResult
  package func migrate() async throws -> PostgresMigrationReport {
    var attempt = 1
    while true {
      do {
        let report = try await client.withTransaction(logger: logger) { connection in
          try await connection.query("SET LOCAL statement_timeout = 0", logger: logger)
          try await connection.query("SELECT pg_advisory_xact_lock(7817001)", logger: logger)
          return try await migrate(connection)
        }
        logger.info(
          "schema: \(report.ran.count) steps run, \(report.applied.count) already applied (stasis_migrations)",
          metadata: report.ran.isEmpty ? [:] : ["ran": "\(report.ran.joined(separator: "; "))"])
        return report
      } catch  where attempt < 3 && DatabaseUnavailable.isWorthAnotherConnection(error) {
        logger.notice("the migration is run again: \(error)")
        attempt += 1
      }
    }
  }

  /// A transaction that writes: `body`, then (with a `statement_timeout`, unless `setsTimeout`
  /// says `body` does) the timeout set to 0 for the `COMMIT` (``resetsTimeoutBeforeCommit`` says
  /// why). An upload's store function sets it itself, saving the round trip.
  func writeTransaction<Result: Sendable>(
    setsTimeout: Bool = false, _ body: (PostgresConnection) async throws -> Result
  ) async throws -> Result {
    let (logger, resets) = (self.logger, resetsTimeoutBeforeCommit && !setsTimeout)
    return try await client.withTransaction(logger: logger) { connection in
      let result = try await body(connection)
      if resets { try await connection.query("SET LOCAL statement_timeout = 0", logger: logger) }
      return result
    }
  }

  /// An upload's transaction (a player's, or a staff restore's: one rule, one retry). When the
  /// database was unavailable (a connection to a primary that died or was demoted, dropped by
  /// HAProxy), it runs again on another connection, twice at most, before the API's `503`. Safe
  /// even when the first `COMMIT` did commit: the retry finds its own revision as the head, and
  /// the upload is answered with it (``UploadsController``).
  func uploadTransaction<Result: Sendable>(
    _ body: (PostgresConnection) async throws -> Result
  ) async throws -> Result {
    var attempt = 0
    while true {
      do {
        return try await writeTransaction(setsTimeout: true, body)
      } catch  where attempt < 2 && !Task.isCancelled && DatabaseUnavailable.isWorthAnotherConnection(error) {
        attempt += 1
        try await Task.sleep(for: .milliseconds(200 * attempt))  // a backoff, not a synchronisation
      }
    }
  }

  package func addPlayer(name: String, tokenHash: [UInt8], at time: Int64) async throws -> Player {
    // The player and their first device token, in one statement.
    let rows = try await client.query(
      """
      WITH added AS (
        INSERT INTO players (name, token_hash, created_at) VALUES (\(name), \(Data(tokenHash)), \(time))
        ON CONFLICT (name) DO NOTHING RETURNING id
      )
      INSERT INTO tokens (player_id, token_hash, label, created_at)
      SELECT id, \(Data(tokenHash)), 'first token', \(time) FROM added RETURNING player_id
      """, logger: logger)
    for try await id in rows.decode(Int64.self) {
      return Player(id: id, name: name, createdAt: time, revoked: false)
    }
    throw StorageError(.nameTaken, "a player named '\(name)' exists")
  }

  package func players() async throws -> [Player] {
    var players: [Player] = []
    let rows = try await client.query("SELECT id, name, created_at, revoked FROM players ORDER BY name", logger: logger)
    for try await (id, name, createdAt, revoked) in rows.decode((Int64, String, Int64, Bool).self) {
      players.append(Player(id: id, name: name, createdAt: createdAt, revoked: revoked))
    }
    return players
  }

  package func revokePlayer(name: String) async throws -> Bool {
    let rows = try await client.query(
      "UPDATE players SET revoked = TRUE WHERE name = \(name) RETURNING id", logger: logger)
    for try await _ in rows.decode(Int64.self) { return true }
    return false
  }

  package func player(tokenHash: [UInt8]) async throws -> Player? {
    for try await player in try await client.execute(PlayerByTokenStatement(tokenHash: tokenHash), logger: logger) {
      return player
    }
    return nil
  }

  package func put(
    player: Player, precondition: WritePrecondition, loser: Int64?, metadata: RevisionMetadata, file: [UInt8],
    delta: StoredDelta?, keep: Int, limits: PlayerLimits
  ) async throws -> PutOutcome {
    let logger = self.logger
    // An explicit transaction, so `created` is returned only once `COMMIT` itself answered. In
    // autocommit the function's row arrives before the statement's implicit commit runs, and
    // postgres-nio completes the query with that row: a commit that then failed (a deferred
    // constraint, the connection lost at that moment) was answered `201` while nothing was
    // stored. The simulation on PostgreSQL found it, with its crash inside a commit.
    let rule = uploadRule(precondition, loser: loser, metadata: metadata, delta: delta, keep: keep, limits: limits)
    // Safe to run again even when the first `COMMIT` did commit: the retry finds its own
    // revision as the head, and the upload is answered with it (``UploadsController``).
    return try await uploadTransaction { connection in
      try await Self.put(
        connection, rule, player: player, metadata: metadata, file: file, delta: delta, logger: logger)
    }
  }

  /// An upload on `connection` (in the caller's transaction, when it has one): what it finds,
  /// read by `stasis_upload_find_v2` under the player's and the slot's locks; ``UploadRule``'s
  /// decision; and the decision written by `stasis_upload_store_v1`. Two round trips.
  static func put(
    _ connection: PostgresConnection, _ rule: UploadRule, player: Player, metadata: RevisionMetadata, file: [UInt8],
    delta: StoredDelta?, logger: Logger
  ) async throws -> PutOutcome {
    let find = UploadFindStatement(
      player: player.id, slot: metadata.slot, create: rule.expected == nil, loser: rule.loser,
      deltaBase: delta?.basePiece)
    var found: UploadRule.Found?
    for try await row in try await connection.execute(find, logger: logger) { found = row }
    guard let found else { throw StorageError(.damaged, "stasis_upload_find_v2 returned no row") }
    let decision = rule.decide(found)
    if let refusal = rule.refusal(decision) { return refusal }
    switch decision {
    case .stale(let revision):
      // The head that made it stale, or the newer one if that was pruned since.
      guard let revision else { return .stale(head: nil) }
      if let head = try await Self.metadata(connection, player, metadata.slot, revision, logger) {
        return .stale(head: head)
      }
      guard let now = try await headRevision(connection, player, metadata.slot, logger) else {
        return .stale(head: nil)
      }
      return .stale(head: try await Self.metadata(connection, player, metadata.slot, now, logger))
    case .store(let store):
      let asDelta = store.deltaOn != nil ? delta : nil
      let statement = UploadStoreStatement(
        player: player.id, metadata: metadata, store: store, data: asDelta?.bytes ?? file,
        deltaBase: asDelta?.basePiece, loser: rule.loser)
      var piece: Int64?
      for try await row in try await connection.execute(statement, logger: logger) { piece = row }
      guard let piece else { throw StorageError(.damaged, "stasis_upload_store_v1 returned no row") }
      var stored = metadata
      stored.revision = store.revision
      stored.piece = piece
      return .created(stored)
    default:
      throw StorageError(.damaged, "unreachable: every refusal is answered above")
    }
  }

  /// The two functions an upload calls (``put(_:_:player:metadata:file:delta:logger:)``),
  /// which hold no rule: ``UploadRule`` decides between them, in Swift, as it does for SQLite.
  ///
  /// `stasis_upload_find_v2` locks the player's row (one upload per player at a time, so the
  /// limits hold exactly), makes the slot's row for a new slot, then locks it (of two uploads on
  /// the same base exactly one commits: the second waits for the lock, then reads the new head),
  /// and reads what the upload finds: the slot's next revision and head, whether the loser is
  /// the slot's, the slots and bytes in use, the delta's base piece's place on its chain, and
  /// the slot's revisions with their parents (0: none) and whether each lost a conflict.
  ///
  /// `stasis_upload_store_v1` writes what was decided: the piece (a delta on `p_delta_base`, or
  /// whole), the slot's head, the revision, the loser marked as lost to it, the parents handed
  /// down, the pruned revisions deleted; then it collects the slot's pieces nothing needs
  /// (``ServerSchema/collectPieces(_:_:followsChains:)``; `followsChains: false` is a seam only
  /// the simulation's build sets), and returns the new piece.
  static func uploadFunctions(followsChains: Bool = true) -> [String] {
    [
      findFunction(version: 1),
      findFunction(version: 2),
      """
      CREATE OR REPLACE FUNCTION stasis_upload_store_v1(
        p_player BIGINT, p_slot TEXT, p_revision BIGINT, p_base BIGINT, p_parent BIGINT, p_size BIGINT,
        p_sha256 TEXT, p_uploaded_at BIGINT, p_device TEXT, p_game TEXT, p_build TEXT, p_schema BIGINT,
        p_created_at BIGINT, p_play_time DOUBLE PRECISION, p_progress DOUBLE PRECISION, p_summary TEXT,
        p_data BYTEA, p_delta_base BIGINT, p_depth BIGINT, p_chain BIGINT, p_loser BIGINT, p_pruned BIGINT[],
        p_relinked BIGINT[], p_relinked_parents BIGINT[])
      RETURNS BIGINT
      LANGUAGE plpgsql AS $$
      DECLARE
        v_piece BIGINT;
      BEGIN
        INSERT INTO pieces (player_id, slot, base, depth, chain, size, data)
        VALUES (p_player, p_slot, p_delta_base, p_depth, p_chain, p_size, p_data)
        RETURNING id INTO v_piece;
        UPDATE slots s SET next_revision = p_revision + 1, head_revision = p_revision
        WHERE s.player_id = p_player AND s.name = p_slot;
        INSERT INTO revisions AS r (player_id, slot, revision, base_revision, parent, size, sha256, uploaded_at,
          device, game, build, schema_version, created_at, play_time, progress, summary, file, piece)
        VALUES (p_player, p_slot, p_revision, p_base, p_parent, p_size, p_sha256, p_uploaded_at, p_device, p_game,
          p_build, p_schema, p_created_at, p_play_time, p_progress, p_summary, '\\x'::bytea, v_piece);
        IF p_loser IS NOT NULL THEN
          UPDATE revisions r SET lost_to = p_revision
          WHERE r.player_id = p_player AND r.slot = p_slot AND r.revision = p_loser;
        END IF;
        UPDATE revisions r SET parent = NULLIF(u.parent, 0)
        FROM unnest(p_relinked, p_relinked_parents) AS u(revision, parent)
        WHERE r.player_id = p_player AND r.slot = p_slot AND r.revision = u.revision;
        DELETE FROM revisions r WHERE r.player_id = p_player AND r.slot = p_slot AND r.revision = ANY(p_pruned);
        \(ServerSchema.collectPieces("p_player", "p_slot", followsChains: followsChains));
        RETURN v_piece;
      END
      $$
      """,
    ]
  }

  /// `stasis_upload_find_v1`, and `_v2`, which ends by setting `statement_timeout` to 0 for the
  /// rest of the upload's transaction (its locks are taken: a wait for them is still cancelled at
  /// the timeout). The rest is bounded work, and its `COMMIT` must not be cancelled while it waits
  /// for the synchronous standby: PostgreSQL keeps such a commit locally and answers success, a
  /// `201` (or a retry's `201`, on the stale path) that a failover could lose. `_v1` stays as it
  /// was, for a server of the version before during a rolling upgrade; the next version drops it.
  static func findFunction(version: Int) -> String {
    let reset =
      version >= 2
      ? "\n        PERFORM set_config('statement_timeout', '0', true);" : ""
    return """
      CREATE OR REPLACE FUNCTION stasis_upload_find_v\(version)(
        p_player BIGINT, p_slot TEXT, p_create BOOLEAN, p_loser BIGINT, p_delta_base BIGINT,
        OUT o_next BIGINT, OUT o_head BIGINT, OUT o_loser_exists BOOLEAN, OUT o_slots BIGINT, OUT o_bytes BIGINT,
        OUT o_depth BIGINT, OUT o_chain BIGINT, OUT o_revisions BIGINT[], OUT o_parents BIGINT[],
        OUT o_lost BOOLEAN[])
      LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM 1 FROM players WHERE id = p_player FOR UPDATE;
        IF p_create THEN
          INSERT INTO slots (player_id, name, next_revision, head_revision) VALUES (p_player, p_slot, 1, NULL)
          ON CONFLICT DO NOTHING;
        END IF;
        SELECT s.next_revision, s.head_revision INTO o_next, o_head FROM slots s
        WHERE s.player_id = p_player AND s.name = p_slot FOR UPDATE;
        o_next := COALESCE(o_next, 1);
        o_loser_exists := p_loser IS NOT NULL AND EXISTS (
          SELECT 1 FROM revisions r WHERE r.player_id = p_player AND r.slot = p_slot AND r.revision = p_loser);
        o_slots := 0;
        IF o_head IS NULL THEN
          SELECT COUNT(*) INTO o_slots FROM slots s WHERE s.player_id = p_player AND s.head_revision IS NOT NULL;
        END IF;
        SELECT COALESCE(SUM(r.size), 0) INTO o_bytes FROM revisions r WHERE r.player_id = p_player;
        IF p_delta_base IS NOT NULL THEN
          SELECT p.depth, p.chain INTO o_depth, o_chain FROM pieces p
          WHERE p.id = p_delta_base AND p.player_id = p_player AND p.slot = p_slot;
        END IF;
        SELECT COALESCE(array_agg(r.revision ORDER BY r.revision), '{}'),
          COALESCE(array_agg(COALESCE(r.parent, 0) ORDER BY r.revision), '{}'),
          COALESCE(array_agg(r.lost_to IS NOT NULL ORDER BY r.revision), '{}')
        INTO o_revisions, o_parents, o_lost
        FROM revisions r WHERE r.player_id = p_player AND r.slot = p_slot;\(reset)
      END
      $$
      """
  }

  /// The first upload function, whose pruning deleted conflict losers: dropped at migration.
  static let dropPutFunctionV1 = """
    DROP FUNCTION IF EXISTS stasis_put_v1(BIGINT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, BIGINT, TEXT, BIGINT, TEXT,
      TEXT, TEXT, BIGINT, BIGINT, DOUBLE PRECISION, DOUBLE PRECISION, TEXT, BYTEA)
    """

  /// The upload functions of the servers before pieces (`stasis_put_v2`, a wrapper, and
  /// `stasis_put_v3`), dropped: no server of those versions may share a database this version
  /// migrated (docs/SERVER.md, "Upgrading": stop every older server first), so nothing calls
  /// them.
  static let dropPutFunctionsBeforePieces = [
    """
    DROP FUNCTION IF EXISTS stasis_put_v2(BIGINT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, BIGINT, TEXT, BIGINT, TEXT,
      TEXT, TEXT, BIGINT, BIGINT, DOUBLE PRECISION, DOUBLE PRECISION, TEXT, BYTEA, BIGINT)
    """,
    """
    DROP FUNCTION IF EXISTS stasis_put_v3(BIGINT, TEXT, BIGINT, BIGINT, BIGINT, BIGINT, BIGINT, TEXT, BIGINT, TEXT,
      TEXT, TEXT, BIGINT, BIGINT, DOUBLE PRECISION, DOUBLE PRECISION, TEXT, BYTEA, BIGINT, BIGINT)
    """,
  ]

  package func head(player: Player, slot: String) async throws -> RevisionMetadata? {
    for try await head in try await client.execute(HeadStatement(player: player.id, slot: slot), logger: logger) {
      return head
    }
    return nil
  }

  package func file(player: Player, slot: String, revision: Int64?) async throws -> (RevisionMetadata, [UInt8])? {
    // A revision pruned between the two reads takes its pieces with it: read again, and the
    // revision is gone (nil) or the newer head answers.
    for _ in 0..<3 {
      guard let (metadata, file) = try await row(player: player, slot: slot, revision: revision) else { return nil }
      guard let piece = metadata.piece else { return (metadata, file) }
      if let rebuilt = try await rebuild(piece: piece) { return (metadata, rebuilt) }
    }
    throw StorageError(.damaged, "slot '\(slot)': a revision's pieces went missing three times while it was read")
  }

  private func row(player: Player, slot: String, revision: Int64?) async throws -> (RevisionMetadata, [UInt8])? {
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
          Int64?, Int64?, Int64?, Data
        ).self
      ).17
      return (metadata, [UInt8](data))
    }
    return nil
  }

  /// The file a piece rebuilds, its chain read in one statement (one snapshot); nil when the
  /// chain is no longer whole (collected since the revision was read).
  func rebuild(piece: Int64) async throws -> [UInt8]? {
    let rows = try await client.query(
      """
      WITH RECURSIVE chain(id, base, data, n) AS (
        SELECT p.id, p.base, p.data, 0 FROM pieces p WHERE p.id = \(piece)
        UNION ALL SELECT p.id, p.base, p.data, c.n + 1 FROM pieces p JOIN chain c ON p.id = c.base
          WHERE c.n < \(PieceRules.longestChain + 1)
      )
      SELECT data, base FROM chain ORDER BY n
      """, logger: logger)
    var chain: [(data: [UInt8], isDelta: Bool)] = []
    for try await (data, base) in rows.decode((Data, Int64?).self) { chain.append(([UInt8](data), base != nil)) }
    guard let last = chain.last, !last.isDelta else { return nil }
    return try PieceRules.rebuild(chain, limit: FormatLimits.maxFileSize)
  }

  package func revisions(player: Player, slot: String) async throws -> [RevisionMetadata]? {
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

  package func slots(player: Player) async throws -> [RevisionMetadata] {
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

  package func discard(player: Player, slot: String, revision: Int64) async throws -> DiscardOutcome {
    let logger = self.logger
    return try await writeTransaction { connection in
      try await Self.discard(
        connection, player: player, slot: slot, revision: revision, keptOnly: false, followsChains: followsChains,
        logger: logger)
    }
  }

  /// A discard in the caller's transaction; with `keptOnly`, of a kept revision only (any
  /// other is `.notFound`).
  static func discard(
    _ connection: PostgresConnection, player: Player, slot: String, revision: Int64, keptOnly: Bool,
    followsChains: Bool, logger: Logger
  ) async throws -> DiscardOutcome {
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
          AND (lost_to IS NOT NULL OR NOT \(keptOnly))
        RETURNING parent
      ), handed AS (
        UPDATE revisions SET parent = (SELECT parent FROM gone)
        WHERE player_id = \(player.id) AND slot = \(slot) AND parent = \(revision) AND EXISTS (SELECT 1 FROM gone)
      )
      SELECT COUNT(*) FROM gone
      """, logger: logger)
    var count: Int64 = 0
    for try await value in deleted.decode(Int64.self) { count = value }
    guard count > 0 else { return .notFound }
    try await collect(connection, player, slot, followsChains: followsChains, logger)
    return .discarded
  }

  package func delete(player: Player, slot: String, head expected: Int64) async throws -> DeleteOutcome {
    let logger = self.logger
    return try await writeTransaction { connection in
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
      try await Self.collect(connection, player, slot, followsChains: followsChains, logger)
      return .deleted
    }
  }

  package func ping() async throws {
    try await client.query("SELECT 1", logger: logger)
  }

  // MARK: Rows

  static let columns =
    "slot, revision, base_revision, size, sha256, uploaded_at, device, game, build, schema_version, created_at, play_time, progress, summary, lost_to, parent, piece"
  /// The columns, from `revisions r`.
  static let headColumns = columns.split(separator: ",").map { "r." + $0.trimmingCharacters(in: .whitespaces) }
    .joined(separator: ", ")
  /// A slot's head revision, `$1` the player and `$2` the slot.
  static let headJoin = """
    FROM slots s JOIN revisions r ON r.player_id = s.player_id AND r.slot = s.name AND r.revision = s.head_revision
    WHERE s.player_id = $1 AND s.name = $2
    """

  static func binds(_ values: any PostgresEncodable & Sendable...) throws -> PostgresBindings {
    var bindings = PostgresBindings()
    for value in values { try bindings.append(value) }
    return bindings
  }

  /// Collects the slot's pieces nothing needs (``ServerSchema/collectPieces(_:_:followsChains:)``),
  /// in the caller's transaction, which holds the slot's row lock.
  static func collect(
    _ connection: PostgresConnection, _ player: Player, _ slot: String, followsChains: Bool, _ logger: Logger
  ) async throws {
    try await connection.query(
      PostgresQuery(
        unsafeSQL: ServerSchema.collectPieces("$1", "$2", followsChains: followsChains),
        binds: try binds(player.id, slot)),
      logger: logger)
  }

  static func headRevision(_ connection: PostgresConnection, _ player: Player, _ slot: String, _ logger: Logger)
    async throws -> Int64?
  {
    let rows = try await connection.query(
      "SELECT head_revision FROM slots WHERE player_id = \(player.id) AND name = \(slot)", logger: logger)
    var head: Int64?
    for try await value in rows.decode(Int64?.self) { head = value }
    return head
  }

  static func metadata(
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
      lostTo, parent, piece
    ) =
      try row.decode(
        (
          String, Int64, Int64?, Int64, String, Int64, String, String, String, Int64, Int64, Double, Double?, String,
          Int64?, Int64?, Int64?
        ).self)
    var metadata = RevisionMetadata(
      slot: slot, revision: revision, baseRevision: base, bytes: size, sha256: sha, uploadedAt: uploaded,
      device: device, game: game, build: build, schema: schema, createdAt: created, playTime: playTime,
      progress: progress, summaryJSON: summary, lostTo: lostTo)
    metadata.parent = parent
    metadata.piece = piece
    return metadata
  }
}
