import Crypto
import Foundation
@_spi(Plumbing) import Stasis

/// v8: replays (issue 45), the files `StasisReplay` records a run into, sent by a player's
/// device (`PUT /v1/replays/{name}`) for the studio to download. A row per replay name: a device
/// sends a replay again as it grows, and the last one sent is kept (as the device's own file is
/// rewritten). What the console lists (read from the replay's manifest when it arrived) beside
/// the bytes.
extension ServerSchema {
  static let sqliteReplays = """
    CREATE TABLE replays (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
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
      UNIQUE (player_id, name)
    );
    """

  /// As ``sqliteReplays``.
  static let postgresReplays: [String] = [
    """
    CREATE TABLE IF NOT EXISTS replays (
      id BIGSERIAL PRIMARY KEY,
      player_id BIGINT NOT NULL REFERENCES players(id),
      name TEXT NOT NULL,
      updated_at BIGINT NOT NULL,
      game TEXT NOT NULL,
      build TEXT NOT NULL,
      start_tick BIGINT NOT NULL,
      ticks BIGINT NOT NULL,
      length BIGINT NOT NULL,
      sha256 BYTEA NOT NULL,
      bytes BYTEA NOT NULL,
      UNIQUE (player_id, name)
    )
    """
  ]

  /// The columns of a replay's row but its bytes, in ``StoredReplay``'s order.
  static let replayColumns = "id, name, updated_at, game, build, start_tick, ticks, length, sha256"

  /// Stores a replay, or replaces the player's replay of that name (`p(1)` the player, `p(2)`
  /// name, `p(3)` updated_at, `p(4)` game, `p(5)` build, `p(6)` start_tick, `p(7)` ticks,
  /// `p(8)` length, `p(9)` sha256, `p(10)` bytes, and with `withID` `p(11)` a new row's id,
  /// which PostgreSQL's sequence gives otherwise).
  static func replayUpsert(withID: Bool = false, _ p: (Int) -> String) -> String {
    """
    INSERT INTO replays (player_id, name, updated_at, game, build, start_tick, ticks, length, sha256, bytes\(withID ? ", id" : ""))
    VALUES (\((1...(withID ? 11 : 10)).map(p).joined(separator: ", ")))
    ON CONFLICT (player_id, name) DO UPDATE SET
      updated_at = excluded.updated_at, game = excluded.game, build = excluded.build,
      start_tick = excluded.start_tick, ticks = excluded.ticks, length = excluded.length,
      sha256 = excluded.sha256, bytes = excluded.bytes
    """
  }

  /// Keeps the player's `p(2)` most recently sent replays (`p(1)` the player), and always the
  /// one just stored (`p(3)` its name): a server whose clock is behind another's never prunes
  /// the replay it is answering for.
  static func replayPrune(_ p: (Int) -> String) -> String {
    """
    DELETE FROM replays WHERE player_id = \(p(1)) AND name <> \(p(3)) AND id NOT IN (
      SELECT id FROM replays WHERE player_id = \(p(1)) ORDER BY updated_at DESC, id DESC LIMIT \(p(2)))
    """
  }
}

/// A replay to store: its name, what its manifest says, and its bytes.
package struct ReplayDraft: Sendable {
  /// The replay's name (its file's, without `.stasis`).
  package var name: String
  /// When it arrived, in milliseconds since the Unix epoch.
  package var updatedAt: Int64
  /// The game and build that recorded it.
  package var game: String
  package var build: String
  /// Its first tick and how many it holds.
  package var startTick: Int64
  package var ticks: Int64
  /// The replay's bytes, as the device sent them.
  package var bytes: [UInt8]

  /// A draft.
  package init(
    name: String, updatedAt: Int64, game: String, build: String, startTick: Int64, ticks: Int64, bytes: [UInt8]
  ) {
    self.name = name
    self.updatedAt = updatedAt
    self.game = game
    self.build = build
    self.startTick = startTick
    self.ticks = ticks
    self.bytes = bytes
  }

  var sha256: [UInt8] { Array(SHA256.hash(data: bytes)) }
}

/// A stored replay, without its bytes.
package struct StoredReplay: Sendable, Equatable {
  /// Its number (the console's download names it).
  package var id: Int64
  /// Its name.
  package var name: String
  /// When it was last sent, in milliseconds since the Unix epoch.
  package var updatedAt: Int64
  /// The game and build that recorded it.
  package var game: String
  package var build: String
  /// Its first tick and how many it holds.
  package var startTick: Int64
  package var ticks: Int64
  /// Its length in bytes.
  package var length: Int64
  /// The SHA-256 of its bytes, in hex.
  package var sha256: String

  /// A row's values.
  package init(
    id: Int64, name: String, updatedAt: Int64, game: String, build: String, startTick: Int64, ticks: Int64,
    length: Int64, sha256: [UInt8]
  ) {
    self.id = id
    self.name = name
    self.updatedAt = updatedAt
    self.game = game
    self.build = build
    self.startTick = startTick
    self.ticks = ticks
    self.length = length
    self.sha256 = hexEncoded(sha256)
  }
}
