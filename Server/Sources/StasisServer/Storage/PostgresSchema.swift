import Crypto
import Foundation
import Logging
import PostgresNIO

// PostgreSQL's schema and its migrations: what `PostgresBackend.migrate()` runs, and the table
// that says what it ran. SQLite's schema is GRDB's migrator (`SQLiteBackend`, `grdb_migrations`).

extension ServerSchema {
  static let postgres: [String] = [
    """
    CREATE TABLE IF NOT EXISTS players (
      id BIGSERIAL PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      token_hash BYTEA NOT NULL UNIQUE,
      created_at BIGINT NOT NULL,
      revoked BOOLEAN NOT NULL DEFAULT FALSE
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS slots (
      player_id BIGINT NOT NULL REFERENCES players(id),
      name TEXT NOT NULL,
      next_revision BIGINT NOT NULL,
      head_revision BIGINT,
      PRIMARY KEY (player_id, name)
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS revisions (
      player_id BIGINT NOT NULL,
      slot TEXT NOT NULL,
      revision BIGINT NOT NULL,
      base_revision BIGINT,
      size BIGINT NOT NULL,
      sha256 TEXT NOT NULL,
      uploaded_at BIGINT NOT NULL,
      device TEXT NOT NULL,
      game TEXT NOT NULL,
      build TEXT NOT NULL,
      schema_version BIGINT NOT NULL,
      created_at BIGINT NOT NULL,
      play_time DOUBLE PRECISION NOT NULL,
      progress DOUBLE PRECISION,
      summary TEXT NOT NULL,
      file BYTEA NOT NULL,
      PRIMARY KEY (player_id, slot, revision)
    )
    """,
    // A save is dense binary already: PostgreSQL's TOAST compression (pglz) gained 0 % on the
    // demo's 12 KB saves and 2 % on its 380 KB ones, and took over a third of the database's CPU
    // under load. Stored out of line, uncompressed. Checked first, so a start takes no lock.
    """
    DO $$ BEGIN
      IF (SELECT attstorage FROM pg_attribute WHERE attrelid = 'revisions'::regclass AND attname = 'file') <> 'e' THEN
        ALTER TABLE revisions ALTER COLUMN file SET STORAGE EXTERNAL;
      END IF;
    END $$
    """,
    // v2: the revision a conflict's loser lost to (null: not a loser, pruned as usual).
    "ALTER TABLE revisions ADD COLUMN IF NOT EXISTS lost_to BIGINT",
    // v3: the revision whose state a revision continues; every revision stored before it
    // continued its base. Added and filled once, in the migration's advisory lock.
    """
    DO $$ BEGIN
      IF NOT EXISTS (
        SELECT 1 FROM information_schema.columns WHERE table_name = 'revisions' AND column_name = 'parent'
        AND table_schema = current_schema()
      ) THEN
        ALTER TABLE revisions ADD COLUMN parent BIGINT;
        UPDATE revisions SET parent = base_revision;
      END IF;
    END $$
    """,
    // v4: revisions stored as pieces (``PieceRules``); a revision with a piece has an empty `file`.
    """
    CREATE TABLE IF NOT EXISTS pieces (
      id BIGSERIAL PRIMARY KEY,
      player_id BIGINT NOT NULL,
      slot TEXT NOT NULL,
      base BIGINT,
      depth BIGINT NOT NULL,
      chain BIGINT NOT NULL,
      size BIGINT NOT NULL,
      data BYTEA NOT NULL
    )
    """,
    "CREATE INDEX IF NOT EXISTS pieces_by_slot ON pieces (player_id, slot)",
    """
    DO $$ BEGIN
      IF (SELECT attstorage FROM pg_attribute WHERE attrelid = 'pieces'::regclass AND attname = 'data') <> 'e' THEN
        ALTER TABLE pieces ALTER COLUMN data SET STORAGE EXTERNAL;
      END IF;
    END $$
    """,
    "ALTER TABLE revisions ADD COLUMN IF NOT EXISTS piece BIGINT",
    // v4: resumable uploads, their parts, and the piece each one's delta is built on.
    """
    CREATE TABLE IF NOT EXISTS uploads (
      id TEXT PRIMARY KEY,
      player_id BIGINT NOT NULL,
      slot TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      length BIGINT NOT NULL,
      received BIGINT NOT NULL DEFAULT 0,
      headers TEXT NOT NULL,
      delta_piece BIGINT
    )
    """,
    "CREATE INDEX IF NOT EXISTS uploads_by_slot ON uploads (player_id, slot)",
    """
    CREATE TABLE IF NOT EXISTS upload_parts (
      upload_id TEXT NOT NULL,
      position BIGINT NOT NULL,
      data BYTEA NOT NULL,
      PRIMARY KEY (upload_id, position)
    )
    """,
  ]
}

