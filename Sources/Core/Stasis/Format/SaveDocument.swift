/// What a slot picker and a save service need without decoding the rest of a save; stored
/// in the header, so listing a folder reads only the files' first bytes.
///
/// The fields every game has (the frame, play time, a progress fraction, the device) are the
/// header's own; everything else is the game's: its own small `Codable` value, the
/// ``details``, such as a level name and a score. `stasis slots` and `stasis inspect` show the
/// details' fields without the game's code.
///
/// ```swift
/// struct TankSummary: Codable { var arena: String; var wave: Int }
/// let summary = try SaveSummary(TankSummary(arena: "Desert Outpost", wave: 7), playTime: 11_520, progress: 0.47)
/// let shown = try summary.details(as: TankSummary.self)  // in the slot picker
/// ```
public struct SaveSummary: Sendable, Equatable {
  /// The slot the save belongs to; the store sets it.
  public var slot: String
  /// The engine step the state was taken at.
  public var frame: Int64
  /// Play time in seconds.
  public var playTime: Double
  /// How far through the game the player is, from 0 to 1 (the picker's "47 %"); nil when the
  /// game has no such measure. Values outside 0...1 are clamped when the save is written.
  public var progress: Double?
  /// The device that wrote the save; when empty, the store writes its own ``SaveStore/device``.
  public var device: String
  /// The game's own summary fields as a self-described tree (an object), or `.null`. At most
  /// ``FormatLimits/maxSummaryDetailsBytes`` bytes once encoded.
  public var details: SaveValue

  /// Creates a summary from fields already in tree form.
  public init(
    frame: Int64 = 0, playTime: Double = 0, progress: Double? = nil, device: String = "", details: SaveValue = .null,
    slot: String = ""
  ) {
    self.slot = slot
    self.frame = frame
    self.playTime = playTime
    self.progress = progress
    self.device = device
    self.details = details
  }

  /// Creates a summary whose details are the game's own `Codable` value, encoded as a save's
  /// sections are, except that the top-level fields keep the order the type encodes them in (its
  /// declaration order, for a synthesized `Codable`): the order a slot picker and `stasis slots`
  /// show them in. A dictionary's entries are still sorted by key (no dictionary order reaches
  /// the file), and so are the fields of every nested value.
  public init<Details: Encodable>(
    _ details: Details, frame: Int64 = 0, playTime: Double = 0, progress: Double? = nil, device: String = ""
  ) throws(SaveFileError) {
    var tree = try SaveValueEncoder().encode(details)
    if !(details is any UnorderedFields), case .object(let sorted) = tree {
      tree = .object(SaveObject(Self.inDeclaredOrder(sorted.fields, of: details)))
    }
    self.init(frame: frame, playTime: playTime, progress: progress, device: device, details: tree)
  }

  /// `fields` (sorted by name) in the order `details` encodes its top-level keys; a field the
  /// recording did not see keeps its place after those it saw.
  private static func inDeclaredOrder(
    _ fields: [(name: String, value: SaveValue)], of details: some Encodable
  ) -> [(name: String, value: SaveValue)] {
    let recorder = FieldOrderRecorder()
    guard (try? details.encode(to: recorder)) != nil, !recorder.names.isEmpty else { return fields }
    var position: [String: Int] = [:]  // lookup only; the order comes from `recorder.names`
    for (index, name) in recorder.names.enumerated() where position[name] == nil { position[name] = index }
    return fields.enumerated().sorted { lhs, rhs in
      let left = position[lhs.element.name] ?? Int.max
      let right = position[rhs.element.name] ?? Int.max
      return left != right ? left < right : lhs.offset < rhs.offset
    }.map(\.element)
  }

  /// The details decoded as the game's summary type. Fields the type lacks are ignored and
  /// optional ones may be missing, so a picker reads the summaries of older and newer builds.
  public func details<Details: Decodable>(as type: Details.Type) throws(SaveFileError) -> Details {
    try SaveValueDecoder().decodeIgnoringUnreadFields(type, from: details)
  }

  /// Throws `limitExceeded` when the details are too large for the header.
  func checkSize() throws(SaveFileError) {
    guard details != .null else { return }
    var writer = ByteWriter()
    SectionCoding.encode(details, into: &writer)
    guard writer.count <= FormatLimits.maxSummaryDetailsBytes else {
      throw SaveFileError(
        .limitExceeded,
        "the game's summary is \(writer.count) bytes encoded; the limit is \(FormatLimits.maxSummaryDetailsBytes)",
        context: .init(part: "summary"), suggestion: "keep the summary to what a slot picker shows")
    }
  }
}

/// Who wrote a save: the game, its build and the version of its state's schema.
public struct GameIdentity: Sendable, Equatable {
  /// The game's name.
  public var name: String
  /// The game's build, e.g. `1.4.2 (311)`.
  public var build: String
  /// The version of the game's state types; bump it when they change and register a migration.
  public var schemaVersion: UInt32

  /// Creates an identity.
  public init(name: String, build: String = "", schemaVersion: UInt32 = 1) {
    self.name = name
    self.build = build
    self.schemaVersion = schemaVersion
  }
}

/// How a section's bytes are encoded.
public enum SectionEncoding: UInt8, Sendable, Equatable {
  /// Self-described values: names, shapes and layouts, then one tagged value.
  case tree = 1
  /// Opaque bytes (a PNG thumbnail): kept and checksummed, not interpreted.
  case raw = 2

  /// `tree` or `raw`.
  public var name: String { self == .tree ? "tree" : "raw" }
}

