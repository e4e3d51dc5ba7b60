import Crypto
import Foundation
@_spi(Plumbing) import Stasis

/// v7: desync bundles (issue 45), the files `StasisReplay` makes at a replay's first divergence,
/// uploaded by a player's device (`POST /v1/bundles`) for the studio to read in the console. A
/// row per bundle: what the console lists (read from the bundle's report when it arrived) and
/// the bundle's bytes. The same bundle sent twice (a retry whose answer was lost) is one row:
/// `(player_id, sha256)` is unique.
extension ServerSchema {
  static let sqliteBundles = """
    CREATE TABLE desync_bundles (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      player_id INTEGER NOT NULL REFERENCES players(id),
      created_at INTEGER NOT NULL,
      game TEXT NOT NULL,
      build TEXT NOT NULL,
      tick INTEGER NOT NULL,
      summary TEXT NOT NULL,
      length INTEGER NOT NULL,
      sha256 BLOB NOT NULL,
      bytes BLOB NOT NULL,
      UNIQUE (player_id, sha256)
    );
    """

  /// As ``sqliteBundles``.
  static let postgresBundles: [String] = [
    """
    CREATE TABLE IF NOT EXISTS desync_bundles (
      id BIGSERIAL PRIMARY KEY,
      player_id BIGINT NOT NULL REFERENCES players(id),
      created_at BIGINT NOT NULL,
      game TEXT NOT NULL,
      build TEXT NOT NULL,
      tick BIGINT NOT NULL,
      summary TEXT NOT NULL,
      length BIGINT NOT NULL,
      sha256 BYTEA NOT NULL,
      bytes BYTEA NOT NULL,
      UNIQUE (player_id, sha256)
    )
    """
  ]

  /// The columns of a bundle's row but its bytes, in ``StoredBundle``'s order.
  static let bundleColumns = "id, created_at, game, build, tick, summary, length, sha256"

  /// Stores a bundle unless the player has one with the same SHA-256 (`p(1)` the player,
  /// `p(2)` created_at, `p(3)` game, `p(4)` build, `p(5)` tick, `p(6)` summary, `p(7)` length,
  /// `p(8)` sha256, `p(9)` bytes, and with `withID` `p(10)` the row's id, which PostgreSQL's
  /// sequence gives otherwise); returns the new row's id, or no row.
  static func bundleInsert(withID: Bool = false, _ p: (Int) -> String) -> String {
    """
    INSERT INTO desync_bundles (player_id, created_at, game, build, tick, summary, length, sha256, bytes\(withID ? ", id" : ""))
    VALUES (\((1...(withID ? 10 : 9)).map(p).joined(separator: ", ")))
    ON CONFLICT (player_id, sha256) DO NOTHING RETURNING id
    """
  }

  /// Keeps the player's newest `p(2)` bundles (`p(1)` the player).
  static func bundlePrune(_ p: (Int) -> String) -> String {
    """
    DELETE FROM desync_bundles WHERE player_id = \(p(1)) AND id NOT IN (
      SELECT id FROM desync_bundles WHERE player_id = \(p(1)) ORDER BY id DESC LIMIT \(p(2)))
    """
  }
}

/// A bundle to store: what its report says, and its bytes.
package struct BundleDraft: Sendable {
  /// When it arrived, in milliseconds since the Unix epoch.
  package var createdAt: Int64
  /// The game and build that recorded the replay.
  package var game: String
  package var build: String
  /// The first divergent tick.
  package var tick: Int64
  /// The report's one line (`first divergence at tick N`).
  package var summary: String
  /// The bundle's bytes, as the device sent them.
  package var bytes: [UInt8]

  /// A draft.
  package init(createdAt: Int64, game: String, build: String, tick: Int64, summary: String, bytes: [UInt8]) {
    self.createdAt = createdAt
    self.game = game
    self.build = build
    self.tick = tick
    self.summary = summary
    self.bytes = bytes
  }

  /// The SHA-256 of ``bytes``: what makes a retried upload the same bundle.
  var sha256: [UInt8] { Array(SHA256.hash(data: bytes)) }
}

/// A stored bundle, without its bytes.
package struct StoredBundle: Sendable, Equatable {
  /// Its number: bundles are numbered in the order they arrived, over every player.
  package var id: Int64
  /// When it arrived, in milliseconds since the Unix epoch.
  package var createdAt: Int64
  /// The game and build that recorded the replay.
  package var game: String
  package var build: String
  /// The first divergent tick.
  package var tick: Int64
  /// The report's one line.
  package var summary: String
  /// The bundle's length in bytes.
  package var length: Int64
  /// The SHA-256 of its bytes, in hex.
  package var sha256: String

  /// A row's values.
  package init(
    id: Int64, createdAt: Int64, game: String, build: String, tick: Int64, summary: String, length: Int64,
    sha256: [UInt8]
  ) {
    self.id = id
    self.createdAt = createdAt
    self.game = game
    self.build = build
    self.tick = tick
    self.summary = summary
    self.length = length
    self.sha256 = hexEncoded(sha256)
  }
}
