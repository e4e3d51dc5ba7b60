/// A slot and its generations, newest first.
public struct SlotInfo: Sendable, Equatable {
  /// The slot.
  public var slot: SaveSlot
  /// The slot's name.
  public var name: String { slot.name }
  /// Its generations, newest first.
  public var generations: [GenerationInfo]
  /// The generations kept out of pruning on purpose (a cloud conflict's local loser), newest first.
  public var kept: [KeptGeneration]

  /// Creates a slot's listing.
  public init(slot: SaveSlot, generations: [GenerationInfo], kept: [KeptGeneration] = []) {
    self.slot = slot
    self.generations = generations
    self.kept = kept
  }

  /// Why a generation is kept past the newest N: kept on purpose (``kept``), or, from headers
  /// alone, because some build cannot read it: a format newer than this reader's, a schema above `readerSchema` (when given), or a
  /// schema above that of a later generation (an older build saved alongside it). Nil for
  /// an ordinary generation.
  public func keptReason(_ info: GenerationInfo, readerSchema: UInt32? = nil) -> String? {
    if let entry = kept.first(where: { $0.generation == info.generation }) { return "kept: \(entry.reason)" }
    if let error = info.error, error.kind == .newerFormat {
      return "kept: \(error.message); a newer Stasis reads it"
    }
    guard let schema = info.header?.game.schemaVersion else { return nil }
    if let readerSchema, schema > readerSchema {
      return "kept: schema \(schema) is newer than this build's \(readerSchema)"
    }
    let later = generations.filter { $0.generation > info.generation }.compactMap { $0.header?.game.schemaVersion }
    if let older = later.min(), older < schema {
      return "kept: schema \(schema), newer than the build that saved after it (schema \(older))"
    }
    return nil
  }
}

/// One generation of a slot as seen from its header alone: what a slot picker shows.
public struct GenerationInfo: Sendable, Equatable {
  /// The generation's number (higher is newer).
  public var generation: Int
  /// Its file.
  public var path: String
  /// Its size in bytes.
  public var size: Int
  /// The header, when it passed its checks.
  public var header: SaveHeader?
  /// Why the header could not be read.
  public var error: SaveFileError?
  /// True when the header passed its checks (the sections are checked on load).
  public var isValid: Bool { header != nil }
  /// True when the save has a `thumbnail` section.
  public var hasThumbnail: Bool { header?.sections.contains { $0.name == "thumbnail" } ?? false }
}
