/// What a slot picker needs without decoding the rest; stored in the header.
public struct SaveSummary: Sendable, Equatable, Codable {
  /// The slot the save belongs to.
  public var slot: String
  /// The level the player is on.
  public var level: Int
  /// The score.
  public var score: Int64
  /// Play time in seconds.
  public var playTime: Double
  /// The engine step the state was taken at.
  public var frame: Int64

  /// Creates a summary.
  public init(slot: String = "", level: Int = 0, score: Int64 = 0, playTime: Double = 0, frame: Int64 = 0) {
    self.slot = slot
    self.level = level
    self.score = score
    self.playTime = playTime
    self.frame = frame
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
