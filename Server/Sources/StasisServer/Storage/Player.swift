/// A player: a name, the hash of their bearer token, and whether the token was revoked.
public struct Player: Sendable, Equatable {
  /// The database's id for the player.
  public var id: Int64
  /// The name given to `stasis-server players add`.
  public var name: String
  /// When the player was added, in milliseconds since the Unix epoch.
  public var createdAt: Int64
  /// True once `players revoke` ran: the token no longer opens anything.
  public var revoked: Bool

  /// Creates a player record.
  public init(id: Int64, name: String, createdAt: Int64, revoked: Bool) {
    self.id = id
    self.name = name
    self.createdAt = createdAt
    self.revoked = revoked
  }
}

/// A player name that `players add` refuses, or one that does not exist.
public struct PlayerError: Error, Sendable, Equatable, CustomStringConvertible {
  /// One line.
  public var description: String

  /// Creates an error.
  public init(_ description: String) { self.description = description }
}

/// Per-player limits, checked inside the transaction that would exceed them.
public struct PlayerLimits: Sendable, Equatable {
  /// Bytes of all the player's stored revisions together.
  public var totalBytes: Int64
  /// Slots the player may have.
  public var slots: Int
  /// The largest upload, in bytes.
  public var bodyBytes: Int
  /// The largest settings file a device may send (`PUT /v1/settings`), and the most the
  /// player's merged settings may take in storage (each key is kept as an entry of its own,
  /// about 100 bytes more than in the file), in bytes.
  public var settingsBytes: Int

  /// Creates limits; the defaults suit a game whose saves are up to a few MB.
  public init(totalBytes: Int64 = 256 << 20, slots: Int = 100, bodyBytes: Int = 16 << 20, settingsBytes: Int = 1 << 20)
  {
    self.totalBytes = totalBytes
    self.slots = slots
    self.bodyBytes = bodyBytes
    self.settingsBytes = settingsBytes
  }
}
