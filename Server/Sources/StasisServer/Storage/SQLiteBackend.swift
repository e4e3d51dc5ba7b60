import Foundation
import GRDB
import Stasis
import StasisDelta

/// The embedded backend: one SQLite file (GRDB), WAL with `synchronous=FULL`, so a `201` means
/// the revision is in the log on disk. Writes go through one writer, which is what serialises
/// two uploads on the same base: the second sees the first's head and gets `412`.
package final class SQLiteBackend: SaveBackend {
  /// The database (the simulation adds its transaction observer here, to die inside a commit).
  package let pool: DatabasePool
  /// Files smaller than this are stored whole (``PieceRules/smallestDelta``; the simulation's
  /// small saves chain with 0).
  package let smallestDelta: Int
  /// The storage rules (``StorageRules``): the defaults, except in the simulation's build.
  let rules: StorageRules

  /// Opens (creating with its folder) the database at `path` and brings its schema up to date.
  /// `smallestDelta`: files smaller than this are stored whole.
  package convenience init(path: String, smallestDelta: Int = PieceRules.smallestDelta) throws {
    try self.init(path: path, smallestDelta: smallestDelta, rules: StorageRules())
  }

  init(path: String, smallestDelta: Int, rules: StorageRules) throws {
    self.rules = rules
    self.smallestDelta = smallestDelta
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    var configuration = Configuration()
    configuration.prepareDatabase { db in
      try db.execute(sql: "PRAGMA synchronous = FULL")
    }
    configuration.busyMode = .timeout(10)
    pool = try DatabasePool(path: path, configuration: configuration)
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1") { db in
      try db.execute(sql: ServerSchema.sqlite)
    }
    migrator.registerMigration("v2: conflict losers kept") { db in
      try db.execute(sql: ServerSchema.sqliteLostTo)
    }
    migrator.registerMigration("v3: a revision's true parent") { db in
      try db.execute(sql: ServerSchema.sqliteParent)
    }
    migrator.registerMigration("v4: pieces and resumable uploads") { db in
      try db.execute(sql: ServerSchema.sqlitePieces)
    }
    migrator.registerMigration("v5: staff, sessions, the audit log, device tokens") { db in
      try db.execute(sql: ServerSchema.sqliteStudio)
    }
    migrator.registerMigration("v6: settings") { db in
      try db.execute(sql: ServerSchema.sqliteSettings)
    }
    migrator.registerMigration("v7: desync bundles") { db in
      try db.execute(sql: ServerSchema.sqliteBundles)
    }
    migrator.registerMigration("v8: replays") { db in
      try db.execute(sql: ServerSchema.sqliteReplays)
    }
    migrator.registerMigration("v9: every key of a player's data includes the player") { db in
      try db.execute(sql: ServerSchema.sqliteSharding)
    }
    try migrator.migrate(pool)
  }

  package func addPlayer(name: String, tokenHash: [UInt8], at time: Int64) async throws -> Player {
    try await pool.write { db in
      guard try Row.fetchOne(db, sql: "SELECT 1 FROM players WHERE name = ?", arguments: [name]) == nil else {
        throw StorageError(.nameTaken, "a player named '\(name)' exists")
      }
      try db.execute(
        sql: "INSERT INTO players (name, token_hash, created_at, revoked) VALUES (?, ?, ?, 0)",
        arguments: [name, Data(tokenHash), time])
      let id = db.lastInsertedRowID
      try db.execute(
        sql: "INSERT INTO tokens (player_id, token_hash, label, created_at) VALUES (?, ?, 'first token', ?)",
        arguments: [id, Data(tokenHash), time])
      return Player(id: id, name: name, createdAt: time, revoked: false)
    }
  }

  package func players() async throws -> [Player] {
    try await pool.read { db in
      try Row.fetchAll(db, sql: "SELECT id, name, created_at, revoked FROM players ORDER BY name").map {
        Player(id: $0["id"], name: $0["name"], createdAt: $0["created_at"], revoked: $0["revoked"])
      }
    }
  }

  package func revokePlayer(name: String) async throws -> Bool {
    try await pool.write { db in
      try db.execute(sql: "UPDATE players SET revoked = 1 WHERE name = ?", arguments: [name])
      return db.changesCount > 0
    }
  }

  package func player(tokenHash: [UInt8]) async throws -> Player? {
    try await pool.read { db in
      try Row.fetchOne(db, sql: ServerSchema.playerByToken, arguments: [Data(tokenHash)]).map {
        Player(id: $0["id"], name: $0["name"], createdAt: $0["created_at"], revoked: $0["revoked"])
      }
    }
  }

  package func put(
    player: Player, precondition: WritePrecondition, loser: Int64?, metadata: RevisionMetadata, file: [UInt8],
    delta: StoredDelta?, keep: Int, limits: PlayerLimits
  ) async throws -> PutOutcome {
    try await pool.write { db in
      try self.put(
        db, player: player, precondition: precondition, loser: loser, metadata: metadata, file: file, delta: delta,
        keep: keep, limits: limits)
    }
  }

  /// An upload in the caller's write transaction: what it finds, read with a few statements
  /// (the transaction is SQLite's one writer, so nothing moves under it), ``UploadRule``'s
  /// decision, and the decision written.
  func put(
    _ db: Database, player: Player, precondition: WritePrecondition, loser: Int64?, metadata: RevisionMetadata,
    file: [UInt8], delta: StoredDelta?, keep: Int, limits: PlayerLimits
  ) throws -> PutOutcome {
    let slot = metadata.slot
    let rule = uploadRule(precondition, loser: loser, metadata: metadata, delta: delta, keep: keep, limits: limits)
    let slotRow = try Row.fetchOne(
      db, sql: "SELECT next_revision, head_revision FROM slots WHERE player_id = ? AND name = ?",
      arguments: [player.id, slot])
    let head: Int64? = slotRow?["head_revision"]
    let base = try delta.flatMap { delta in
      try Row.fetchOne(
        db, sql: "SELECT depth, chain FROM pieces WHERE id = ? AND player_id = ? AND slot = ?",
        arguments: [delta.basePiece, player.id, slot])
    }
    let found = UploadRule.Found(
      head: head, next: slotRow?["next_revision"] ?? 1,
      loserExists: try loser.map { loser in
        try Row.fetchOne(
          db, sql: "SELECT 1 FROM revisions WHERE player_id = ? AND slot = ? AND revision = ?",
          arguments: [player.id, slot, loser]) != nil
      } ?? false,
      slotsInUse: head == nil
        ? try Int64.fetchOne(
          db, sql: "SELECT COUNT(*) FROM slots WHERE player_id = ? AND head_revision IS NOT NULL",
          arguments: [player.id]) ?? 0 : 0,
      bytesInUse: try Int64.fetchOne(
        db, sql: "SELECT COALESCE(SUM(size), 0) FROM revisions WHERE player_id = ?", arguments: [player.id]) ?? 0,
      deltaBaseChain: base.map { UploadRule.Chain(depth: $0["depth"], chain: $0["chain"]) },
      revisions: try Row.fetchAll(
        db, sql: "SELECT revision, parent, lost_to FROM revisions WHERE player_id = ? AND slot = ?",
        arguments: [player.id, slot]
      ).map { UploadRule.Listed(revision: $0["revision"], parent: $0["parent"], lost: $0["lost_to"] as Int64? != nil) })
    let decision = rule.decide(found)
    if let refusal = rule.refusal(decision) { return refusal }
    let store: UploadRule.Store
    switch decision {
    case .stale(let head):
      return .stale(head: try head.flatMap { try Self.metadata(db, player: player, slot: slot, revision: $0) })
    case .store(let decided): store = decided
    default: throw StorageError(.damaged, "unreachable: every refusal is answered above")
    }
    var stored = metadata
    stored.revision = store.revision
    let piece = try Self.nextID(db, "pieces")
    if let on = store.deltaOn, let delta {
      try db.execute(
        sql: "INSERT INTO pieces (id, player_id, slot, base, depth, chain, size, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        arguments: [
          piece, player.id, slot, delta.basePiece, on.depth + 1, on.chain + Int64(delta.bytes.count), file.count,
          Data(delta.bytes),
        ])
    } else {
      try db.execute(
        sql:
          "INSERT INTO pieces (id, player_id, slot, base, depth, chain, size, data) VALUES (?, ?, ?, NULL, 0, 0, ?, ?)",
        arguments: [piece, player.id, slot, file.count, Data(file)])
    }
    stored.piece = piece
    try db.execute(
      sql: """
        INSERT INTO slots (player_id, name, next_revision, head_revision) VALUES (?, ?, ?, ?)
        ON CONFLICT (player_id, name) DO UPDATE SET next_revision = excluded.next_revision,
          head_revision = excluded.head_revision
        """,
      arguments: [player.id, slot, store.revision + 1, store.revision])
    try db.execute(
      sql: """
        INSERT INTO revisions (player_id, slot, revision, base_revision, parent, size, sha256, uploaded_at, device,
          game, build, schema_version, created_at, play_time, progress, summary, file, piece)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, x'', ?)
        """,
      arguments: [
        player.id, slot, store.revision, store.base, store.parent, stored.bytes, stored.sha256,
        stored.uploadedAt, stored.device, stored.game, stored.build, stored.schema, stored.createdAt, stored.playTime,
        stored.progress, stored.summaryJSON, stored.piece,
      ])
    if let loser {
      try db.execute(
        sql: "UPDATE revisions SET lost_to = ? WHERE player_id = ? AND slot = ? AND revision = ?",
        arguments: [store.revision, player.id, slot, loser])
    }
    for relink in store.relinked {
      try db.execute(
        sql: "UPDATE revisions SET parent = ? WHERE player_id = ? AND slot = ? AND revision = ?",
        arguments: [relink.parent, player.id, slot, relink.revision])
    }
    for gone in store.pruned {
      try db.execute(
        sql: "DELETE FROM revisions WHERE player_id = ? AND slot = ? AND revision = ?",
        arguments: [player.id, slot, gone])
    }
    try self.collect(db, player: player, slot: slot)
    return .created(stored)
  }

  package func head(player: Player, slot: String) async throws -> RevisionMetadata? {
    try await pool.read { db in
      guard
        let head = try Int64.fetchOne(
          db, sql: "SELECT head_revision FROM slots WHERE player_id = ? AND name = ?", arguments: [player.id, slot])
      else { return nil }
      return try Self.metadata(db, player: player, slot: slot, revision: head)
    }
  }

  package func file(player: Player, slot: String, revision: Int64?) async throws -> (RevisionMetadata, [UInt8])? {
    try await pool.read { db in
      let wanted: Int64
      if let revision {
        wanted = revision
      } else {
        guard
          let head = try Int64.fetchOne(
            db, sql: "SELECT head_revision FROM slots WHERE player_id = ? AND name = ?", arguments: [player.id, slot])
        else { return nil }
        wanted = head
      }
      guard
        let row = try Row.fetchOne(
          db, sql: "SELECT \(Self.columns), file FROM revisions WHERE player_id = ? AND slot = ? AND revision = ?",
          arguments: [player.id, slot, wanted])
      else { return nil }
      let metadata = Self.metadata(row)
      guard let piece = metadata.piece else {
        let data: Data = row["file"]
        return (metadata, [UInt8](data))
      }
      return (metadata, try Self.rebuild(db, piece: piece))
    }
  }

  package func revisions(player: Player, slot: String) async throws -> [RevisionMetadata]? {
    try await pool.read { db in
      guard
        try Int64.fetchOne(
          db, sql: "SELECT head_revision FROM slots WHERE player_id = ? AND name = ?", arguments: [player.id, slot])
          != nil
      else { return nil }
      return try Row.fetchAll(
        db,
        sql: "SELECT \(Self.columns) FROM revisions WHERE player_id = ? AND slot = ? ORDER BY revision DESC",
        arguments: [player.id, slot]
      ).map(Self.metadata)
    }
  }

  package func slots(player: Player) async throws -> [RevisionMetadata] {
    try await pool.read { db in
      try Row.fetchAll(
        db,
        sql: """
          SELECT \(Self.columns.split(separator: ",").map { "r." + $0.trimmingCharacters(in: .whitespaces) }
            .joined(separator: ", "))
          FROM slots s JOIN revisions r ON r.player_id = s.player_id AND r.slot = s.name AND r.revision = s.head_revision
          WHERE s.player_id = ? ORDER BY s.name
          """,
        arguments: [player.id]
      ).map(Self.metadata)
    }
  }

  package func discard(player: Player, slot: String, revision: Int64) async throws -> DiscardOutcome {
    try await pool.write { db in try self.discard(db, player: player, slot: slot, revision: revision) }
  }

  /// A discard in the caller's write transaction.
  func discard(_ db: Database, player: Player, slot: String, revision: Int64) throws -> DiscardOutcome {
    guard
      let head = try Int64.fetchOne(
        db, sql: "SELECT head_revision FROM slots WHERE player_id = ? AND name = ?", arguments: [player.id, slot])
    else { return .notFound }
    if head == revision { return .head }
    guard try Self.remove(db, player: player, slot: slot, revision: revision) else { return .notFound }
    try self.collect(db, player: player, slot: slot)
    return .discarded
  }

  package func delete(player: Player, slot: String, head expected: Int64) async throws -> DeleteOutcome {
    try await pool.write { db in
      guard
        let head = try Int64.fetchOne(
          db, sql: "SELECT head_revision FROM slots WHERE player_id = ? AND name = ?", arguments: [player.id, slot])
      else { return .notFound }
      guard head == expected else {
        guard let metadata = try Self.metadata(db, player: player, slot: slot, revision: head) else { return .notFound }
        return .stale(head: metadata)
      }
      try db.execute(
        sql: "UPDATE slots SET head_revision = NULL WHERE player_id = ? AND name = ?", arguments: [player.id, slot])
      try db.execute(sql: "DELETE FROM revisions WHERE player_id = ? AND slot = ?", arguments: [player.id, slot])
      try self.collect(db, player: player, slot: slot)
      return .deleted
    }
  }

  package func ping() async throws {
    _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
  }

  /// Deletes one revision; the revisions it was the parent of take its parent, so the chain
  /// among the revisions that remain stays exact. Pruning removes the newest first, so each
  /// parent it hands down is already final. False when the slot has no such revision.
  @discardableResult
  private static func remove(_ db: Database, player: Player, slot: String, revision: Int64) throws -> Bool {
    guard
      let row = try Row.fetchOne(
        db, sql: "SELECT parent FROM revisions WHERE player_id = ? AND slot = ? AND revision = ?",
        arguments: [player.id, slot, revision])
    else { return false }
    let parent: Int64? = row["parent"]
    try db.execute(
      sql: "UPDATE revisions SET parent = ? WHERE player_id = ? AND slot = ? AND parent = ?",
      arguments: [parent, player.id, slot, revision])
    try db.execute(
      sql: "DELETE FROM revisions WHERE player_id = ? AND slot = ? AND revision = ?",
      arguments: [player.id, slot, revision])
    return true
  }

  static let columns =
    "slot, revision, base_revision, size, sha256, uploaded_at, device, game, build, schema_version, created_at, play_time, progress, summary, lost_to, parent, piece"

  static func metadata(_ db: Database, player: Player, slot: String, revision: Int64) throws
    -> RevisionMetadata?
  {
    try Row.fetchOne(
      db, sql: "SELECT \(columns) FROM revisions WHERE player_id = ? AND slot = ? AND revision = ?",
      arguments: [player.id, slot, revision]
    ).map(metadata)
  }

  private static func metadata(_ row: Row) -> RevisionMetadata {
    var metadata = RevisionMetadata(
      slot: row["slot"], revision: row["revision"], baseRevision: row["base_revision"], bytes: row["size"],
      sha256: row["sha256"], uploadedAt: row["uploaded_at"], device: row["device"], game: row["game"],
      build: row["build"], schema: row["schema_version"], createdAt: row["created_at"], playTime: row["play_time"],
      progress: row["progress"], summaryJSON: row["summary"], lostTo: row["lost_to"])
    metadata.parent = row["parent"]
    metadata.piece = row["piece"]
    return metadata
  }

  // MARK: Pieces

  /// The next id of `table` (one of ``ServerSchema/sequencedTables``): its key is
  /// `(player_id, id)`, so the id is no rowid for `AUTOINCREMENT` to give. Never reused, as
  /// `AUTOINCREMENT`'s were not; a transaction that rolls back gives its id back.
  static func nextID(_ db: Database, _ table: String) throws -> Int64 {
    guard
      let id = try Int64.fetchOne(
        db, sql: "UPDATE id_sequences SET last = last + 1 WHERE name = ? RETURNING last", arguments: [table])
    else { throw StorageError(.damaged, "no id sequence for \(table)") }
    return id
  }

  /// The file a piece rebuilds, reading its chain in this transaction's snapshot.
  static func rebuild(_ db: Database, piece: Int64) throws -> [UInt8] {
    var chain: [(data: [UInt8], isDelta: Bool)] = []
    var next: Int64? = piece
    while let id = next {
      guard chain.count <= PieceRules.longestChain,
        let row = try Row.fetchOne(db, sql: "SELECT base, data FROM pieces WHERE id = ?", arguments: [id])
      else { throw StorageError(.damaged, "piece \(id) of a stored revision is missing") }
      next = row["base"]
      let data: Data = row["data"]
      chain.append(([UInt8](data), next != nil))
    }
    return try PieceRules.rebuild(chain, limit: FormatLimits.maxFileSize)
  }

  /// Deletes the slot's pieces that nothing needs: no revision of the slot, no upload in
  /// progress, and no piece still needed that is a delta on them.
  private func collect(_ db: Database, player: Player, slot: String) throws {
    try db.execute(
      sql: ServerSchema.collectPieces("?1", "?2", followsChains: followsChains), arguments: [player.id, slot])
  }
}

