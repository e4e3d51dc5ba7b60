/// A moment on a hybrid logical clock: the wall clock's milliseconds, a counter for changes in
/// the same millisecond (or after the wall clock moved back), and the device that made the
/// change. Stamps order every settings change across processes and devices, so the last writer
/// wins per key and two devices always agree which one that is.
public struct SettingsStamp: Sendable, Equatable, Comparable, Codable, CustomStringConvertible {
  /// Milliseconds since the Unix epoch: the writer's wall clock, or a later stamp it had seen.
  public var milliseconds: Int64
  /// Orders changes that share `milliseconds`.
  public var counter: UInt32
  /// The device (or tool) that made the change; the last tie-breaker.
  public var device: String

  /// Creates a stamp.
  public init(milliseconds: Int64, counter: UInt32 = 0, device: String) {
    self.milliseconds = milliseconds
    self.counter = counter
    self.device = device
  }

  /// The stamp of a default value: every real change is later.
  public static let origin = SettingsStamp(milliseconds: 0, counter: 0, device: "")

  /// The stamp after `self` for a change made now: the wall clock when it is ahead, else one
  /// count past `self` (so a clock moved back never makes a change older than one before it).
  public func next(now milliseconds: Int64, device: String) -> SettingsStamp {
    if milliseconds > self.milliseconds { return SettingsStamp(milliseconds: milliseconds, device: device) }
    return SettingsStamp(milliseconds: self.milliseconds, counter: counter &+ 1, device: device)
  }

  public static func < (lhs: SettingsStamp, rhs: SettingsStamp) -> Bool {
    (lhs.milliseconds, lhs.counter, lhs.device) < (rhs.milliseconds, rhs.counter, rhs.device)
  }

  /// `milliseconds.counter@device`.
  public var description: String { "\(milliseconds).\(counter)@\(device)" }
}

/// A game's settings as the file holds them, untyped: each key's value as a self-described
/// tree and the stamp of its last change. What `stasis settings` reads and edits without the
/// game, and what a cloud carries between devices.
///
/// On disk it is `SAVES/.settings`, a Stasis save file (every byte checksummed; `stasis dump`
/// opens it) whose `settings` section lists the entries in key order.
public struct SettingsFile: Sendable, Equatable {
  /// One key: its value and the stamp of its last change.
  public struct Entry: Sendable, Equatable {
    /// The key: a top-level field of the game's settings type.
    public var key: String
    /// Its value.
    public var value: SaveValue
    /// When, and by which device, it was last changed.
    public var stamp: SettingsStamp

    /// Creates an entry.
    public init(key: String, value: SaveValue, stamp: SettingsStamp) {
      self.key = key
      self.value = value
      self.stamp = stamp
    }
  }

  /// The name of the file in the save folder (a dot-file: no slot listing sees it).
  public static let fileName = ".settings"
  /// ``fileName`` without its dot: the name `SaveStore`'s folder files take.
  static let folderFileName = "settings"
  /// The section that holds the entries.
  static let sectionName = "settings"
  /// The identity the file's header carries.
  static let identity = GameIdentity(name: "stasis-settings", build: "", schemaVersion: 1)

  /// The entries, sorted by key.
  public private(set) var entries: [Entry]

  /// Creates a file from entries (sorted by key; a repeated key keeps its latest stamp).
  public init(entries: [Entry] = []) {
    self.entries = []
    for entry in entries { _ = merge(entry) }
  }

  /// The entry of `key`, if any.
  public subscript(key: String) -> Entry? {
    entries.first { $0.key == key }
  }

  /// The latest stamp of any entry (``SettingsStamp/origin`` when empty).
  public var latestStamp: SettingsStamp {
    entries.map(\.stamp).max() ?? .origin
  }

  /// Sets `key` to `value` as a change made now by `device`: its stamp is later than every
  /// stamp in the file. Returns false (and changes nothing) when the value is already `value`.
  @discardableResult
  public mutating func set(_ key: String, to value: SaveValue, device: String, now milliseconds: Int64) -> Bool {
    guard self[key]?.value != value else { return false }
    let stamp = latestStamp.next(now: milliseconds, device: device)
    return merge(Entry(key: key, value: value, stamp: stamp))
  }

  /// Takes `entry` when its key is new or its stamp is later than the file's: the last writer
  /// wins, per key. Returns true when the entry was taken.
  @discardableResult
  public mutating func merge(_ entry: Entry) -> Bool {
    if let index = entries.firstIndex(where: { $0.key == entry.key }) {
      guard entries[index].stamp < entry.stamp else { return false }
      entries[index] = entry
      return true
    }
    let index = entries.firstIndex { $0.key > entry.key } ?? entries.endIndex
    entries.insert(entry, at: index)
    return true
  }

