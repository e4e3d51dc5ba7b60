import Foundation

/// A generation kept out of pruning until the game or the player lets it go: the local side
/// that lost a cloud conflict, a save the player pinned.
public struct KeptGeneration: Sendable, Equatable, Codable {
  /// The generation's number.
  public var generation: Int
  /// Why it is kept, in one line (`stasis slots` shows it).
  public var reason: String

  /// Creates an entry.
  public init(generation: Int, reason: String) {
    self.generation = generation
    self.reason = reason
  }

  /// True when it is kept because the build that kept it could not read it or refused its
  /// state (the reasons the store and the coordinator write: `this build cannot read it (…)`,
  /// `this build refused its state (…)`): true only until a build reads it. False once a
  /// start-over went on top of it (``startOverSuffix``): then it is the player's last game,
  /// kept until discarded, whoever reads it.
  var saysUnreadable: Bool {
    guard !reason.hasSuffix(Self.startOverSuffix) else { return false }
    return reason.hasPrefix("this build cannot read it") || reason.hasPrefix("this build refused its state")
  }

  /// What the coordinator adds to a kept generation's reason when the player starts over on
  /// top of it: from then on a build that reads it does not take it off the kept list.
  static let startOverSuffix = "; kept at a start-over"
}

/// Slot files: the small files a slot keeps beside its generations — the sync's record
/// (`.cloud`), the list of kept generations (`.kept`), the first signed generation (`.signed`) —
/// each written like a save (a temporary file flushed, renamed over the old
/// one, the folder flushed) under the slot's lock, so a crash leaves the old file or the
/// new one, never a torn one. (The save folder's own files, settings and timers, are folder
/// files: `SaveStore+FolderFiles.swift`.)
///
/// On disk a slot file named `cloud` is `DIRECTORY/SLOT/.cloud`; listing, loading and copying
/// ignore it, deleting the slot removes it.
extension SaveStore {
  /// The largest slot or folder file: they are bookkeeping, not saves.
  package static let maxBookkeepingFileBytes = 1 << 20

  /// Writes the slot file `name` of `slot` atomically and durably, creating the slot's folder
  /// when missing. `name` is 1–32 lowercase letters, digits and dashes.
  /// With `durable: false` nothing is flushed: the file is replaced atomically (the rename),
  /// so the next process reads it, but a crash of the machine may leave the one before.
  package func writeSlotFile(_ bytes: [UInt8], named name: String, slot: SaveSlot, durable: Bool = true)
    throws(SaveFileError)
  {
    try checkSlotFileName(name)
    guard bytes.count <= Self.maxBookkeepingFileBytes else {
      throw SaveFileError(
        .limitExceeded, "slot file '.\(name)' is \(bytes.count) bytes; the limit is \(Self.maxBookkeepingFileBytes)",
        context: .init(file: folder(of: slot)))
    }
    try withSlotLock(slot, creating: true) { () throws(SaveFileError) in
      try writeSlotFileLocked(bytes, named: name, slot: slot, durable: durable)
    }
  }

  /// The slot file `name` of `slot`, or nil when the slot has none.
  package func readSlotFile(named name: String, slot: SaveSlot) throws(SaveFileError) -> [UInt8]? {
    try slot.validated()
    try checkSlotFileName(name)
    return try readHiddenFile("\(folder(of: slot))/.\(name)")
  }

  // MARK: Kept generations

  /// Keeps `generation` of `slot` out of pruning until ``release(generation:slot:)``.
  public func keep(generation: Int, slot: SaveSlot, reason: String) throws(SaveFileError) {
    try withSlotLock(slot, creating: false) { () throws(SaveFileError) in
      var kept = try readKeptList(slot).get()
      kept.removeAll { $0.generation == generation }
      kept.append(KeptGeneration(generation: generation, reason: reason))
      try writeKept(kept.sorted { $0.generation > $1.generation }, slot: slot)
    }
  }

  /// Lets a kept generation be pruned again (the player discarded it); it goes at the next
  /// save when it is past the newest N.
  public func release(generation: Int, slot: SaveSlot) throws(SaveFileError) {
    try withSlotLock(slot, creating: false) { () throws(SaveFileError) in
      let kept = try readKeptList(slot).get()
      guard kept.contains(where: { $0.generation == generation }) else { return }
      try writeKept(kept.filter { $0.generation != generation }, slot: slot)
    }
  }

