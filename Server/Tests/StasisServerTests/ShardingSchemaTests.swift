import Foundation
import GRDB
import Logging
import Testing

@testable import ServerTestSupport
@testable import StasisServer

/// What sharding by player needs of the schema (docs/SCALING.md, "What the schema must hold"),
/// read from each backend's own catalogue after the server's migrations: every table of a
/// player's data carries the player's id, every key and unique constraint of it includes that
/// id, no foreign key spans players, and the directory's and the studio's tables (reference
/// tables in the plan) are referred to only as a reference table may be. A new table is a
/// player's unless it is named below, so it meets the rules or fails this test.
@Suite("The schema can be sharded by player")
struct ShardingSchemaTests {
  /// Who a name or a token is: reference tables in the plan, read on every node.
  static let directory: Set<String> = ["players", "tokens"]
  /// The studio's: reference tables, keyed by nothing of a player's.
  static let studio: Set<String> = ["staff", "staff_sessions", "audit"]
  /// The backends' own bookkeeping, never sharded (SQLite's id counters, PostgreSQL's migrations).
  static let bookkeeping: Set<String> = ["id_sequences", "stasis_migrations"]

  @Test("every table of a player's data is keyed by the player; nothing spans players", arguments: Backend.allCases)
  func rules(backend: Backend) async throws {
    let tables = try await Self.schema(backend)
    let playerTables = Set(tables.keys).subtracting(Self.directory).subtracting(Self.studio).subtracting(
      Self.bookkeeping)
    // The tables the plan distributes: all of them are here, and checked below.
    #expect(
      playerTables.isSuperset(of: [
        "slots", "revisions", "pieces", "uploads", "upload_parts", "settings", "desync_bundles", "replays",
      ]), "\(playerTables.sorted())")
    #expect(Self.studio.isSubset(of: Set(tables.keys)) && Self.directory.isSubset(of: Set(tables.keys)))
    // The readers find what is known to be there (a reader that found nothing would pass the
    // rules): keys, unique keys and foreign keys of each kind of table.
    #expect(tables["pieces"]?.primaryKey == ["player_id", "id"])
    #expect(tables["upload_parts"]?.primaryKey == ["player_id", "upload_id", "position"])
    #expect(tables["upload_parts"]?.columns["player_id"] == true)
    #expect(tables["revisions"]?.columns["progress"] == false, "a nullable column reads as nullable")
    #expect(tables["desync_bundles"]?.uniques.contains(["player_id", "sha256"]) == true)
    #expect(tables["players"]?.uniques.contains(["name"]) == true)
    #expect(tables["slots"]?.foreignKeys.contains { $0.table == "players" && $0.columns == ["player_id"] } == true)
    #expect(tables["staff_sessions"]?.foreignKeys.contains { $0.table == "staff" } == true)
    #expect(Self.violations(tables) == [], "on \(backend)")
  }

  @Test("the rules catch what they should: a key without the player, a foreign key across players or the studio")
  func rulesCanFail() throws {
    var tables: [String: TableShape] = [
      "players": TableShape(columns: ["id": true], primaryKey: ["id"]),
      "pieces": TableShape(columns: ["id": true, "player_id": true], primaryKey: ["id"]),
      "upload_parts": TableShape(columns: ["upload_id": true], primaryKey: ["upload_id"]),
      "audit": TableShape(
        columns: ["id": true], primaryKey: ["id"],
        foreignKeys: [.init(columns: ["id"], table: "pieces", referenced: ["id"])]),
    ]
    tables["slots"] = TableShape(
      columns: ["player_id": true, "name": true], primaryKey: ["player_id", "name"], uniques: [["name"]],
      foreignKeys: [
        .init(columns: ["name"], table: "pieces", referenced: ["id"]),
        .init(columns: ["player_id"], table: "staff", referenced: ["id"]),
      ])
    tables["staff_sessions"] = TableShape(
      columns: ["id": true], primaryKey: ["id"],
      foreignKeys: [.init(columns: ["id"], table: "players", referenced: ["id"])])
    #expect(
      Self.violations(tables) == [
        "audit: a foreign key into pieces, a player's table",
        "pieces: its primary key (id) does not include player_id",
        "slots: a foreign key into pieces does not carry player_id to player_id",
        "slots: a foreign key into staff, the studio's",
        "slots: a unique key (name) does not include player_id",
        "staff_sessions: a foreign key into players, outside the studio",
        "upload_parts: its primary key (upload_id) does not include player_id",
        "upload_parts: no player_id column (NOT NULL)",
      ])
  }

  @Test("a database from before v9 keeps its rows, and SQLite's ids go on from where they were")
  func upgradeFromV8() async throws {
    let folder = temporaryURL("stasis-v8")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent("server.sqlite").path
    // A v8 database, as a server of the version before left it: a piece, an upload with a
    // part, a bundle and a replay.
    let queue = try DatabaseQueue(path: path)
    try await queue.write { db in
      try db.execute(sql: "CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
      for (identifier, sql) in [
        ("v1", ServerSchema.sqlite), ("v2: conflict losers kept", ServerSchema.sqliteLostTo),
        ("v3: a revision's true parent", ServerSchema.sqliteParent),
        ("v4: pieces and resumable uploads", ServerSchema.sqlitePieces),
        ("v5: staff, sessions, the audit log, device tokens", ServerSchema.sqliteStudio),
        ("v6: settings", ServerSchema.sqliteSettings), ("v7: desync bundles", ServerSchema.sqliteBundles),
        ("v8: replays", ServerSchema.sqliteReplays),
      ] {
        try db.execute(sql: sql)
        try db.execute(sql: "INSERT INTO grdb_migrations VALUES (?)", arguments: [identifier])
      }
      try db.execute(
        sql: """
          INSERT INTO players (name, token_hash, created_at) VALUES ('ada', x'01', 1);
          INSERT INTO pieces (player_id, slot, base, depth, chain, size, data) VALUES (1, 'a', NULL, 0, 0, 1, x'aa');
          INSERT INTO pieces (player_id, slot, base, depth, chain, size, data) VALUES (1, 'a', 1, 1, 1, 1, x'bb');
          DELETE FROM pieces WHERE id = 2;
          INSERT INTO uploads (id, player_id, slot, created_at, length, headers) VALUES ('u1', 1, 'a', 1, 2, '');
          INSERT INTO upload_parts (upload_id, position, data) VALUES ('u1', 0, x'cc');
          INSERT INTO upload_parts (upload_id, position, data) VALUES ('gone', 0, x'dd');
          INSERT INTO desync_bundles (player_id, created_at, game, build, tick, summary, length, sha256, bytes)
          VALUES (1, 1, 'g', 'b', 1, 's', 1, x'01', x'ee');
          INSERT INTO replays (player_id, name, updated_at, game, build, start_tick, ticks, length, sha256, bytes)
          VALUES (1, 'r', 1, 'g', 'b', 0, 1, 1, x'01', x'ff');
          """)
    }
    try queue.close()
    let backend = try SQLiteBackend(path: path)
    try await backend.pool.write { db in
      let pieces = try Row.fetchAll(db, sql: "SELECT id, player_id FROM pieces").map { row -> [Int64] in
        [row[0], row[1]]
      }
      #expect(pieces == [[1, 1]])
      let parts = try Row.fetchAll(db, sql: "SELECT player_id, upload_id FROM upload_parts").map { row -> String in
        let (player, upload): (Int64, String) = (row[0], row[1])
        return "\(player) \(upload)"
      }
      #expect(parts == ["1 u1"], "a part whose upload is gone is not carried over")
      #expect(try Int64.fetchOne(db, sql: "SELECT id FROM desync_bundles") == 1)
      #expect(try Int64.fetchOne(db, sql: "SELECT id FROM replays") == 1)
      // AUTOINCREMENT had given 2 to a piece since deleted: the next is 3, never 2 again.
      #expect(try SQLiteBackend.nextID(db, "pieces") == 3)
      #expect(try SQLiteBackend.nextID(db, "desync_bundles") == 2)
      #expect(try SQLiteBackend.nextID(db, "replays") == 2)
    }
    #expect(Self.violations(try Self.sqliteSchema(path)) == [])
  }

  @Test("a PostgreSQL database from before v9 keeps its rows; a part an older server writes gets its player")
  func postgresUpgradeFromV8() async throws {
    try await withOwnPostgresDatabase("stasis_v8") { url in
      // What a server of the version before left: its tables, a piece, an upload with a part.
      try await postgresAdmin(
        ServerSchema.postgres + ServerSchema.postgresStudio + ServerSchema.postgresSettings
          + ServerSchema.postgresBundles + ServerSchema.postgresReplays + [
            "INSERT INTO players (name, token_hash, created_at) VALUES ('ada', '\\x01', 1)",
            "INSERT INTO pieces (player_id, slot, depth, chain, size, data) VALUES (1, 'a', 0, 0, 1, '\\xaa')",
            "INSERT INTO uploads (id, player_id, slot, created_at, length, headers) VALUES ('u1', 1, 'a', 1, 2, '')",
            "INSERT INTO upload_parts (upload_id, position, data) VALUES ('u1', 0, '\\xcc')",
            "INSERT INTO upload_parts (upload_id, position, data) VALUES ('gone', 0, '\\xdd')",
          ], on: url)
      // Two starts: the second finds every step's work done, and runs.
      try await Self.migrate(url, starts: 2)
      let parts = try await postgresAdmin(
        [
          // An older server's part, without the player: the trigger names it.
          "INSERT INTO upload_parts (upload_id, position, data) VALUES ('u1', 1, '\\xee')",
          "SELECT player_id::text || ' ' || upload_id || ' ' || position::text FROM upload_parts ORDER BY position",
        ], on: url)
      #expect(parts.map { $0[0] } == ["1 u1 0", "1 u1 1"], "the orphan part dropped, each part with its player")
      let pieces = try await postgresAdmin(["SELECT id::text || ' ' || player_id::text FROM pieces"], on: url)
      #expect(pieces.map { $0[0] } == ["1 1"])
      #expect(Self.violations(try await Self.postgresSchema(url)) == [])
    }
  }

  // MARK: The rules

  /// Every way `tables` breaks the rules, one line each, sorted.
  static func violations(_ tables: [String: TableShape]) -> [String] {
    let reference = directory.union(studio).union(bookkeeping)
    let playerTables = Set(tables.keys).subtracting(reference)
    var found: [String] = []
    for (name, table) in tables {
      if playerTables.contains(name) {
        if table.columns["player_id"] != true { found.append("\(name): no player_id column (NOT NULL)") }
        if !table.primaryKey.contains("player_id") {
          found.append(
            "\(name): its primary key (\(table.primaryKey.joined(separator: ", "))) does not include player_id")
        }
        for unique in table.uniques where !unique.contains("player_id") {
          found.append("\(name): a unique key (\(unique.joined(separator: ", "))) does not include player_id")
        }
      }
      for key in table.foreignKeys {
        switch (playerTables.contains(name), playerTables.contains(key.table)) {
        case (true, true):
          // Within one player: the player's id on both sides, in the same place.
          let carried = zip(key.columns, key.referenced).contains { $0 == "player_id" && $1 == "player_id" }
          if !carried { found.append("\(name): a foreign key into \(key.table) does not carry player_id to player_id") }
        case (false, true):
          found.append("\(name): a foreign key into \(key.table), a player's table")
        case (true, false):
          // Into a reference table: allowed for the directory (a player's id), not the studio.
          if studio.contains(key.table) { found.append("\(name): a foreign key into \(key.table), the studio's") }
        case (false, false):
          if studio.contains(name) && !studio.contains(key.table) {
            found.append("\(name): a foreign key into \(key.table), outside the studio")
          }
        }
      }
    }
    return found.sorted()
  }

  // MARK: Reading the schema

  static func schema(_ backend: Backend) async throws -> [String: TableShape] {
    switch backend {
    case .sqlite:
      let folder = temporaryURL("stasis-schema")
      defer { try? FileManager.default.removeItem(at: folder) }
      let path = folder.appendingPathComponent("server.sqlite").path
      _ = try SQLiteBackend(path: path)
      return try sqliteSchema(path)
    case .postgres:
      var tables: [String: TableShape] = [:]
      // A database of its own, made by the server's migrations alone.
      try await withOwnPostgresDatabase("stasis_schema") { url in
        try await migrate(url)
        tables = try await postgresSchema(url)
      }
      return tables
    }
  }

  /// The server's PostgreSQL migration on the database `url` names, as `starts` starts run it.
  static func migrate(_ url: String, starts: Int = 1) async throws {
    var logger = Logger(label: "schema")
    logger.logLevel = .critical
    let backend = try PostgresBackend(url: url, connections: 1, logger: logger)
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask { await backend.run() }
      defer { group.cancelAll() }
      for _ in 0..<starts { try await backend.migrate() }
    }
  }

  static func sqliteSchema(_ path: String) throws -> [String: TableShape] {
    let queue = try DatabaseQueue(path: path)
    defer { try? queue.close() }
    return try queue.read { db in
      var tables: [String: TableShape] = [:]
      let names = try String.fetchAll(
        db,
        sql:
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'grdb_%'")
      for name in names {
        var table = TableShape()
        var key: [(Int, String)] = []
        var aliasType = ""
        for column in try Row.fetchAll(
          db, sql: "SELECT name, \"notnull\", pk, type FROM pragma_table_info(?)", arguments: [name])
        {
          let (column, notNull, position, type): (String, Bool, Int, String) = (
            column[0], column[1], column[2], column[3]
          )
          table.columns[column] = notNull
          if position > 0 {
            key.append((position, column))
            aliasType = type
          }
        }
        table.primaryKey = key.sorted { $0.0 < $1.0 }.map(\.1)
        // A rowid alias (a key of one INTEGER column) is never null, whatever it declares; a
        // column of a longer key may be, in a rowid table, unless it says NOT NULL.
        if key.count == 1, aliasType.uppercased() == "INTEGER" { table.columns[key[0].1] = true }
        for index in try Row.fetchAll(
          db, sql: "SELECT name, \"unique\", origin FROM pragma_index_list(?)", arguments: [name])
        {
          let (indexName, unique, origin): (String, Bool, String) = (index[0], index[1], index[2])
          guard unique, origin != "pk" else { continue }
          table.uniques.append(
            try String.fetchAll(db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [indexName])
          )
        }
        var keys: [Int: ForeignKey] = [:]
        for reference in try Row.fetchAll(
          db, sql: "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?) ORDER BY id, seq",
          arguments: [name])
        {
          let id: Int = reference[0]
          keys[id, default: ForeignKey(columns: [], table: reference[1], referenced: [])].columns.append(reference[2])
          // A reference to a table's primary key may leave `to` out: SQLite gives null.
          let to: String? = reference[3]
          keys[id]?.referenced.append(to ?? "id")
        }
        table.foreignKeys = keys.keys.sorted().compactMap { keys[$0] }
        tables[name] = table
      }
      return tables
    }
  }

  static func postgresSchema(_ url: String) async throws -> [String: TableShape] {
    var tables: [String: TableShape] = [:]
    let names = try await postgresAdmin(
      ["SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema()"], on: url)
    for name in names.compactMap({ $0[0] }) { tables[name] = TableShape() }
    for row in try await postgresAdmin(
      [
        """
        SELECT table_name::text, column_name::text, (is_nullable = 'NO')::text FROM information_schema.columns
        WHERE table_schema = current_schema()
        """
      ], on: url)
    {
      guard let table = row[0], let column = row[1] else { continue }
      tables[table]?.columns[column] = row[2] == "true"
    }
    // Every unique index, the primary key's among them, with its columns in order.
    for row in try await postgresAdmin(
      [
        """
        SELECT c.relname::text, i.indisprimary::text, array_to_string(ARRAY(
          SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY AS k(n, o)
          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o), ',')
        FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace s ON s.oid = c.relnamespace
        WHERE s.nspname = current_schema() AND i.indisunique
        """
      ], on: url)
    {
      guard let table = row[0], let columns = row[2]?.split(separator: ",").map(String.init) else { continue }
      if row[1] == "true" { tables[table]?.primaryKey = columns } else { tables[table]?.uniques.append(columns) }
    }
    for row in try await postgresAdmin(
      [
        """
        SELECT c.conrelid::regclass::text, c.confrelid::regclass::text,
          array_to_string(ARRAY(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY AS k(n, o)
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.o), ','),
          array_to_string(ARRAY(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY AS k(n, o)
            JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.o), ',')
        FROM pg_constraint c JOIN pg_namespace s ON s.oid = c.connamespace
        WHERE s.nspname = current_schema() AND c.contype = 'f'
        """
      ], on: url)
    {
      guard let table = row[0], let target = row[1], let from = row[2], let to = row[3] else { continue }
      tables[table]?.foreignKeys.append(
        ForeignKey(
          columns: from.split(separator: ",").map(String.init), table: target,
          referenced: to.split(separator: ",").map(String.init)))
    }
    return tables
  }
}

/// A table as the rules see it: its columns (true: NOT NULL), its primary key, its other
/// unique keys, and its foreign keys, each with its columns in order.
struct TableShape: Sendable {
  var columns: [String: Bool] = [:]
  var primaryKey: [String] = []
  var uniques: [[String]] = []
  var foreignKeys: [ForeignKey] = []
}

/// A foreign key: `columns` of a table refer to `referenced` of `table`.
struct ForeignKey: Sendable {
  var columns: [String]
  var table: String
  var referenced: [String]
}