/// One named step of PostgreSQL's schema: statements run in order, in the migration's
/// transaction, and recorded in `stasis_migrations` under `name` with their checksum.
struct PostgresMigration: Sendable {
  /// What the step makes (`players, slots, revisions, pieces, uploads`).
  let name: String
  /// Its statements, each safe to run again (`IF NOT EXISTS`, `CREATE OR REPLACE`).
  let statements: [String]

  /// The SHA-256 of the statements: a step whose text changed (a column added to a group, a
  /// function's new body) runs again, as a step never run does.
  var checksum: String {
    var hash = SHA256()
    for statement in statements {
      hash.update(data: Data(statement.utf8))
      hash.update(data: Data([0]))
    }
    return hash.finalize().map { String(format: "%02x", $0) }.joined()
  }
}

/// What a start's migration did: the steps it ran, and those `stasis_migrations` said were
/// already applied with the same text (a server's second start runs none, and no DDL).
package struct PostgresMigrationReport: Sendable, Equatable {
  /// The steps run, in order.
  package var ran: [String] = []
  /// The steps skipped: recorded with the same checksum.
  package var applied: [String] = []
}

extension PostgresBackend {
  /// The steps of the schema, in order. The upload functions' step depends on the storage
  /// rules (``StorageRules/followsChains``), so a backend whose rules differ from the ones
  /// recorded makes its own functions again.
  func migrations() -> [PostgresMigration] {
    [
      PostgresMigration(name: "players, slots, revisions, pieces, uploads", statements: ServerSchema.postgres),
      PostgresMigration(name: "staff, sessions, the audit log, device tokens", statements: ServerSchema.postgresStudio),
      PostgresMigration(name: "settings", statements: ServerSchema.postgresSettings),
      PostgresMigration(name: "desync bundles", statements: ServerSchema.postgresBundles),
      PostgresMigration(name: "replays", statements: ServerSchema.postgresReplays),
      PostgresMigration(
        name: "every key of a player's data includes the player", statements: ServerSchema.postgresSharding),
      // stasis_put_v1 pruned conflict losers, v2 and v3 stored no pieces: they are dropped, so
      // no server of those versions calls them. stasis_put_v4, the rule in PL/pgSQL, is neither
      // made nor dropped: a server of the version before may still run beside this one, on the
      // same tables and locks (docs/SERVER.md, "Upgrading"); the next version drops it.
      PostgresMigration(
        name: "the upload functions",
        statements: [Self.dropPutFunctionV1] + Self.uploadFunctions(followsChains: followsChains)
          + Self.dropPutFunctionsBeforePieces),
    ]
  }

  /// Runs, in `connection`'s transaction (which holds the migration's advisory lock), every step
  /// `stasis_migrations` does not record with the same checksum, and records each. The table is
  /// made on the first start; a start that finds every step recorded runs no DDL at all.
  func migrate(_ connection: PostgresConnection) async throws -> PostgresMigrationReport {
    var recorded: [String: String] = [:]
    var exists = false
    for try await found in try await connection.query(
      "SELECT to_regclass('stasis_migrations') IS NOT NULL", logger: logger
    ).decode(Bool.self) {
      exists = found
    }
    if exists {
      for try await (name, checksum) in try await connection.query(
        "SELECT name, checksum FROM stasis_migrations", logger: logger
      ).decode((String, String).self) {
        recorded[name] = checksum
      }
    } else {
      try await connection.query(
        """
        CREATE TABLE IF NOT EXISTS stasis_migrations (
          name TEXT PRIMARY KEY,
          checksum TEXT NOT NULL,
          applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )
        """, logger: logger)
    }
    var report = PostgresMigrationReport()
    for migration in migrations() {
      let checksum = migration.checksum
      guard recorded[migration.name] != checksum else {
        report.applied.append(migration.name)
        continue
      }
      for statement in migration.statements {
        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
      }
      try await connection.query(
        """
        INSERT INTO stasis_migrations (name, checksum) VALUES (\(migration.name), \(checksum))
        ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()
        """, logger: logger)
      report.ran.append(migration.name)
    }
    return report
  }
}
