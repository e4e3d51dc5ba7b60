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
}

/// Small files a slot keeps beside its generations — a sync record, the list of kept
/// generations — each written like a save (a temporary file flushed, renamed over the old
/// one, the folder flushed) under the slot's lock, so a crash leaves the old record or the
/// new one, never a torn one.
///
/// On disk a record named `cloud` is `DIRECTORY/SLOT/.cloud`; listing, loading and copying
/// ignore it, deleting the slot removes it.
extension SaveStore {
  /// The largest record: records are bookkeeping, not saves.
  public static let maxRecordBytes = 1 << 20

  /// Writes the record `name` of `slot` atomically and durably, creating the slot's folder
  /// when missing. `name` is 1–32 lowercase letters, digits and dashes.
  public func writeRecord(_ bytes: [UInt8], named name: String, slot: SaveSlot) throws(SaveFileError) {
    try checkRecordName(name)
    guard bytes.count <= Self.maxRecordBytes else {
      throw SaveFileError(
        .limitExceeded, "record '\(name)' is \(bytes.count) bytes; the limit is \(Self.maxRecordBytes)",
        context: .init(file: folder(of: slot)))
    }
    try withSlotLock(slot, creating: true) { () throws(SaveFileError) in
      try writeRecordLocked(bytes, named: name, slot: slot)
    }
  }

  /// The record `name` of `slot`, or nil when the slot has none.
  public func readRecord(named name: String, slot: SaveSlot) throws(SaveFileError) -> [UInt8]? {
    try checkRecordName(name)
    let path = "\(folder(of: slot))/.\(name)"
    switch fileSystem.kind(of: path) {
    case .missing: return nil
    case .file: break
    default: throw SaveFileError(.io, "is not a regular file (a link?); refused", context: .init(file: path))
    }
    do {
      return try fileSystem.read(path, limit: Self.maxRecordBytes)
    } catch {
      throw SaveFileError("the record could not be read", cause: error)
    }
  }

  // MARK: Kept generations

  /// Keeps `generation` of `slot` out of pruning until ``release(generation:slot:)``.
  public func keep(generation: Int, slot: SaveSlot, reason: String) throws(SaveFileError) {
    try withSlotLock(slot, creating: false) { () throws(SaveFileError) in
      var kept = keptGenerationsLocked(slot).filter { $0.generation != generation }
      kept.append(KeptGeneration(generation: generation, reason: reason))
      try writeKept(kept.sorted { $0.generation > $1.generation }, slot: slot)
    }
  }

  /// Lets a kept generation be pruned again (the player discarded it); it goes at the next
  /// save when it is past the newest N.
  public func release(generation: Int, slot: SaveSlot) throws(SaveFileError) {
    try withSlotLock(slot, creating: false) { () throws(SaveFileError) in
      let kept = keptGenerationsLocked(slot)
      guard kept.contains(where: { $0.generation == generation }) else { return }
      try writeKept(kept.filter { $0.generation != generation }, slot: slot)
    }
  }

  /// The generations of `slot` kept out of pruning, newest first.
  public func keptGenerations(of slot: SaveSlot) -> [KeptGeneration] {
    keptGenerationsLocked(slot)
  }

  // MARK: Internal

  static let keptRecord = "kept"

  /// Reads the kept list; a missing or unreadable record keeps nothing extra (pruning then
  /// behaves as before), and `stasis slots` shows what it can.
  func keptGenerationsLocked(_ slot: SaveSlot) -> [KeptGeneration] {
    guard let bytes = try? readRecord(named: Self.keptRecord, slot: slot),
      let kept = try? JSONDecoder().decode([KeptGeneration].self, from: Data(bytes))
    else { return [] }
    return kept
  }

  private func writeKept(_ kept: [KeptGeneration], slot: SaveSlot) throws(SaveFileError) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let data: Data
    do {
      data = try encoder.encode(kept)
    } catch {
      throw SaveFileError(.io, "the kept list could not be encoded: \(error)", context: .init(file: folder(of: slot)))
    }
    try writeRecordLocked([UInt8](data), named: Self.keptRecord, slot: slot)
  }

  /// The atomic write, the slot's lock held: a temporary file named like a save's (so a
  /// killed writer's leftover is removed by the next save), flushed, renamed, folder flushed.
  private func writeRecordLocked(_ bytes: [UInt8], named name: String, slot: SaveSlot) throws(SaveFileError) {
    let folder = folder(of: slot)
    let final = "\(folder)/.\(name)"
    let temporary = "\(folder)/.\(name).tmp-\(getpid())-record"
    do {
      try? fileSystem.unlink(temporary)
      let descriptor = try fileSystem.createExclusive(temporary)
      do {
        var written = 0
        while written < bytes.count {
          let count = try bytes.withUnsafeBytes { raw throws(FileSystemError) in
            try fileSystem.write(descriptor, UnsafeRawBufferPointer(rebasing: raw[written...]), path: temporary)
          }
          guard count > 0 else { throw FileSystemError(.write, temporary, .ioError) }
          written += count
        }
        try fileSystem.fsync(descriptor, path: temporary)
        try fileSystem.close(descriptor, path: temporary)
      } catch {
        try? fileSystem.close(descriptor, path: temporary)
        throw error
      }
      try fileSystem.rename(temporary, final)
      try fileSystem.fsyncDirectory(folder)
    } catch {
      try? fileSystem.unlink(temporary)
      guard let error = error as? FileSystemError else {
        throw SaveFileError(.io, "record '\(name)' could not be written: \(error)", context: .init(file: final))
      }
      throw SaveFileError("record '\(name)' could not be written", cause: error)
    }
  }

  private func checkRecordName(_ name: String) throws(SaveFileError) {
    guard (1...32).contains(name.utf8.count), name != "lock",
      name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D })
    else {
      throw SaveFileError(
        .invalidSlotName, "'\(name)' is not a record name: 1-32 lowercase letters, digits and dashes")
    }
  }
}
