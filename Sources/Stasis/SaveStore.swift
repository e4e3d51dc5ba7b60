import Dispatch
import Foundation
import Logging
import Synchronization

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

/// A slot and its generations, newest first.
public struct SlotInfo: Sendable, Equatable {
  /// The slot's name.
  public var name: String
  /// Its generations, newest first.
  public var generations: [GenerationInfo]
}

/// A loaded save: the state, where it came from, and the newer generations that failed.
public struct LoadedSave<State: Sendable>: Sendable {
  /// The restored state.
  public var state: State
  /// The whole document, unknown sections included.
  public var document: SaveDocument
  /// The generation it came from.
  public var generation: Int
  /// Its file.
  public var path: String
  /// Newer generations that failed a check, newest first, with why.
  public var skipped: [(generation: Int, error: SaveFileError)]
  /// True when a newer generation failed and an older one was used.
  public var fellBack: Bool { !skipped.isEmpty }
}

/// Named save slots in a folder, each keeping its last N generations, written atomically
/// and durably, never interleaved, and read back only when every check passes.
///
/// ```swift
/// let store = SaveStore(directory: "Saves")
/// let codec = SaveCodec<GameState>(game: GameIdentity(name: "demo", schemaVersion: 2))
/// let handle = store.save(state, codec: codec, slot: "autosave", summary: summary)
/// handle.onCompletion { result in app.endBackgroundTask(task) }
/// let loaded = try store.load(codec, slot: "autosave")   // falls back past a corrupt newest
/// ```
///
/// On disk: `DIRECTORY/SLOT/GENERATION.stasis` (ten digits), a `.lock` file for `flock`,
/// and `.GENERATION.tmp-*` files that exist only while a save is being written.
public final class SaveStore: Sendable {
  /// The save folder.
  public let directory: String
  /// How many generations each slot keeps.
  public let generationsToKeep: Int
  /// How long a save waits for another writer of the same slot.
  public let lockTimeout: Duration
  let fileSystem: any FileSystem
  /// Which keys sign and verify saves, and whether unsigned ones are accepted.
  public let signing: SigningPolicy
  private let wallClock: @Sendable () -> Int64
  private let logger = Logger(label: "stasis.store")
  /// Encoding buffers kept between saves (at most two, each the size of the last save):
  /// a fresh multi-megabyte buffer costs more in page faults than the encoding itself.
  private let spareBuffers = Mutex<[[UInt8]]>([])

  /// Creates a store over `directory` (created on the first save).
  ///
  /// - Parameters:
  ///   - generationsToKeep: generations kept per slot, at least 1 (default 3).
  ///   - signing: which key signs every save, which keys verify, whether unsigned saves are
  ///     accepted (``SigningPolicy``; default `.none`, no signing). Saves are always signed with
  ///     the current key, so an accepted unsigned or retired-key save is re-signed on its next save.
  ///   - fileSystem: the file operations; tests pass a fault-injecting one.
  ///   - wallClock: milliseconds since the Unix epoch, for `createdAt`; injectable for tests.
  public init(
    directory: String,
    generationsToKeep: Int = 3,
    lockTimeout: Duration = .seconds(5),
    signing: SigningPolicy = .none,
    fileSystem: any FileSystem = PosixFileSystem(),
    wallClock: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
  ) {
    self.directory = directory
    self.generationsToKeep = max(1, generationsToKeep)
    self.lockTimeout = lockTimeout
    self.signing = signing
    self.fileSystem = fileSystem
    self.wallClock = wallClock
  }

  // MARK: Paths

  /// The folder of a slot.
  public func folder(of slot: String) -> String { "\(directory)/\(slot)" }

  /// The file of a generation.
  public func path(of slot: String, generation: Int) -> String {
    let digits = String(generation)
    return "\(folder(of: slot))/\(String(repeating: "0", count: max(0, 10 - digits.count)))\(digits).stasis"
  }

  /// The generation numbers of a slot, newest first. Other files are ignored.
  public func generations(of slot: String) throws(SaveFileError) -> [Int] {
    try SlotName.validate(slot)
    guard fileSystem.kind(of: folder(of: slot)) == .directory else { return [] }
    let names: [String]
    do {
      names = try fileSystem.contents(ofDirectory: folder(of: slot))
    } catch {
      throw SaveFileError(.io, error.description, context: .init(file: folder(of: slot)))
    }
    return names.compactMap(Self.generationNumber(fileName:)).sorted(by: >)
  }

