import Stasis

/// v6: a player's settings (15.6), a row per key: the stamp of its last change in three columns
/// and the entry itself. A device's `PUT /v1/settings` is merged by a conditional upsert per key
/// (``ServerSchema/settingsUpsert(conditional:_:)``), so two devices merging at once never lose a key.
extension ServerSchema {
  static let sqliteSettings = """
    CREATE TABLE settings (
      player_id INTEGER NOT NULL REFERENCES players(id),
      name TEXT NOT NULL,
      milliseconds INTEGER NOT NULL,
      counter INTEGER NOT NULL,
      device TEXT NOT NULL,
      value BLOB NOT NULL,
      PRIMARY KEY (player_id, name)
    );
    """

  /// As ``sqliteSettings``; `device` compares byte by byte (`COLLATE "C"`, as SQLite's `BINARY`
  /// does and as Swift orders the scalars of a string), whatever the database's locale.
  static let postgresSettings: [String] = [
    """
    CREATE TABLE IF NOT EXISTS settings (
      player_id BIGINT NOT NULL REFERENCES players(id),
      name TEXT NOT NULL,
      milliseconds BIGINT NOT NULL,
      counter BIGINT NOT NULL,
      device TEXT COLLATE "C" NOT NULL,
      value BYTEA NOT NULL,
      PRIMARY KEY (player_id, name)
    )
    """
  ]

  /// Takes one key when the player has none by its name, or when its stamp is later than the
  /// stored one (``SettingsStamp``'s order: milliseconds, counter, device): the last writer wins,
  /// in one statement, whatever another server writes meanwhile. Parameters: `p(1)` the player,
  /// `p(2)` the key, `p(3)` milliseconds, `p(4)` counter, `p(5)` device, `p(6)` the entry's bytes.
  /// (`conditional: false` is a seam only the simulation's build sets: every key taken, whatever
  /// its stamp.)
  static func settingsUpsert(conditional: Bool = true, _ p: (Int) -> String) -> String {
    let condition =
      conditional
      ? "(s.milliseconds, s.counter, s.device) < (excluded.milliseconds, excluded.counter, excluded.device)" : "TRUE"
    return """
      INSERT INTO settings AS s (player_id, name, milliseconds, counter, device, value)
      VALUES (\(p(1)), \(p(2)), \(p(3)), \(p(4)), \(p(5)), \(p(6)))
      ON CONFLICT (player_id, name) DO UPDATE SET
        milliseconds = excluded.milliseconds, counter = excluded.counter, device = excluded.device, value = excluded.value
      WHERE \(condition)
      """
  }

  /// The player's keys with their stamps and entries (`p` the player), in key order.
  static func settingsRows(_ p: String) -> String {
    "SELECT name, milliseconds, counter, device, value FROM settings WHERE player_id = \(p) ORDER BY name"
  }

  /// The bytes the player's settings take in storage, and how many keys (`p` the player).
  static func settingsUsage(_ p: String) -> String {
    "SELECT COALESCE(SUM(LENGTH(value)), 0), COUNT(*) FROM settings WHERE player_id = \(p)"
  }
}

/// A key of a player's settings as a row keeps it.
struct StoredSetting {
  var name: String
  var milliseconds: Int64
  var counter: Int64
  var device: String
  /// The entry as a one-entry settings file: the Stasis format, its checksums covering it, read
  /// back with the same reader as a device's file.
  var value: [UInt8]

  init(_ entry: SettingsFile.Entry) {
    name = entry.key
    milliseconds = entry.stamp.milliseconds
    counter = Int64(entry.stamp.counter)
    device = entry.stamp.device
    value = SettingsFile(entries: [entry]).encoded()
  }

  init(name: String, milliseconds: Int64, counter: Int64, device: String, value: [UInt8]) {
    self.name = name
    self.milliseconds = milliseconds
    self.counter = counter
    self.device = device
    self.value = value
  }

  /// The entry back: its value from the stored file, its stamp from the row's columns (which
  /// the merges compare).
  func entry() throws -> SettingsFile.Entry {
    let file = try SettingsFile(bytes: value, path: "settings row '\(name)'")
    guard let stored = file.entries.first, file.entries.count == 1, stored.key == name,
      let counter = UInt32(exactly: counter)
    else { throw StorageError(.damaged, "the stored setting '\(name)' is not one entry of that key") }
    return SettingsFile.Entry(
      key: name, value: stored.value, stamp: SettingsStamp(milliseconds: milliseconds, counter: counter, device: device)
    )
  }
}
