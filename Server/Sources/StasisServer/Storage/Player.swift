/// A player: a name, the hash of their bearer token, and whether the token was revoked.
package struct Player: Sendable, Equatable {
  /// The database's id for the player.
  package var id: Int64
  /// The name given to `stasis-server players add`.
  package var name: String
  /// When the player was added, in milliseconds since the Unix epoch.
  package var createdAt: Int64
  /// True once `players revoke` ran: the token no longer opens anything.
  package var revoked: Bool

  /// Creates a player record.
  package init(id: Int64, name: String, createdAt: Int64, revoked: Bool) {
    self.id = id
    self.name = name
    self.createdAt = createdAt
    self.revoked = revoked
  }
}

/// Per-player limits, checked inside the transaction that would exceed them.
package struct PlayerLimits: Sendable, Equatable {
  /// Bytes of all the player's stored revisions together.
  package var totalBytes: Int64
  /// Slots the player may have.
  package var slots: Int
  /// The largest upload, in bytes.
  package var bodyBytes: Int
  /// The largest settings file a device may send (`PUT /v1/settings`), and the most the
  /// player's merged settings may take in storage (each key is kept as an entry of its own,
  /// about 100 bytes more than in the file), in bytes.
  package var settingsBytes: Int
  /// The largest desync bundle a device may send (`POST /v1/bundles`), in bytes.
  package var bundleBytes: Int
  /// The desync bundles kept per player: the oldest go when a new one is stored.
  package var bundlesKept: Int
  /// The largest replay a device may send (`PUT /v1/replays/{name}`), in bytes.
  package var replayBytes: Int
  /// The replays kept per player: the least recently sent go when a new one is stored.
  package var replaysKept: Int

  /// Creates limits; the defaults suit a game whose saves are up to a few MB.
  package init(
    totalBytes: Int64 = 256 << 20, slots: Int = 100, bodyBytes: Int = 16 << 20, settingsBytes: Int = 1 << 20,
    bundleBytes: Int = 4 << 20, bundlesKept: Int = 20, replayBytes: Int = 16 << 20, replaysKept: Int = 10
  ) {
    self.totalBytes = totalBytes
    self.slots = slots
    self.bodyBytes = bodyBytes
    self.settingsBytes = settingsBytes
    self.bundleBytes = bundleBytes
    self.bundlesKept = bundlesKept
    self.replayBytes = replayBytes
    self.replaysKept = replaysKept
  }
}