/// The tables, the same in both backends but for their types.
enum ServerSchema {
  static let sqlite = """
    CREATE TABLE players (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      name TEXT NOT NULL UNIQUE,
      token_hash BLOB NOT NULL UNIQUE,
      created_at INTEGER NOT NULL,
      revoked INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE slots (
      player_id INTEGER NOT NULL REFERENCES players(id),
      name TEXT NOT NULL,
      next_revision INTEGER NOT NULL,
      head_revision INTEGER,
      PRIMARY KEY (player_id, name)
    );
    CREATE TABLE revisions (
      player_id INTEGER NOT NULL,
      slot TEXT NOT NULL,
      revision INTEGER NOT NULL,
      base_revision INTEGER,
      size INTEGER NOT NULL,
      sha256 TEXT NOT NULL,
      uploaded_at INTEGER NOT NULL,
      device TEXT NOT NULL,
      game TEXT NOT NULL,
      build TEXT NOT NULL,
      schema_version INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      play_time REAL NOT NULL,
      progress REAL,
      summary TEXT NOT NULL,
      file BLOB NOT NULL,
      PRIMARY KEY (player_id, slot, revision)
    );
    """

  /// v2: the revision a conflict's loser lost to (null: not a loser, pruned as usual).
  static let sqliteLostTo = "ALTER TABLE revisions ADD COLUMN lost_to INTEGER"

