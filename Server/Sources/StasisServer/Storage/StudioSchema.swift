extension ServerSchema {
  /// v5 (SQLite): staff, their sessions, the append-only audit log, and a player's device
  /// tokens (each player's token so far moved in as their "first token").
  static let sqliteStudio = """
    CREATE TABLE staff (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      name TEXT NOT NULL UNIQUE,
      role TEXT NOT NULL,
      password_hash TEXT NOT NULL,
      key_hash BLOB UNIQUE,
      created_at INTEGER NOT NULL,
      disabled INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE staff_sessions (
      id_hash BLOB PRIMARY KEY,
      staff_id INTEGER NOT NULL REFERENCES staff(id),
      csrf TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    );
    CREATE TABLE audit (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      at INTEGER NOT NULL,
      staff_id INTEGER NOT NULL,
      staff_name TEXT NOT NULL,
      action TEXT NOT NULL,
      player_id INTEGER,
      player_name TEXT,
      slot TEXT,
      revision INTEGER,
      head_before INTEGER,
      head_after INTEGER,
      reason TEXT NOT NULL,
      undoes INTEGER
    );
    CREATE INDEX audit_by_player ON audit (player_name, id);
    CREATE INDEX audit_by_staff ON audit (staff_name, id);
    CREATE INDEX audit_by_undoes ON audit (undoes);
    CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
    CREATE TABLE tokens (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      player_id INTEGER NOT NULL REFERENCES players(id),
      token_hash BLOB NOT NULL UNIQUE,
      label TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      revoked_at INTEGER
    );
    CREATE INDEX tokens_by_player ON tokens (player_id);
    INSERT INTO tokens (player_id, token_hash, label, created_at, revoked_at)
    SELECT id, token_hash, 'first token', created_at, CASE WHEN revoked THEN created_at END FROM players;
    """

  /// v5 (PostgreSQL): as ``sqliteStudio``; every statement may run again (two servers starting
  /// together, each in the migration's advisory lock).
  static let postgresStudio: [String] = [
    """
    CREATE TABLE IF NOT EXISTS staff (
      id BIGSERIAL PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      role TEXT NOT NULL,
      password_hash TEXT NOT NULL,
      key_hash BYTEA UNIQUE,
      created_at BIGINT NOT NULL,
      disabled BOOLEAN NOT NULL DEFAULT FALSE
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS staff_sessions (
      id_hash BYTEA PRIMARY KEY,
      staff_id BIGINT NOT NULL REFERENCES staff(id),
      csrf TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS audit (
      id BIGSERIAL PRIMARY KEY,
      at BIGINT NOT NULL,
      staff_id BIGINT NOT NULL,
      staff_name TEXT NOT NULL,
      action TEXT NOT NULL,
      player_id BIGINT,
      player_name TEXT,
      slot TEXT,
      revision BIGINT,
      head_before BIGINT,
      head_after BIGINT,
      reason TEXT NOT NULL,
      undoes BIGINT
    )
    """,
    "CREATE INDEX IF NOT EXISTS audit_by_player ON audit (player_name, id)",
    "CREATE INDEX IF NOT EXISTS audit_by_staff ON audit (staff_name, id)",
    "CREATE INDEX IF NOT EXISTS audit_by_undoes ON audit (undoes)",
    """
    CREATE OR REPLACE FUNCTION stasis_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'the audit log is append-only';
    END
    $$
    """,
    """
    DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'audit_append_only') THEN
        CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit
        FOR EACH STATEMENT EXECUTE FUNCTION stasis_audit_append_only();
      END IF;
    END $$
    """,
    """
    CREATE TABLE IF NOT EXISTS tokens (
      id BIGSERIAL PRIMARY KEY,
      player_id BIGINT NOT NULL REFERENCES players(id),
      token_hash BYTEA NOT NULL UNIQUE,
      label TEXT NOT NULL,
      created_at BIGINT NOT NULL,
      revoked_at BIGINT
    )
    """,
    "CREATE INDEX IF NOT EXISTS tokens_by_player ON tokens (player_id)",
    // Each player's token so far, once (a token already moved in is left as it is).
    """
    INSERT INTO tokens (player_id, token_hash, label, created_at, revoked_at)
    SELECT id, token_hash, 'first token', created_at, CASE WHEN revoked THEN created_at END FROM players
    ON CONFLICT (token_hash) DO NOTHING
    """,
  ]

  /// The unrevoked player a token opens (`param` its hash): an unrevoked token of theirs, or
  /// the token `players` holds when `tokens` has no row for it (a player added by a server
  /// from before v5 sharing the database).
  static func playerByToken(_ param: String) -> String {
    """
    SELECT p.id, p.name, p.created_at, p.revoked FROM tokens t JOIN players p ON p.id = t.player_id
    WHERE t.token_hash = \(param) AND t.revoked_at IS NULL AND NOT p.revoked
    UNION ALL
    SELECT p.id, p.name, p.created_at, p.revoked FROM players p
    WHERE p.token_hash = \(param) AND NOT p.revoked AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.token_hash = \(param))
    """
  }

  static let playerByToken = playerByToken("?1")

  /// Moves a player's token from `players` into `tokens` when it is not there yet (a player
  /// added by a server from before v5), so the console lists and revokes it like any other.
  static func adoptToken(_ param: String) -> String {
    """
    INSERT INTO tokens (player_id, token_hash, label, created_at, revoked_at)
    SELECT id, token_hash, 'first token', created_at, CASE WHEN revoked THEN created_at END FROM players
    WHERE id = \(param) AND NOT EXISTS (SELECT 1 FROM tokens t WHERE t.token_hash = players.token_hash)
    """
  }

  /// The audit log's columns, with the entry that undid each (`a` the log, `u` its undoers).
  static let auditColumns = """
    a.id, a.at, a.staff_name, a.action, a.player_id, a.player_name, a.slot, a.revision, a.head_before, a.head_after,
    a.reason, a.undoes, (SELECT MIN(u.id) FROM audit u WHERE u.undoes = a.id) AS undone_by
    """
}