  /// Deletes one generation of `slot` for good — the explicit discard that alone removes a
  /// generation this build cannot read, or a conflict's kept loser — and takes it off the
  /// kept list. Refuses the slot's only generation: delete the slot for that.
  ///
  /// ```swift
  /// try store.discard(generation: 7, slot: "autosave")   // `stasis discard Saves autosave 7`
  /// ```
  public func discard(generation: Int, slot: SaveSlot) throws(SaveFileError) {
    try withSlotLock(slot, creating: false) { () throws(SaveFileError) in
      let all = try generations(of: slot)
      let path = path(of: slot, generation: generation)
      guard all.contains(generation) else {
        throw SaveFileError(
          .noSuchGeneration, "slot '\(slot)' has no generation \(generation)", context: .init(file: folder(of: slot)))
      }
      guard all.count > 1 else {
        throw SaveFileError(
          .onlyGeneration, "generation \(generation) is the slot's only one; nothing was discarded",
          context: .init(file: path), suggestion: "delete the slot to remove it")
      }
      // The file goes first, flushed; only then its kept entry: a crash between the two leaves
      // an entry naming no file (harmless, dropped by the next discard or keep), never a kept
      // generation that lost its protection while still on disk.
      do throws(FileSystemError) {
        try fileSystem.unlink(path)
        try fileSystem.fsyncDirectory(folder(of: slot))
      } catch {
        throw SaveFileError("generation \(generation) could not be discarded", cause: error)
      }
      files.withLock { $0.forget(path) }
      if let kept = keptGenerationsLocked(slot), kept.contains(where: { $0.generation == generation }) {
        try writeKept(kept.filter { $0.generation != generation }, slot: slot)
      }
    }
  }

  /// The generations of `slot` kept out of pruning, newest first (none when the list cannot
  /// be read; pruning then keeps every generation until it can).
  public func keptGenerations(of slot: SaveSlot) -> [KeptGeneration] {
    keptGenerationsLocked(slot) ?? []
  }

  // MARK: Signed slots

  /// True once the slot has held a signed generation: from then on an unsigned file in it is
  /// refused on load and on write — an edited save with its signature stripped never loads,
  /// even under a policy that accepts unsigned saves (key rotation, turning signing on). The
  /// unsigned generations older than the first signed one still load: they predate signing.
  public func isSigned(_ slot: SaveSlot) -> Bool { signedSince(folder: folder(of: slot)) != nil }

  /// Lets the slot take unsigned saves again: for a game that stops signing on purpose. Its
  /// next signed save marks it signed again.
  public func resetSigning(of slot: SaveSlot) throws(SaveFileError) {
    try withSlotLock(slot) { () throws(SaveFileError) in
      let path = "\(folder(of: slot))/.\(Self.signedFileName)"
      guard fileSystem.kind(of: path) != .missing else { return }
      do throws(FileSystemError) {
        try fileSystem.unlink(path)
        try fileSystem.fsyncDirectory(folder(of: slot))
      } catch {
        throw SaveFileError("the slot's signing could not be reset", cause: error)
      }
    }
  }

  static let signedFileName = "signed"

  /// The first signed generation of the slot in `folder`, nil when it has held none. A file
  /// that cannot be read counts as signed from generation 0: refusing is the safe side.
  func signedSince(folder: String) -> Int? {
    let path = "\(folder)/.\(Self.signedFileName)"
    guard fileSystem.kind(of: path) != .missing else { return nil }
    guard let bytes = try? fileSystem.read(path, limit: 64),
      let text = String(bytes: bytes, encoding: .utf8),
      let generation = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    else { return 0 }
    return generation
  }

  /// Whether an unsigned file at `path` is refused: it is in a signed slot, no older than its
  /// first signed generation.
  func refusesUnsigned(file path: String) -> Bool {
    guard let since = signedSince(folder: Self.folder(ofFile: path)) else { return false }
    let name = path.split(separator: "/").last.map(String.init) ?? path
    return (Self.generationNumber(fileName: name) ?? Int.max) >= since
  }