  /// The generation number in a file name such as `0000000042.stasis`, or nil.
  public static func generationNumber(fileName name: String) -> Int? {
    guard name.hasSuffix(".stasis"), name.count == 17 else { return nil }
    let digits = name.prefix(10)
    guard digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
    return Int(digits)
  }

  // MARK: Saving

  /// Saves `state` to `slot` on a worker thread: encode, checksum, write a temporary file,
  /// flush it, rename it over the next generation, flush the folder, drop the oldest
  /// generations. Returns at once; the handle tells when the save is durable.
  public func save<State>(
    _ state: State, codec: SaveCodec<State>, slot: String, summary: SaveSummary, thumbnail: [UInt8]? = nil
  ) -> SaveHandle {
    let handle = SaveHandle(slot: slot)
    let createdAt = wallClock()
    DispatchQueue.global(qos: .userInitiated).async {
      let start = SystemClock().now()
      let result = Result { () throws(SaveFileError) -> (SaveDocument, Duration) in
        try SlotName.validate(slot)
        var summary = summary
        summary.slot = slot
        let raw = thumbnail.map { [(name: "thumbnail", bytes: $0)] } ?? []
        let document = try codec.document(for: state, summary: summary, createdAt: createdAt, rawSections: raw)
        return (document, SystemClock().now() - start)
      }
      switch result {
      case .failure(let error): handle.finish(.failure(error))
      case .success(let (document, encodeTime)):
        self.write(document, slot: slot, handle: handle, encodeTime: encodeTime)
      }
    }
    return handle
  }

  /// Saves a document as the slot's next generation on a worker: for tools that rewrite
  /// saves (recover, migrate), keeping every section.
  public func save(document: SaveDocument, slot: String) -> SaveHandle {
    let handle = SaveHandle(slot: slot)
    DispatchQueue.global(qos: .userInitiated).async {
      self.write(document, slot: slot, handle: handle, encodeTime: .zero)
    }
    return handle
  }

  /// Saves a whole file's bytes, exactly, as the slot's next generation on a worker: for
  /// `stasis recover`, so a signed save stays signed. Refuses bytes that fail any check.
  public func save(fileBytes bytes: [UInt8], slot: String) -> SaveHandle {
    let handle = SaveHandle(slot: slot)
    DispatchQueue.global(qos: .userInitiated).async {
      let start = SystemClock().now()
      do throws(SaveFileError) {
        try SlotName.validate(slot)
        let verification = bytes.withUnsafeBytes { SaveFileFormat.verify($0, signing: self.signing) }
        if let error = verification.error { throw error }
        let written = try self.writeDurably(bytes, slot: slot, handle: handle)
        handle.finish(
          .success(
            SaveReceipt(
              slot: slot, generation: written.generation, path: written.path, bytes: bytes.count,
              encodeDuration: .zero, writeDuration: SystemClock().now() - start)))
      } catch {
        handle.finish(.failure(error))
      }
    }
    return handle
  }

  private func write(_ document: SaveDocument, slot: String, handle: SaveHandle, encodeTime: Duration) {
    let clock = SystemClock()
    let start = clock.now()
    do throws(SaveFileError) {
      try SlotName.validate(slot)
      guard !handle.isCancelled else { throw SaveFileError(.cancelled, "the save was cancelled before it was written") }
      var bytes = spareBuffers.withLock { $0.popLast() } ?? []
      defer { spareBuffers.withLock { if $0.count < 2 { $0.append(bytes) } } }
      SaveFileFormat.encode(document, signingKey: signing.current, into: &bytes)
      let encoded = clock.now()
      let receipt = try writeDurably(bytes, slot: slot, handle: handle)
      handle.finish(
        .success(
          SaveReceipt(
            slot: slot, generation: receipt.generation, path: receipt.path, bytes: bytes.count,
            encodeDuration: encodeTime + (encoded - start), writeDuration: clock.now() - encoded)))
    } catch {
      if error.kind != .cancelled { logger.error("save of slot '\(slot)' failed: \(error)") }
      handle.finish(.failure(error))
    }
  }

  /// How a failed `fsync` reads in an I/O error's message (see `FileSystemError.description`).
  static let fsyncFailureMarker = "'fsync' failed"

  private func io(_ error: FileSystemError, _ what: String) -> SaveFileError {
    SaveFileError(.io, "\(what): \(error)", context: .init(file: error.path))
  }

