import Foundation

/// Slot management a game's menus need: load a chosen generation, delete, copy and rename a
/// slot — each under the slot's lock, so it never interleaves with a save — and the platform's
/// standard save folder.
extension SaveStore {
  /// The standard save folder of `game`: `$XDG_DATA_HOME/<game>/saves`, else
  /// `~/.local/share/<game>/saves` (the XDG base-directory convention Linux games follow).
  /// The store creates it, with its parents, on the first save.
  ///
  /// ```swift
  /// let store = SaveStore(directory: SaveStore.defaultDirectory(game: "tanks"))
  /// ```
  public static func defaultDirectory(
    game: String, environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String {
    if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return "\(data)/\(game)/saves" }
    let home = environment["HOME"] ?? NSHomeDirectory()
    return "\(home)/.local/share/\(game)/saves"
  }

  /// Loads one chosen generation of `slot` (a "load this save" menu, a tool), with every check
  /// and the validation; it never falls back to another.
  public func load<State>(codec: SaveCodec<State>, slot: SaveSlot, generation: Int) throws(SaveFileError)
    -> LoadedSave<State>
  {
    try slot.validated()
    let path = path(of: slot, generation: generation)
    if case .missing = fileSystem.kind(of: path) {
      let existing = (try? generations(of: slot)) ?? []
      guard !existing.isEmpty else {
        throw SaveFileError(.notFound, "slot '\(slot)' has no saves", context: .init(file: folder(of: slot)))
      }
      throw SaveFileError(
        .noSuchGeneration,
        "slot '\(slot)' has no generation \(generation) (it has \(existing.map(String.init).joined(separator: ", ")))",
        context: .init(file: folder(of: slot)))
    }  // a folder or a link there is refused by the read, as not a regular file
    let document = try readDocument(at: path)
    let loaded = try decode(document, codec: codec, slot: slot, generation: generation)
    return LoadedSave(
      state: loaded.state, document: document, generation: generation, path: path, report: loaded.report, skipped: [])
  }

  /// Deletes a slot and every generation in it, under its lock. A slot that does not exist
  /// is a `notFound` error.
  public func deleteSlot(_ slot: SaveSlot) throws(SaveFileError) {
    try withSlotLock(slot) { () throws(SaveFileError) in
      let folder = folder(of: slot)
      let names: [String]
      do throws(FileSystemError) {
        names = try fileSystem.contents(ofDirectory: folder)
      } catch {
        throw SaveFileError("the slot could not be listed", cause: error)
      }
      // Generations first, newest last: a crash half-way leaves the newest ones.
      for name in names.filter({ $0 != ".lock" }).sorted() {
        do throws(FileSystemError) {
          try fileSystem.unlink("\(folder)/\(name)")
        } catch {
          throw SaveFileError("the slot could not be deleted", cause: error)
        }
        files.withLock { $0.forget("\(folder)/\(name)") }
      }
      files.withLock { $0.forgetSlot(folder: folder) }  // the hand-over and the prunings too
    }
    // The lock file goes last, outside the lock; the empty folder goes with it.
    try? fileSystem.unlink("\(folder(of: slot))/.lock")
    try? fileSystem.removeDirectory(folder(of: slot))
    try? fileSystem.fsyncDirectory(directory)
  }

  /// Copies every generation of `source` — the exact bytes, unreadable ones included — into
  /// the new slot `destination` (a "duplicate save" menu), each written durably.
  public func copySlot(_ source: SaveSlot, to destination: SaveSlot) throws(SaveFileError) {
    try refuseExisting(destination)
    let files = try withSlotLock(source) { () throws(SaveFileError) -> [[UInt8]] in
      try generations(of: source).reversed().map { generation throws(SaveFileError) in
        try readBytes(at: path(of: source, generation: generation))
      }
    }
    for bytes in files {
      // Exact bytes, numbered anew in the same order; nothing checked, nothing pruned.
      var request = DurableWrite(
        SaveFileBytes(bytes), slot: destination, writer: GameIdentity(name: ""), unreadableNewest: .saveAlongside)
      request.prunes = false
      _ = try writeDurably(request, handle: SaveHandle(slot: destination))
    }
  }

  /// Renames a slot: its folder renamed at once (POSIX `rename`), under its lock, so every
  /// generation — unreadable ones included — moves together and a crash leaves one name or
  /// the other.
  public func renameSlot(_ source: SaveSlot, to destination: SaveSlot) throws(SaveFileError) {
    try refuseExisting(destination)
    try withSlotLock(source) { () throws(SaveFileError) in
      // The files move: what was known of either name is not known of them. Forgotten under
      // the lock, before the destination exists for another writer to be known by.
      files.withLock {
        $0.forgetSlot(folder: folder(of: source))
        $0.forgetSlot(folder: folder(of: destination))
      }
      do throws(FileSystemError) {
        try fileSystem.rename(folder(of: source), folder(of: destination))
        try fileSystem.fsyncDirectory(directory)
      } catch {
        throw SaveFileError("the slot could not be renamed", cause: error)
      }
    }
  }

  private func refuseExisting(_ slot: SaveSlot) throws(SaveFileError) {
    try slot.validated()
    guard fileSystem.kind(of: folder(of: slot)) == .missing else {
      throw SaveFileError(
        .slotExists, "slot '\(slot)' already exists", context: .init(file: folder(of: slot)),
        suggestion: "delete it first, or choose another name")
    }
  }

  /// Runs `body` holding the slot's lock; the slot must exist unless `creating`, which makes
  /// its folder (and the save folder) first.
  ///
  /// Two locks: the slot's lock inside this process, waited for as long as it takes (this
  /// process's own writers are short and in order), then the `.lock` file's `flock`, which
  /// only another process can hold, waited for up to ``lockTimeout``.
  func withSlotLock<T>(_ slot: SaveSlot, creating: Bool = false, _ body: () throws(SaveFileError) -> T)
    throws(SaveFileError) -> T
  {
    try slot.validated()
    let folder = folder(of: slot)
    if creating { try makeSlotFolder(slot) }
    return try writers.gate(slot: slot.name).withLock { () throws(SaveFileError) -> T in
      // A folder made just now is there (a delete that races with it fails the lock's open).
      guard creating || fileSystem.kind(of: folder) == .directory else {
        throw SaveFileError(.notFound, "slot '\(slot)' does not exist", context: .init(file: folder))
      }
      let lock: Int32
      do throws(FileSystemError) {
        lock = try fileSystem.lock("\(folder)/.lock", timeout: lockTimeout)
      } catch {
        if error.errno == .wouldBlock {
          throw SaveFileError(
            .locked, "another process held slot '\(slot)' for more than \(lockTimeout)", context: .init(file: folder),
            suggestion: "close the other program that is using this save folder")
        }
        throw SaveFileError("the slot could not be locked", cause: error)
      }
      defer { fileSystem.unlock(lock) }
      return try body()
    }
  }
}