  /// Merges every entry of `other`, key by key (``merge(_:)->Bool``): settings never conflict.
  /// Returns the keys whose value changed, in key order.
  @discardableResult
  public mutating func merge(_ other: SettingsFile) -> [String] {
    var changed: [String] = []
    for entry in other.entries {
      let before = self[entry.key]?.value
      if merge(entry), before != entry.value { changed.append(entry.key) }
    }
    return changed
  }

  /// The file's bytes: a Stasis save file with one `settings` section.
  public func encoded() -> [UInt8] {
    let list = entries.map { entry in
      SaveValue.object(
        SaveObject([
          ("key", .string(entry.key)), ("value", entry.value),
          ("milliseconds", .int64(entry.stamp.milliseconds)), ("counter", .uint32(entry.stamp.counter)),
          ("device", .string(entry.stamp.device)),
        ]))
    }
    let document = SaveDocument(
      game: Self.identity, createdAt: latestStamp.milliseconds,
      summary: SaveSummary(details: .null, slot: Self.fileName),
      sections: [SaveSection(name: Self.sectionName, content: .tree(.array(list)))])
    return SaveFileFormat.encode(document)
  }

  /// Reads a settings file's bytes: every checksum checked, every entry's shape.
  public init(bytes: [UInt8], path: String? = nil) throws(SaveFileError) {
    let read = bytes.withUnsafeBytes { raw in
      Result { () throws(SaveFileError) in try SaveFileFormat.decode(raw, path: path) }
    }
    let document = try read.get()
    guard document.game.name == Self.identity.name else {
      throw SaveFileError(
        .anotherGame, "'\(document.game.name)' wrote this file, not Stasis's settings", context: .init(file: path))
    }
    guard case .tree(.array(let list))? = document[section: Self.sectionName]?.content else {
      throw SaveFileError(
        .malformed, "no list of settings", context: .init(file: path, part: Self.sectionName))
    }
    var entries: [Entry] = []
    for item in list {
      guard case .string(let key)? = item[field: "key"], let value = item[field: "value"],
        let milliseconds = item[field: "milliseconds"]?.int64Value,
        let counter = item[field: "counter"]?.uint64Value.flatMap(UInt32.init(exactly:)),
        case .string(let device)? = item[field: "device"]
      else {
        throw SaveFileError(
          .malformed, "entry \(entries.count) is not a key, a value and a stamp",
          context: .init(file: path, part: Self.sectionName))
      }
      entries.append(
        Entry(
          key: key, value: value, stamp: SettingsStamp(milliseconds: milliseconds, counter: counter, device: device)))
    }
    self.init(entries: entries)
  }
}

extension SaveStore {
  /// The settings file of this save folder (empty when there is none yet).
  public func readSettings() throws(SaveFileError) -> SettingsFile {
    try settings(from: readFolderFile(named: SettingsFile.folderFileName))
  }

  /// The settings file these bytes hold (empty when there is no file).
  package func settings(from bytes: [UInt8]?) throws(SaveFileError) -> SettingsFile {
    guard let bytes else { return SettingsFile() }
    return try SettingsFile(bytes: bytes, path: "\(directory)/\(SettingsFile.fileName)")
  }

  /// Changes the settings file under its lock: reads it (another process may have changed
  /// it), lets `body` change it, and writes it atomically and durably when it changed. What
  /// `stasis settings set` and ``SettingsStore`` use, so no process's change is lost.
  /// Returns the file as written.
  @discardableResult
  public func updateSettings(_ body: (inout SettingsFile) throws(SaveFileError) -> Void) throws(SaveFileError)
    -> SettingsFile
  {
    try changeSettings(body).file
  }

  /// ``updateSettings(_:)``, and the file's bytes as they now are on disk (nil: no file), so a
  /// ``SettingsStore`` knows them without reading the file again.
  package func changeSettings(_ body: (inout SettingsFile) throws(SaveFileError) -> Void) throws(SaveFileError)
    -> (file: SettingsFile, bytes: [UInt8]?)
  {
    let name = SettingsFile.folderFileName
    return try withFolderLock(named: name) { () throws(SaveFileError) -> (file: SettingsFile, bytes: [UInt8]?) in
      let bytes = try readFolderFile(named: name)
      let before = try settings(from: bytes)
      var file = before
      try body(&file)
      guard file != before else { return (file, bytes) }
      let new = file.encoded()
      try writeFolderFile(new, named: name)
      return (file, new)
    }
  }
}
