/// v9: every key of a player's data includes the player's id, so the tables can be distributed
/// by `player_id` (Citus, docs/SCALING.md) with every primary key and unique constraint
/// enforced on the one node that holds the player. `upload_parts` carries `player_id`;
/// `pieces`, `uploads`, `upload_parts`, `desync_bundles` and `replays` are keyed by
/// `(player_id, …)`. `ShardingSchemaTests` reads both backends' schemas and checks the rules.
///
/// The tables of the directory (`players`, `tokens`: who a name or a token is) and of the studio
/// (`staff`, `staff_sessions`, `audit`) are reference tables in that plan (copied to every
/// node), so their keys stay as they are.
extension ServerSchema {
  /// The tables of a player's data, each with its new key (the order of its columns).
  static let playerKeys: [(table: String, key: String)] = [
    ("pieces", "player_id, id"),
    ("uploads", "player_id, id"),
    ("upload_parts", "player_id, upload_id, position"),
    ("desync_bundles", "player_id, id"),
    ("replays", "player_id, id"),
  ]

  /// The tables whose id SQLite no longer takes from the rowid (``SQLiteBackend/nextID(_:_:)``).
  static let sequencedTables = ["pieces", "desync_bundles", "replays"]

  /// v9 (SQLite): the tables rebuilt with their new keys (SQLite cannot change a primary key in
  /// place). Their ids were the rowid (`AUTOINCREMENT`); a key of two columns has no rowid
  /// alias, so `id_sequences` hands them out from where `AUTOINCREMENT` was, never reusing one.
  static let sqliteSharding = """
    CREATE TABLE id_sequences (name TEXT PRIMARY KEY, last INTEGER NOT NULL);
    \(sequencedTables.map { table in
        """
        INSERT INTO id_sequences (name, last) VALUES ('\(table)', MAX(
          COALESCE((SELECT seq FROM sqlite_sequence WHERE name = '\(table)'), 0),
          COALESCE((SELECT MAX(id) FROM \(table)), 0)));
        """
      }.joined(separator: "\n"))
    CREATE TABLE pieces_v9 (
      id INTEGER NOT NULL,
      player_id INTEGER NOT NULL,
      slot TEXT NOT NULL,
      base INTEGER,
      depth INTEGER NOT NULL,
      chain INTEGER NOT NULL,
      size INTEGER NOT NULL,
      data BLOB NOT NULL,
      PRIMARY KEY (player_id, id)
    );
    INSERT INTO pieces_v9 (id, player_id, slot, base, depth, chain, size, data)
    SELECT id, player_id, slot, base, depth, chain, size, data FROM pieces;
    DROP TABLE pieces;
    ALTER TABLE pieces_v9 RENAME TO pieces;
    CREATE INDEX pieces_by_slot ON pieces (player_id, slot);
    CREATE INDEX pieces_by_id ON pieces (id);
    CREATE TABLE uploads_v9 (
      id TEXT NOT NULL,
      player_id INTEGER NOT NULL,
      slot TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      length INTEGER NOT NULL,
      received INTEGER NOT NULL DEFAULT 0,
      headers TEXT NOT NULL,
      delta_piece INTEGER,
      PRIMARY KEY (player_id, id)
    );
    INSERT INTO uploads_v9 (id, player_id, slot, created_at, length, received, headers, delta_piece)
    SELECT id, player_id, slot, created_at, length, received, headers, delta_piece FROM uploads;
    DROP TABLE uploads;
    ALTER TABLE uploads_v9 RENAME TO uploads;
    CREATE INDEX uploads_by_slot ON uploads (player_id, slot);
    CREATE TABLE upload_parts_v9 (
      player_id INTEGER NOT NULL,
      upload_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      data BLOB NOT NULL,
      PRIMARY KEY (player_id, upload_id, position)
    );
    INSERT INTO upload_parts_v9 (player_id, upload_id, position, data)
    SELECT u.player_id, p.upload_id, p.position, p.data FROM upload_parts p JOIN uploads u ON u.id = p.upload_id;
    DROP TABLE upload_parts;
    ALTER TABLE upload_parts_v9 RENAME TO upload_parts;
    CREATE TABLE desync_bundles_v9 (
      id INTEGER NOT NULL,
      player_id INTEGER NOT NULL REFERENCES players(id),
      created_at INTEGER NOT NULL,
      game TEXT NOT NULL,
      build TEXT NOT NULL,
      tick INTEGER NOT NULL,
      summary TEXT NOT NULL,
      length INTEGER NOT NULL,
      sha256 BLOB NOT NULL,
      bytes BLOB NOT NULL,
      PRIMARY KEY (player_id, id),
      UNIQUE (player_id, sha256)
    );
    INSERT INTO desync_bundles_v9 (id, player_id, created_at, game, build, tick, summary, length, sha256, bytes)
    SELECT id, player_id, created_at, game, build, tick, summary, length, sha256, bytes FROM desync_bundles;
    DROP TABLE desync_bundles;
    ALTER TABLE desync_bundles_v9 RENAME TO desync_bundles;
    CREATE TABLE replays_v9 (
      id INTEGER NOT NULL,
      player_id INTEGER NOT NULL REFERENCES players(id),
      name TEXT NOT NULL,
      updated_at INTEGER NOT NULL,
      game TEXT NOT NULL,
      build TEXT NOT NULL,
      start_tick INTEGER NOT NULL,
      ticks INTEGER NOT NULL,
      length INTEGER NOT NULL,
      sha256 BLOB NOT NULL,
      bytes BLOB NOT NULL,
      PRIMARY KEY (player_id, id),
      UNIQUE (player_id, name)
    );
    INSERT INTO replays_v9 (id, player_id, name, updated_at, game, build, start_tick, ticks, length, sha256, bytes)
    SELECT id, player_id, name, updated_at, game, build, start_tick, ticks, length, sha256, bytes FROM replays;
    DROP TABLE replays;
    ALTER TABLE replays_v9 RENAME TO replays;
    """

