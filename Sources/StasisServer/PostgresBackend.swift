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
  /// `connections` pooled connections.
  public init(url: String, connections: Int = 20, logger: Logger) throws {
    guard let parts = URLComponents(string: url), ["postgres", "postgresql"].contains(parts.scheme ?? ""),
      let user = parts.user
    else {
      throw PlayerError("--postgres takes postgres://USER:PASSWORD@HOST:PORT/DATABASE")
    }
    var configuration = PostgresClient.Configuration(
      host: parts.host.flatMap { $0.isEmpty ? nil : $0 } ?? "127.0.0.1", port: parts.port ?? 5432, username: user,
      password: parts.password, database: String(parts.path.drop { $0 == "/" }), tls: .disable)
    configuration.options.maximumConnections = connections
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
      for statement in ServerSchema.postgres {
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
    let rows = try await client.query(
      "SELECT id, name, created_at FROM players WHERE token_hash = \(Data(tokenHash)) AND NOT revoked",
      logger: logger)
    for try await (id, name, createdAt) in rows.decode((Int64, String, Int64).self) {
      return Player(id: id, name: name, createdAt: createdAt, revoked: false)
    }
    return nil
  }

  public func put(
    player: Player, precondition: WritePrecondition, metadata: RevisionMetadata, file: [UInt8], keep: Int,
    limits: PlayerLimits
  ) async throws -> PutOutcome {
    let logger = self.logger
    return try await client.withTransaction(logger: logger) { connection in
      // The player's row first: one upload per player at a time, so the limits hold exactly.
      try await connection.query("SELECT id FROM players WHERE id = \(player.id) FOR UPDATE", logger: logger)
      if precondition == .create {
        try await connection.query(
          """
          INSERT INTO slots (player_id, name, next_revision, head_revision) VALUES (\(player.id), \(metadata.slot), 1, NULL)
          ON CONFLICT DO NOTHING
          """, logger: logger)
      }
      var next: Int64?
      var head: Int64?
      let slotRows = try await connection.query(
        """
        SELECT next_revision, head_revision FROM slots WHERE player_id = \(player.id) AND name = \(metadata.slot)
        FOR UPDATE
        """, logger: logger)
      for try await (n, h) in slotRows.decode((Int64, Int64?).self) {
        next = n
        head = h
      }
      switch precondition {
      case .create:
        if let head {
          return .stale(head: try await Self.metadata(connection, player, metadata.slot, head, logger))
        }
      case .head(let expected):
        guard let head else { return .stale(head: nil) }
        if head != expected {
          return .stale(head: try await Self.metadata(connection, player, metadata.slot, head, logger))
        }
      }
      if head == nil {
        var count = 0
        let counted = try await connection.query(
          "SELECT COUNT(*) FROM slots WHERE player_id = \(player.id) AND head_revision IS NOT NULL", logger: logger)
        for try await value in counted.decode(Int64.self) { count = Int(value) }
        if count >= limits.slots { return .tooManySlots("the player has \(count) slots; the limit is \(limits.slots)") }
      }
      var used: Int64 = 0
      let sums = try await connection.query(
        "SELECT COALESCE(SUM(size), 0)::BIGINT FROM revisions WHERE player_id = \(player.id)", logger: logger)
      for try await value in sums.decode(Int64.self) { used = value }
      if used + metadata.bytes > limits.totalBytes {
        return .overLimit(
          "the player's saves take \(used) bytes; this one would pass the limit of \(limits.totalBytes)")
      }
      let revision = next ?? 1
      var stored = metadata
      stored.revision = revision
      try await connection.query(
        """
        UPDATE slots SET next_revision = \(revision + 1), head_revision = \(revision)
        WHERE player_id = \(player.id) AND name = \(stored.slot)
        """, logger: logger)
      try await connection.query(
        """
        INSERT INTO revisions (player_id, slot, revision, base_revision, size, sha256, uploaded_at, device, game,
          build, schema_version, created_at, play_time, progress, summary, file)
        VALUES (\(player.id), \(stored.slot), \(revision), \(stored.baseRevision), \(stored.bytes), \(stored.sha256),
          \(stored.uploadedAt), \(stored.device), \(stored.game), \(stored.build), \(stored.schema), \(stored.createdAt),
          \(stored.playTime), \(stored.progress), \(stored.summaryJSON), \(Data(file)))
        """, logger: logger)
      try await connection.query(
        """
        DELETE FROM revisions WHERE player_id = \(player.id) AND slot = \(stored.slot)
          AND revision <= \(revision - Int64(max(1, keep)))
        """, logger: logger)
      return .created(stored)
    }
  }

  public func head(player: Player, slot: String) async throws -> RevisionMetadata? {
    try await client.withConnection { connection in
      guard let head = try await Self.headRevision(connection, player, slot, self.logger) else { return nil }
      return try await Self.metadata(connection, player, slot, head, self.logger)
    }
  }

  public func file(player: Player, slot: String, revision: Int64?) async throws -> (RevisionMetadata, [UInt8])? {
    try await client.withConnection { connection in
      var wanted = revision
      if wanted == nil { wanted = try await Self.headRevision(connection, player, slot, self.logger) }
      guard let wanted else { return nil }
      let rows = try await connection.query(
        PostgresQuery(
          unsafeSQL: "SELECT \(Self.columns), file FROM revisions WHERE player_id = $1 AND slot = $2 AND revision = $3",
          binds: try Self.binds(player.id, slot, wanted)), logger: self.logger)
      for try await row in rows {
        let metadata = try Self.metadata(row)
        let data = try row.decode(
          (
            String, Int64, Int64?, Int64, String, Int64, String, String, String, Int64, Int64, Double, Double?, String,
            Data
          ).self
        ).14
        return (metadata, [UInt8](data))
      }
      return nil
    }
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
    "slot, revision, base_revision, size, sha256, uploaded_at, device, game, build, schema_version, created_at, play_time, progress, summary"

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

  private static func metadata(_ row: PostgresRow) throws -> RevisionMetadata {
    let (slot, revision, base, size, sha, uploaded, device, game, build, schema, created, playTime, progress, summary) =
      try row.decode(
        (String, Int64, Int64?, Int64, String, Int64, String, String, String, Int64, Int64, Double, Double?, String)
          .self)
    return RevisionMetadata(
      slot: slot, revision: revision, baseRevision: base, bytes: size, sha256: sha, uploadedAt: uploaded,
      device: device, game: game, build: build, schema: schema, createdAt: created, playTime: playTime,
      progress: progress, summaryJSON: summary)
  }
}
