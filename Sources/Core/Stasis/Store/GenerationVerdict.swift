/// What this build can do with one generation of a slot: the store's pruning and its refusal
/// to save on top of a newer build's save both rest on it.
enum GenerationVerdict {
  /// Every checksum and the signature pass, and its schema is one this build reads.
  case loadable
  /// It fails a check: it can be passed over on load and pruned once older than the kept ones.
  case damaged(SaveFileError)
  /// Whole, but this build cannot read it: kept, never pruned, never written over.
  case unreadable(SaveFileError)
  /// Whole and readable, but not a state this build accepts (a failed validation): a load
  /// passes over it and a save may go on top, but it is kept until discarded.
  case passedOver(SaveFileError)

  /// Whether the one retention rule keeps it whatever its age (until an explicit discard).
  var mustBeKept: SaveFileError? {
    switch self {
    case .unreadable(let error), .passedOver(let error): error
    case .loadable, .damaged: nil
    }
  }
}

extension SaveFileError {
  /// True when the file may well be whole but this build cannot read it: written by a newer
  /// format or schema, by another game, signed with a key this build does not have (or
  /// unsigned where signatures are required), or holding fields this build cannot decode (a
  /// field renamed, removed or retyped without a migration, a migration that failed). Such a
  /// generation is never deleted, and a load stops at it rather than play on from an older one.
  ///
  /// A failed validation (``Kind/invalidState``) is not in this list: a load may fall back
  /// past it, but the store keeps that generation too.
  public var isUnreadableByThisBuild: Bool {
    switch kind {
    case .newerSchema, .newerFormat, .signatureMismatch, .unsigned, .anotherGame, .typeMismatch, .missingField,
      .droppedField, .migrationFailed:
      return true
    default: return false
    }
  }
}

extension SaveStore {
  /// Records that `path`, written by `game`, passed every check at its current size.
  func remember(_ path: String, game: GameIdentity) {
    guard case .file(let size) = fileSystem.kind(of: path) else { return }
    remember(path, game: game, size: size)
  }

  /// Records that `path`, written by `game` with `size` bytes, passed every check: the
  /// writer's own file, whose size it knows without asking the disk.
  func remember(_ path: String, game: GameIdentity, size: Int) {
    files.withLock { $0[slotOf: path].knownGood[path] = (size, game) }
  }

  /// Whether a load noted that `generation` of `slot` decodes to no state of this build.
  func hasNotedUndecodable(slot: SaveSlot, generation: Int) -> Bool {
    let path = path(of: slot, generation: generation)
    return files.withLock { $0[slotOf: path].undecodable[path] != nil }
  }

  /// Classifies a generation for a build that writes `reader`'s game and schema. Reads and
  /// checks the whole file once per process; the verdict for a whole file is remembered, and
  /// so is what a load of this store found it could not make a state of.
  ///
  /// `size` is the file's size when the caller has just asked the disk for it (one `stat`, not two).
  func verdict(slot: SaveSlot, generation: Int, reader: GameIdentity, size knownSize: Int? = nil) -> GenerationVerdict {
    let path = path(of: slot, generation: generation)
    let kind = knownSize.map { FileKind.file(size: $0) } ?? fileSystem.kind(of: path)
    if case .file(let size) = kind {
      if let found = files.withLock({ $0[slotOf: path].undecodable[path] }), found.size == size {
        return found.error.kind == .invalidState ? .passedOver(found.error) : .unreadable(found.error)
      }
      if let known = files.withLock({ $0[slotOf: path].knownGood[path] }), known.size == size {
        return verdict(path: path, writer: known.game, reader: reader)
      }
    }
    func classify(_ error: SaveFileError) -> GenerationVerdict {
      error.isUnreadableByThisBuild ? .unreadable(error) : .damaged(error)
    }
    let bytes: [UInt8]
    do {
      bytes = try readBytes(at: path)
    } catch {
      return classify(error)
    }
    let verification = bytes.withUnsafeBytes { SaveFileFormat.verify($0, path: path, signing: signing) }
    if let error = verification.error { return classify(error) }
    if verification.signature == .unsigned, refusesUnsigned(file: path) {
      return classify(unsignedInSignedSlot(path))
    }
    let game = verification.header!.game
    remember(path, game: game)
    return verdict(path: path, writer: game, reader: reader)
  }

  /// Whether a whole file written by `writer` can be read by `reader`.
  private func verdict(path: String, writer game: GameIdentity, reader: GameIdentity) -> GenerationVerdict {
    guard game.name == reader.name else {
      return .unreadable(
        SaveFileError(
          .anotherGame, "written by '\(game.name)', not '\(reader.name)'", context: .init(file: path, part: "header")))
    }
    guard game.schemaVersion <= reader.schemaVersion else {
      return .unreadable(
        SaveFileError(
          .newerSchema, "schema version \(game.schemaVersion); this build writes \(reader.schemaVersion)",
          context: .init(file: path, part: "header"), suggestion: "update the game to load it"))
    }
    return .loadable
  }
}

/// The verdicts of one write under the slot's lock, each generation classified once: nothing
/// but the writer changes the folder while it holds the lock, and the keeping, the refusal
/// and the pruning each asked for every generation (three `stat`s a generation, a save).
final class WriteVerdicts {
  private let store: SaveStore
  private let slot: SaveSlot
  private let reader: GameIdentity
  private var known: [Int: GenerationVerdict] = [:]
  /// Sizes this write found already (the newest generation's, by the same-state check).
  private var sizes: [Int: Int] = [:]

  init(store: SaveStore, slot: SaveSlot, reader: GameIdentity) {
    self.store = store
    self.slot = slot
    self.reader = reader
  }

  /// The verdict on `generation`, classified on first asking.
  ///
  /// A load running beside the write may find meanwhile that a generation decodes to no state
  /// (``SaveFileError/Kind/invalidState``, a failed validation): a generation remembered as
  /// loadable is asked again when the store has noted anything about it, so that the pruning
  /// never deletes what the load found it must keep.
  func callAsFunction(_ generation: Int) -> GenerationVerdict {
    if let verdict = known[generation] {
      guard case .loadable = verdict, store.hasNotedUndecodable(slot: slot, generation: generation) else {
        return verdict
      }
    }
    let verdict = store.verdict(slot: slot, generation: generation, reader: reader, size: sizes[generation])
    known[generation] = verdict
    return verdict
  }

  /// Records that `generation` has `size` bytes, as the disk said during this write.
  func know(size: Int, of generation: Int) { sizes[generation] = size }

  /// Records that this write wrote `generation`: loadable by the build that wrote it.
  func wrote(_ generation: Int) { known[generation] = .loadable }
}