  /// v3: the revision whose state a revision continues (``RevisionMetadata/parent``); every
  /// revision stored before it continued its base.
  static let sqliteParent = """
    ALTER TABLE revisions ADD COLUMN parent INTEGER;
    UPDATE revisions SET parent = base_revision;
    """

  /// v4: revisions stored as pieces (``PieceRules``), and resumable uploads with their parts.
  static let sqlitePieces = """
    CREATE TABLE pieces (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      player_id INTEGER NOT NULL,
      slot TEXT NOT NULL,
      base INTEGER,
      depth INTEGER NOT NULL,
      chain INTEGER NOT NULL,
      size INTEGER NOT NULL,
      data BLOB NOT NULL
    );
    CREATE INDEX pieces_by_slot ON pieces (player_id, slot);
    ALTER TABLE revisions ADD COLUMN piece INTEGER;
    CREATE TABLE uploads (
      id TEXT PRIMARY KEY,
      player_id INTEGER NOT NULL,
      slot TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      length INTEGER NOT NULL,
      received INTEGER NOT NULL DEFAULT 0,
      headers TEXT NOT NULL,
      delta_piece INTEGER
    );
    CREATE INDEX uploads_by_slot ON uploads (player_id, slot);
    CREATE TABLE upload_parts (
      upload_id TEXT NOT NULL,
      position INTEGER NOT NULL,
      data BLOB NOT NULL,
      PRIMARY KEY (upload_id, position)
    );
    """
}
