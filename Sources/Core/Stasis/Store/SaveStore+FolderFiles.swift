import Logging

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Small files of the whole save folder, beside its slots: the settings (`.settings`) and the
/// timers (`.timers`). Each is written like a slot file (a temporary file flushed, renamed
/// over the old one, the folder flushed), so a crash leaves the old file or the new one. Their
/// names start with a dot, so no slot listing sees them.
extension SaveStore {
  /// Writes `DIRECTORY/.NAME` atomically and durably, creating the save folder when missing.
  package func writeFolderFile(_ bytes: [UInt8], named name: String) throws(SaveFileError) {
    guard bytes.count <= Self.maxBookkeepingFileBytes else {
      throw SaveFileError(
        .limitExceeded, "'.\(name)' is \(bytes.count) bytes; the limit is \(Self.maxBookkeepingFileBytes)",
        context: .init(file: directory))
    }
    do throws(FileSystemError) {
      try makeSaveFolder()
    } catch {
      throw SaveFileError("the save folder could not be created", cause: error)
    }
    try replaceHiddenFile(bytes, named: name, in: directory, durable: rules.flushesFolderFiles)
  }

  /// `DIRECTORY/.NAME`'s bytes, or nil when there is none.
  package func readFolderFile(named name: String) throws(SaveFileError) -> [UInt8]? {
    try readHiddenFile("\(directory)/.\(name)")
  }

  /// Runs `body` holding `DIRECTORY/.NAME.lock`: one writer of a folder file at a time, across
  /// processes (the game and `stasis settings set`).
  package func withFolderLock<T>(named name: String, _ body: () throws(SaveFileError) -> T) throws(SaveFileError) -> T {
    do throws(FileSystemError) {
      try makeSaveFolder()
    } catch {
      throw SaveFileError("the save folder could not be created", cause: error)
    }
    let path = "\(directory)/.\(name).lock"
    let lock: Int32
    do throws(FileSystemError) {
      lock = try fileSystem.lock(path, timeout: lockTimeout)
    } catch {
      if error.errno == .wouldBlock {
        throw SaveFileError(
          .locked, "another process held '.\(name)' for more than \(lockTimeout)", context: .init(file: path),
          suggestion: "close the other program that is using this save folder")
      }
      throw SaveFileError("'.\(name)' could not be locked", cause: error)
    }
    defer { fileSystem.unlock(lock) }
    return try body()
  }

  /// Moves `DIRECTORY/.NAME`, which this build could not read, aside to
  /// `.NAME.unreadable-MILLISECONDS`: kept, never deleted, so the game can start that file
  /// again without losing it. Returns the new path.
  package func setAsideFolderFile(named name: String, because error: SaveFileError, logger: Logger)
    throws(SaveFileError)
    -> String
  {
    let path = "\(directory)/.\(name)"
    let aside = "\(path).unreadable-\(wallClock())"
    do throws(FileSystemError) {
      try fileSystem.rename(path, aside)
      try fileSystem.fsyncDirectory(directory)
    } catch {
      throw SaveFileError("the unreadable file could not be set aside", cause: error)
    }
    logger.error("\(error); it was moved to \(aside) and started again")
    return aside
  }

  /// The atomic replacement of a hidden file: a temporary file named after it, flushed,
  /// renamed, the folder flushed (unless `durable` is false).
  func replaceHiddenFile(_ bytes: [UInt8], named name: String, in folder: String, durable: Bool)
    throws(SaveFileError)
  {
    try replaceFile(bytes, named: ".\(name)", in: folder, durable: durable)
  }

  /// The atomic replacement of `FOLDER/NAME`: a temporary file `.NAME.tmp-…-file` beside it,
  /// flushed, renamed, the folder flushed (unless `durable` is false). A crash leaves the old
  /// file or the new one.
  private func replaceFile(_ bytes: [UInt8], named name: String, in folder: String, durable: Bool)
    throws(SaveFileError)
  {
    let final = "\(folder)/\(name)"
    let hidden = name.hasPrefix(".") ? name : ".\(name)"
    let temporary = "\(folder)/\(hidden).tmp-\(fileSystem.temporaryTag)-file"
    try? fileSystem.unlink(temporary)
    try writeFile(bytes, to: temporary, handle: nil, flush: durable)
    do throws(FileSystemError) {
      try fileSystem.rename(temporary, final)
      if durable { try fileSystem.fsyncDirectory(folder) }
    } catch {
      try? fileSystem.unlink(temporary)
      throw SaveFileError("'\(name)' could not be put in place", cause: error)
    }
  }

  /// Writes `DIRECTORY/FOLDER/NAME` atomically and durably, making the folders when missing: a
  /// file of the save folder that belongs to no slot, such as a replay (`replays/`, StasisReplay).
  package func writeFile(_ bytes: [UInt8], named name: String, inFolder folder: String) throws(SaveFileError) {
    let path = "\(directory)/\(folder)"
    do throws(FileSystemError) {
      try makeSaveFolder()
      if try fileSystem.makeDirectory(path) { try fileSystem.fsyncDirectory(directory) }
    } catch {
      throw SaveFileError("the folder could not be created", cause: error).inFile(path)
    }
    try replaceFile(bytes, named: name, in: path, durable: true)
  }

  /// `DIRECTORY/FOLDER/NAME`'s bytes (at most `limit`), or nil when there is none.
  package func readFile(named name: String, inFolder folder: String, limit: Int = FormatLimits.maxFileSize)
    throws(SaveFileError) -> [UInt8]?
  {
    let path = "\(directory)/\(folder)/\(name)"
    switch fileSystem.kind(of: path) {
    case .missing: return nil
    case .file: break
    default:
      throw SaveFileError(
        .notARegularFile, "is not a regular file (a folder or a link?); refused", context: .init(file: path))
    }
    do {
      return try fileSystem.read(path, limit: limit)
    } catch {
      throw SaveFileError("the file could not be read", cause: error).inFile(path)
    }
  }

  /// A hidden file's bytes, or nil when missing; a link or folder in its place is refused.
  func readHiddenFile(_ path: String) throws(SaveFileError) -> [UInt8]? {
    switch fileSystem.kind(of: path) {
    case .missing: return nil
    case .file: break
    default:
      throw SaveFileError(
        .notARegularFile, "is not a regular file (a folder or a link?); refused", context: .init(file: path),
        suggestion: "remove what is there; Stasis does not read through it or replace it")
    }
    do {
      return try fileSystem.read(path, limit: Self.maxBookkeepingFileBytes)
    } catch {
      throw SaveFileError("the file could not be read", cause: error)
    }
  }
}