  /// Whether the file at `path` is in a signed slot's folder, and the error a tool reports
  /// when it is unsigned (`stasis verify`'s "unsigned in a signed slot").
  package static func unsignedInSignedSlot(file path: String) -> SaveFileError? {
    let store = SaveStore(directory: ".")
    guard store.refusesUnsigned(file: path) else { return nil }
    return store.unsignedInSignedSlot(path)
  }

  /// The folder a file is in.
  static func folder(ofFile path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return String(path[..<slash])
  }

  func unsignedInSignedSlot(_ path: String) -> SaveFileError {
    SaveFileError(
      .unsigned,
      "unsigned in a signed slot: the slot has held signed saves, so this one's signature was stripped "
        + "or never made", context: .init(file: path, part: "signature"),
      suggestion: "it is kept until discarded; a game that stopped signing on purpose resets the slot's signing")
  }

  // MARK: Internal

  static let keptFileName = "kept"

  /// A slot file's JSON, keys sorted (the same value, the same bytes); a value JSON cannot
  /// hold is a ``SaveFileError/Kind/typeMismatch`` naming `what`.
  package static func slotFileJSON<Value: Encodable>(_ value: Value, what: String, file: String? = nil)
    throws(SaveFileError) -> Data
  {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    do {
      return try encoder.encode(value)
    } catch {
      throw SaveFileError(
        .typeMismatch, "\(what) could not be encoded: \(error)", context: .init(file: file), underlyingError: error)
    }
  }

  /// Reads the kept list: empty when there is none, nil when it exists but cannot be read —
  /// then nothing may be pruned, since any generation might be one it keeps.
  func keptGenerationsLocked(_ slot: SaveSlot) -> [KeptGeneration]? {
    try? readKeptList(slot).get()
  }

  /// The kept list, or why it cannot be had: ``SaveFileError/Kind/io`` when the file cannot be
  /// read, ``SaveFileError/Kind/malformed`` when its bytes are not a kept list. Nothing is pruned
  /// or kept until it can be read.
  func readKeptList(_ slot: SaveSlot) -> Result<[KeptGeneration], SaveFileError> {
    let path = "\(folder(of: slot))/.\(Self.keptFileName)"
    let suggestion = "nothing is pruned until it can; `stasis slots` lists the generations"
    let read: [UInt8]?
    do {
      read = try readSlotFile(named: Self.keptFileName, slot: slot)
    } catch {
      var error = error
      error.message = "the slot's kept list cannot be read: \(error.message)"
      error.context.file = path
      error.suggestion = error.suggestion ?? suggestion
      return .failure(error)
    }
    guard let bytes = read else { return .success([]) }  // no list: nothing kept
    do {
      return .success(try JSONDecoder().decode([KeptGeneration].self, from: Data(bytes)))
    } catch {
      return .failure(
        SaveFileError(
          .malformed, "the slot's kept list is not a list of kept generations", context: .init(file: path),
          suggestion: suggestion, underlyingError: error))
    }
  }

  func writeKept(_ kept: [KeptGeneration], slot: SaveSlot) throws(SaveFileError) {
    let data = try Self.slotFileJSON(kept, what: "the kept list", file: folder(of: slot))
    try writeSlotFileLocked([UInt8](data), named: Self.keptFileName, slot: slot)
  }

  /// The atomic write, the slot's lock held: a temporary file named like a save's (so a
  /// killed writer's leftover is removed by the next save), flushed, renamed, folder flushed.
  func writeSlotFileLocked(_ bytes: [UInt8], named name: String, slot: SaveSlot, durable: Bool = true)
    throws(SaveFileError)
  {
    try replaceHiddenFile(bytes, named: name, in: folder(of: slot), durable: durable)
  }

  private func checkSlotFileName(_ name: String) throws(SaveFileError) {
    guard (1...32).contains(name.utf8.count), name != "lock",
      name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
    else {
      throw SaveFileError(
        .invalidSlotFileName, "'\(name)' is not a slot file name: 1-32 lowercase letters, digits and dashes")
    }
  }
}