  /// v9 (PostgreSQL): as ``sqliteSharding``, in place; every statement may run again. Each
  /// change looks in the catalogue first and takes its table's lock only when it has work to
  /// do: a server starting beside others under load must not lock their tables. (An `ALTER
  /// TABLE … ADD COLUMN IF NOT EXISTS` takes the table's exclusive lock even when the column is
  /// there, and deadlocked with an upload's part in `TwoServerCollectionTests`.)
  static let postgresSharding: [String] = [
    """
    DO $$ BEGIN
      IF NOT EXISTS (
        SELECT 1 FROM pg_attribute WHERE attrelid = 'upload_parts'::regclass AND attname = 'player_id' AND NOT attisdropped
      ) THEN
        ALTER TABLE upload_parts ADD COLUMN player_id BIGINT;
        UPDATE upload_parts p SET player_id = u.player_id FROM uploads u WHERE u.id = p.upload_id;
        -- The parts of an upload that is gone: nothing reads them.
        DELETE FROM upload_parts WHERE player_id IS NULL;
        ALTER TABLE upload_parts ALTER COLUMN player_id SET NOT NULL;
      END IF;
    END $$
    """,
    // A server of the version before, running beside this one during an upgrade, writes parts
    // without the player: the part's upload names it. Dropped by the next version.
    """
    CREATE OR REPLACE FUNCTION stasis_part_player_v9() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.player_id IS NULL THEN
        SELECT u.player_id INTO NEW.player_id FROM uploads u WHERE u.id = NEW.upload_id;
      END IF;
      RETURN NEW;
    END
    $$
    """,
    """
    DO $$ BEGIN
      IF NOT EXISTS (
        SELECT 1 FROM pg_trigger WHERE tgrelid = 'upload_parts'::regclass AND tgname = 'upload_parts_player'
      ) THEN
        CREATE TRIGGER upload_parts_player BEFORE INSERT ON upload_parts
        FOR EACH ROW EXECUTE FUNCTION stasis_part_player_v9();
      END IF;
    END $$
    """,
    // Each table's primary key, when its first column is not yet the player's id.
    """
    DO $$
    DECLARE
      k RECORD;
      old_key TEXT;
    BEGIN
      FOR k IN SELECT * FROM (VALUES \(playerKeys.map { "('\($0.table)', '\($0.key)')" }.joined(separator: ", ")))
        AS keys(name, columns)
      LOOP
        IF NOT EXISTS (
          SELECT 1 FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
          WHERE c.conrelid = k.name::regclass AND c.contype = 'p' AND a.attname = 'player_id'
        ) THEN
          SELECT conname INTO old_key FROM pg_constraint WHERE conrelid = k.name::regclass AND contype = 'p';
          EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I, ADD PRIMARY KEY (%s)', k.name, old_key, k.columns);
        END IF;
      END LOOP;
    END $$
    """,
    // A piece's chain is followed by id (`pieces.base`), within the player's slot.
    """
    DO $$ BEGIN
      IF to_regclass('pieces_by_id') IS NULL THEN
        CREATE INDEX pieces_by_id ON pieces (id);
      END IF;
    END $$
    """,
  ]
}