  /// The durable write, under the slot's lock. A failed `fsync` fails the attempt — the
  /// data may be gone — and the write is redone once from the same bytes into a new file.
  private func writeDurably(_ bytes: [UInt8], slot: String, handle: SaveHandle) throws(SaveFileError)
    -> (generation: Int, path: String)
  {
    let folder = folder(of: slot)
    do {
      if try fileSystem.makeDirectory(directory) { try? fileSystem.fsyncDirectory(directory) }
      if try fileSystem.makeDirectory(folder) { try fileSystem.fsyncDirectory(directory) }
    } catch {
      throw io(error, "the save folder could not be created")
    }
    let lock: Int32
    do {
      lock = try fileSystem.lock("\(folder)/.lock", timeout: lockTimeout)
    } catch {
      if error.errno == .wouldBlock {
        throw SaveFileError(
          .locked, "another save of slot '\(slot)' held the lock for more than \(lockTimeout)",
          context: .init(file: folder))
      }
      throw io(error, "the slot could not be locked")
    }
    defer { fileSystem.unlock(lock) }
    removeStaleTemporaryFiles(slot: slot)

    var lastError: SaveFileError?
    for attempt in 1...2 {
      let generation = (try generations(of: slot).first ?? 0) + 1
      let final = path(of: slot, generation: generation)
      let temporary = "\(folder)/.\(generation).tmp-\(getpid())-\(attempt)"
      do throws(SaveFileError) {
        try writeFile(bytes, to: temporary, handle: handle)
        guard !handle.isCancelled else {
          try? fileSystem.unlink(temporary)
          throw SaveFileError(.cancelled, "the save was cancelled before it replaced the previous generation")
        }
        do {
          try fileSystem.rename(temporary, final)
          try fileSystem.fsyncDirectory(folder)
        } catch {
          try? fileSystem.unlink(temporary)
          throw io(error, "the new generation could not be put in place")
        }
        prune(slot: slot, keeping: generation)
        return (generation, final)
      } catch {
        // A failed fsync may have lost the data: redo from the snapshot's bytes, into a new file.
        guard error.kind == .io, error.message.contains(Self.fsyncFailureMarker) else { throw error }
        lastError = error
        logger.warning("fsync failed for slot '\(slot)'; writing the save again: \(error)")
      }
    }
    throw lastError!
  }

  /// Creates `path` exclusively, writes every byte (partial writes looped, cancellation
  /// checked between chunks), flushes and closes it. On failure the file is removed.
  private func writeFile(_ bytes: [UInt8], to path: String, handle: SaveHandle) throws(SaveFileError) {
    let descriptor: Int32
    do {
      descriptor = try fileSystem.createExclusive(path)
    } catch {
      throw io(error, "the temporary file could not be created")
    }
    var closed = false
    defer {
      if !closed { try? fileSystem.close(descriptor, path: path) }
    }
    do {
      let chunk = 1 << 20
      var written = 0
      while written < bytes.count {
        guard !handle.isCancelled else {
          try? fileSystem.unlink(path)
          throw SaveFileError(.cancelled, "the save was cancelled after \(written) of \(bytes.count) bytes")
        }
        let end = min(bytes.count, written + chunk)
        let count = try bytes.withUnsafeBytes { raw throws(FileSystemError) in
          try fileSystem.write(descriptor, UnsafeRawBufferPointer(rebasing: raw[written..<end]), path: path)
        }
        guard count > 0 else { throw FileSystemError("write", path, .ioError) }
        written += count
      }
      try fileSystem.fsync(descriptor, path: path)
      closed = true
      try fileSystem.close(descriptor, path: path)
    } catch let error as FileSystemError {
      try? fileSystem.unlink(path)
      throw io(error, "the save could not be written")
    } catch let error as SaveFileError {
      throw error
    } catch {
      try? fileSystem.unlink(path)
      throw SaveFileError(.io, "\(error)", context: .init(file: path))
    }
  }

  /// Removes temporary files a killed save left behind. Only the lock's holder writes them,
  /// so under the lock every one is stale.
  private func removeStaleTemporaryFiles(slot: String) {
    guard let names = try? fileSystem.contents(ofDirectory: folder(of: slot)) else { return }
    for name in names where name.hasPrefix(".") && name.contains(".tmp-") {
      try? fileSystem.unlink("\(folder(of: slot))/\(name)")
    }
  }