/// One named section of a save: `score`, `level`, `camera`, `physics`, `thumbnail`, ...
public struct SaveSection: Sendable, Equatable {
  /// The section's content.
  public enum Content: Sendable, Equatable {
    /// A self-described value tree.
    case tree(SaveValue)
    /// Opaque bytes (a PNG thumbnail, a `load-report`).
    case raw([UInt8])
  }

  /// The section's name.
  public var name: String
  /// Its content.
  public var content: Content

  /// Creates a section.
  public init(name: String, content: Content) {
    self.name = name
    self.content = content
  }

  /// The encoding the content uses.
  public var encoding: SectionEncoding {
    if case .raw = content { return .raw }
    return .tree
  }
}

/// A whole save file in memory: who wrote it, when, its summary, and its sections in order.
/// Tools that rewrite a file (recover, migrate) keep every section, known or not.
public struct SaveDocument: Sendable, Equatable {
  /// Who wrote it.
  public var game: GameIdentity
  /// When, in milliseconds since the Unix epoch.
  public var createdAt: Int64
  /// The slot picker's summary.
  public var summary: SaveSummary
  /// The sections, in file order.
  public var sections: [SaveSection]

  /// Creates a document.
  public init(game: GameIdentity, createdAt: Int64, summary: SaveSummary, sections: [SaveSection]) {
    self.game = game
    self.createdAt = createdAt
    self.summary = summary
    self.sections = sections
  }

  /// The section named `name`, if any.
  public subscript(section name: String) -> SaveSection? {
    sections.first { $0.name == name }
  }

  /// The tree sections as one object, section name → value: what `stasis dump` prints.
  public var tree: SaveValue {
    .object(
      SaveObject(
        sections.compactMap { section in
          if case .tree(let value) = section.content { return (section.name, value) }
          return nil
        }))
  }
}

/// A section's entry in the header's table: where it is and its checksum.
public struct SectionEntry: Sendable, Equatable {
  /// The section's name.
  public var name: String
  /// How its bytes are encoded.
  public var encoding: SectionEncoding
  /// Its first byte in the file.
  public var offset: Int
  /// Its length in bytes.
  public var length: Int
  /// The CRC32C of its bytes.
  public var checksum: UInt32
}

extension SectionEntry {
  /// True when two section tables describe the same sections: the same names, encodings,
  /// lengths and checksums, in the same order. Read from the headers alone: nothing is decoded
  /// (a caller that must be sure compares the sections' bytes too).
  package static func sameContent(_ left: [SectionEntry], _ right: [SectionEntry]) -> Bool {
    left.count == right.count
      && zip(left, right).allSatisfy {
        $0.name == $1.name && $0.encoding == $1.encoding && $0.length == $1.length && $0.checksum == $1.checksum
      }
  }
}

/// The header of a save file: readable from its first few KB without decoding the rest.
public struct SaveHeader: Sendable, Equatable {
  /// The format version the file was written with.
  public var formatVersion: UInt16
  /// Who wrote it.
  public var game: GameIdentity
  /// When, in milliseconds since the Unix epoch.
  public var createdAt: Int64
  /// The slot picker's summary.
  public var summary: SaveSummary
  /// True when the trailer carries an HMAC-SHA256 signature.
  public var isSigned: Bool
  /// The section table.
  public var sections: [SectionEntry]
  /// The header's length in bytes, its checksum included.
  public var length: Int
}

/// A value whose top-level keys come in no order of the type's: a dictionary, whose summary
/// fields stay sorted by key.
private protocol UnorderedFields {}
extension Dictionary: UnorderedFields {}

/// An encoder that records the keys a value's top-level keyed container is given, in order,
/// and encodes nothing: the game's declared order of its summary's fields.
private final class FieldOrderRecorder: Encoder {
  var names: [String] = []
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(Keys<Key>(recorder: self))
  }
  func unkeyedContainer() -> any UnkeyedEncodingContainer { Ignored() }
  func singleValueContainer() -> any SingleValueEncodingContainer { Ignored() }

  /// The top-level container: each key recorded, no value encoded.
  private struct Keys<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let recorder: FieldOrderRecorder
    var codingPath: [any CodingKey] { [] }
    func record(_ key: Key) { recorder.names.append(key.stringValue) }
    mutating func encodeNil(forKey key: Key) throws { record(key) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { record(key) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
      -> KeyedEncodingContainer<NestedKey>
    {
      record(key)
      return KeyedEncodingContainer(IgnoredKeys<NestedKey>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
      record(key)
      return Ignored()
    }
    mutating func superEncoder() -> any Encoder { IgnoredEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder {
      record(key)
      return IgnoredEncoder()
    }
  }

  /// Everything below the top level: nothing recorded.
  private struct IgnoredKeys<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
      -> KeyedEncodingContainer<NestedKey>
    { KeyedEncodingContainer(IgnoredKeys<NestedKey>()) }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { Ignored() }
    mutating func superEncoder() -> any Encoder { IgnoredEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { IgnoredEncoder() }
  }

  private struct Ignored: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
      -> KeyedEncodingContainer<NestedKey>
    { KeyedEncodingContainer(IgnoredKeys<NestedKey>()) }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Ignored() }
    mutating func superEncoder() -> any Encoder { IgnoredEncoder() }
  }

  private struct IgnoredEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
      KeyedEncodingContainer(IgnoredKeys<Key>())
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { Ignored() }
    func singleValueContainer() -> any SingleValueEncodingContainer { Ignored() }
  }
}