  /// Removes generations older than the newest `generationsToKeep`.
  private func prune(slot: String, keeping newest: Int) {
    guard let all = try? generations(of: slot) else { return }
    for generation in all.dropFirst(generationsToKeep) {
      try? fileSystem.unlink(path(of: slot, generation: generation))
    }
    if all.count > generationsToKeep { try? fileSystem.fsyncDirectory(folder(of: slot)) }
  }

  // MARK: Loading

  /// Reads and verifies one file: every checksum, the trailer and the signature (under `signing`).
  public func readDocument(at path: String) throws(SaveFileError) -> SaveDocument {
    let bytes = try readBytes(at: path)
    return try SaveFileFormat.decode(bytes, path: path, signing: signing)
  }

  /// The bytes of a save file, refusing links, folders and files over the size limit.
  public func readBytes(at path: String) throws(SaveFileError) -> [UInt8] {
    switch fileSystem.kind(of: path) {
    case .missing: throw SaveFileError(.notFound, "no such file", context: .init(file: path))
    case .directory: throw SaveFileError(.io, "is a folder, not a save file", context: .init(file: path))
    case .other: throw SaveFileError(.io, "is not a regular file (a link?); refused", context: .init(file: path))
    case .file(let size):
      guard size <= FormatLimits.maxFileSize else {
        throw SaveFileError(
          .limitExceeded, "\(size) bytes; the limit is \(FormatLimits.maxFileSize)", context: .init(file: path))
      }
    }
    do {
      return try fileSystem.read(path, limit: FormatLimits.maxFileSize)
    } catch {
      throw io(error, "the save could not be read")
    }
  }

  /// Loads the newest generation of `slot` that passes every check and decodes; says which
  /// newer ones failed and why. Never modifies a file.
  public func load<State>(_ codec: SaveCodec<State>, slot: String) throws(SaveFileError) -> LoadedSave<State> {
    let all = try generations(of: slot)
    guard !all.isEmpty else {
      throw SaveFileError(.notFound, "slot '\(slot)' has no saves", context: .init(file: folder(of: slot)))
    }
    var skipped: [(generation: Int, error: SaveFileError)] = []
    for generation in all {
      let path = path(of: slot, generation: generation)
      do {
        let document = try readDocument(at: path)
        let state = try codec.state(from: document, path: path)
        if !skipped.isEmpty {
          let reasons = skipped.map { "generation \($0.generation): \($0.error)" }.joined(separator: "; ")
          logger.warning("slot '\(slot)': loaded generation \(generation) instead; \(reasons)")
        }
        return LoadedSave(state: state, document: document, generation: generation, path: path, skipped: skipped)
      } catch {
        skipped.append((generation, error))
      }
    }
    var newest = skipped[0].error
    newest.message += " (and \(skipped.count - 1) older generation(s) failed too)"
    throw newest
  }

  // MARK: Listing

  /// Every slot in the folder with its generations, from headers only. Never modifies a file.
  public func listSlots() throws(SaveFileError) -> [SlotInfo] {
    guard fileSystem.kind(of: directory) == .directory else { return [] }
    let names: [String]
    do {
      names = try fileSystem.contents(ofDirectory: directory)
    } catch {
      throw io(error, "the save folder could not be listed")
    }
    return names.compactMap { name -> SlotInfo? in
      guard (try? SlotName.validate(name)) != nil, fileSystem.kind(of: folder(of: name)) == .directory else {
        return nil
      }
      return SlotInfo(name: name, generations: (try? listGenerations(of: name)) ?? [])
    }
  }

  /// A slot's generations, newest first, from headers only.
  public func listGenerations(of slot: String) throws(SaveFileError) -> [GenerationInfo] {
    try generations(of: slot).map { generation in
      let path = path(of: slot, generation: generation)
      var size = 0
      if case .file(let bytes) = fileSystem.kind(of: path) { size = bytes }
      do {
        let prefix = try fileSystem.read(path, limit: FormatLimits.maxHeaderSize)
        let header = try prefix.withUnsafeBytes { raw in
          Result { () throws(SaveFileError) in try SaveFileFormat.readHeader(raw, path: path) }
        }.get()
        return GenerationInfo(generation: generation, path: path, size: size, header: header, error: nil)
      } catch let error as SaveFileError {
        return GenerationInfo(generation: generation, path: path, size: size, header: nil, error: error)
      } catch {
        return GenerationInfo(
          generation: generation, path: path, size: size, header: nil,
          error: SaveFileError(.io, "\(error)", context: .init(file: path)))
      }
    }
  }
}
