import Dispatch
import Foundation
import Logging
import Synchronization

/// Named save slots in a folder, each keeping its last N generations, written atomically
/// and durably, never interleaved, and read back only when every check passes.
///
/// ```swift
/// let store = SaveStore(directory: "Saves")
/// let codec = SaveCodec<GameState>(game: GameIdentity(name: "demo", schemaVersion: 2))
/// let handle = store.save(state, codec: codec, slot: "autosave", summary: summary)
/// handle.onCompletion { result in print(result) }
/// let loaded = try store.load(codec: codec, slot: "autosave")   // falls back past a corrupt newest
/// ```
///
/// On disk: `DIRECTORY/SLOT/GENERATION.stasis` (ten digits), a `.lock` file for `flock`,
/// and `.GENERATION.tmp-*` files that exist only while a save is being written.
///
/// A generation this build cannot read (written by a newer schema or format, or signed with
/// a key it does not have) is never deleted, never written over and never silently skipped:
/// loading stops at it unless told ``LoadFallback/pastUnreadable``, saving on top of it is
/// refused unless told ``UnreadableNewest/saveAlongside``, and pruning keeps it.
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
  package let wallClock: @Sendable () -> Int64
  /// The device name written into saves whose summary names none (``SaveSummary/device``):
  /// the machine's host name unless given.
  public let device: String
  /// The store logs only what it handles itself (a redone fsync, a kept unreadable
  /// generation); failures it returns are the caller's to report, once.
  let logger: Logger
  /// Encoding buffers kept between saves (at most two, each the size of the last save):
  /// a fresh multi-megabyte buffer costs more in page faults than the encoding itself.
  let spareBuffers = Mutex<[[UInt8]]>([])
  /// What this store knows of each slot's generation files, the file a load handed over among
  /// them (``FileMemory``, one ``SlotMemory`` per slot), in one place behind one lock.
  let files = Mutex(FileMemory())
  /// One writer per slot: saves in snapshot order, at most one in flight and one waiting.
  let writers: SlotWriters
  /// What this store counted: each file decoded (by path) and each generation read back after a
  /// sync wrote it (`StasisTesting`'s `WorkCounters` reads them).
  package let counts = OperationCounts()
  /// The rules this store writes by (``StoreRules``): the defaults, except in the simulation's
  /// build (`StoreRules.swift`, this module's one seam).
  let rules: StoreRules

  /// Creates a store over `directory` (created on the first save).
  ///
  /// - Parameters:
  ///   - directory: the save folder (`SaveStore.defaultDirectory(game:)` is the platform's).
  ///   - generationsToKeep: generations kept per slot, at least 1 (default 3).
  ///   - lockTimeout: how long a save waits for another writer of the same slot.
  ///   - signing: which key signs every save, which keys verify, whether unsigned saves are
  ///     accepted (``SigningPolicy``; default `.none`, no signing). Saves are always signed with
  ///     the current key, so an accepted unsigned or retired-key save is re-signed on its next save.
  ///   - fileSystem: the file operations; tests pass a fault-injecting one.
  ///   - wallClock: the clock saves are stamped by (`createdAt`): the system's, or a test's
  ///     `ManualWallClock` (the same one its ``TimerCenter`` is given).
  ///   - device: the device name saves record (default: the host name).
  ///   - logger: where the store's own notes go (swift-log).
  public convenience init(
    directory: String,
    generationsToKeep: Int = 3,
    lockTimeout: Duration = .seconds(5),
    signing: SigningPolicy = .none,
    fileSystem: any FileSystem = PosixFileSystem(),
    wallClock: any WallClock = SystemWallClock(),
    device: String? = nil,
    logger: Logger = Logger(label: "stasis.store")
  ) {
    self.init(
      directory: directory, generationsToKeep: generationsToKeep, lockTimeout: lockTimeout, signing: signing,
      fileSystem: fileSystem, wallClock: { wallClock.unixMilliseconds() }, device: device, logger: logger,
      rules: StoreRules())
  }

  /// A store stamped by a function of milliseconds since the Unix epoch.
  @available(
    *, deprecated,
    message: "pass a WallClock: SystemWallClock() (the default), or a test's ManualWallClock, the one its timers use"
  )
  public convenience init(
    directory: String,
    generationsToKeep: Int = 3,
    lockTimeout: Duration = .seconds(5),
    signing: SigningPolicy = .none,
    fileSystem: any FileSystem = PosixFileSystem(),
    wallClock: @escaping @Sendable () -> Int64,
    device: String? = nil,
    logger: Logger = Logger(label: "stasis.store")
  ) {
    self.init(
      directory: directory, generationsToKeep: generationsToKeep, lockTimeout: lockTimeout, signing: signing,
      fileSystem: fileSystem, wallClock: wallClock, device: device, logger: logger, rules: StoreRules())
  }

  init(
    directory: String,
    generationsToKeep: Int,
    lockTimeout: Duration,
    signing: SigningPolicy,
    fileSystem: any FileSystem,
    wallClock: @escaping @Sendable () -> Int64,
    device: String?,
    logger: Logger,
    rules: StoreRules
  ) {
    self.rules = rules
    writers = SlotWriters(inSnapshotOrder: rules.writesInSnapshotOrder)
    self.device = device ?? ProcessInfo.processInfo.hostName
    self.directory = directory
    self.generationsToKeep = max(1, generationsToKeep)
    self.lockTimeout = lockTimeout
    self.signing = signing
    self.fileSystem = fileSystem
    self.wallClock = wallClock
    self.logger = logger
  }

  // MARK: Paths

  /// The folder of a slot.
  public func folder(of slot: SaveSlot) -> String { "\(directory)/\(slot.name)" }

  /// The file of a generation.
  public func path(of slot: SaveSlot, generation: Int) -> String {
    let digits = String(generation)
    return "\(folder(of: slot))/\(String(repeating: "0", count: max(0, 10 - digits.count)))\(digits).stasis"
  }

  /// The generation numbers of a slot, newest first. Other files are ignored.
  public func generations(of slot: SaveSlot) throws(SaveFileError) -> [Int] {
    try slot.validated()
    guard fileSystem.kind(of: folder(of: slot)) == .directory else { return [] }
    // Read before the listing: a file the listing shows was either still being pruned then
    // (and is in the set) or is not being pruned at all. Read after, a pruning that ended
    // in between would leave its file listed and out of the set.
    let pruned = files.withLock { $0[folder: folder(of: slot)].beingPruned }
    let names: [String]
    do {
      names = try fileSystem.contents(ofDirectory: folder(of: slot))
    } catch {
      throw SaveFileError("the slot's folder could not be listed", cause: error)
    }
    let generations = names.compactMap(Self.generationNumber(fileName:)).sorted(by: >)
    guard !pruned.isEmpty else { return generations }
    return generations.filter { !pruned.contains(path(of: slot, generation: $0)) }
  }

  /// The generation number in a file name such as `0000000042.stasis`, or nil.
  /// The slot's newest generation, nil when it has none or cannot be listed.
  package func newestGeneration(of slot: SaveSlot) -> Int? { (try? generations(of: slot))?.first }

  @_spi(Plumbing) public static func generationNumber(fileName name: String) -> Int? {
    // On the UTF-8 bytes: every save lists its folder, and counting characters and asking
    // Unicode whether each is a number cost a microsecond a name.
    let utf8 = name.utf8
    guard utf8.count == 17, name.hasSuffix(".stasis") else { return nil }
    var number = 0
    for byte in utf8.prefix(10) {
      guard (0x30...0x39).contains(byte) else { return nil }
      number = number * 10 + Int(byte - 0x30)
    }
    return number
  }

  // MARK: Saving

  /// Saves `state` to `slot` on a worker thread: encode, checksum, write a temporary file,
  /// flush it, rename it over the next generation, flush the folder, drop the oldest
  /// generations. Returns at once; the handle tells when the save is durable: ``SaveHandle/waitForResult()``
  /// returns before the oldest generations are dropped, and the handle's
  /// ``SaveHandle/onCompletion(_:)`` callbacks run after.
  ///
  /// When the slot's newest generation is one this build cannot read, the save is refused
  /// with ``SaveFileError/Kind/newerSaveInSlot`` unless `unreadableNewest` is
  /// ``UnreadableNewest/saveAlongside``.
  public func save<State>(
    _ state: State, codec: SaveCodec<State>, slot: SaveSlot, summary: SaveSummary = SaveSummary(),
    thumbnail: [UInt8]? = nil,
    unreadableNewest: UnreadableNewest = .refuse
  ) -> SaveHandle {
    var draw: (@Sendable (State) -> [UInt8]?)?
    if let thumbnail { draw = { _ in thumbnail } }
    return save(
      state, codec: codec, slot: slot, summary: summary, drawThumbnail: draw, unreadableNewest: unreadableNewest)
  }

  /// Saves `state` like ``save(_:codec:slot:summary:thumbnail:unreadableNewest:)``, drawing
  /// the thumbnail from the state on the worker: the main thread pays only for the snapshot.
  ///
  /// `rawSections` are kept as they are (a `load-report`, a replay, a game's own blob).
  public func save<State>(
    _ state: State, codec: SaveCodec<State>, slot: SaveSlot, summary: SaveSummary = SaveSummary(),
    drawThumbnail: (@Sendable (State) -> [UInt8]?)?, rawSections: [(name: String, bytes: [UInt8])] = [],
    unreadableNewest: UnreadableNewest = .refuse
  ) -> SaveHandle {
    save(
      state, codec: codec, slot: slot, summary: summary, drawThumbnail: drawThumbnail, rawSections: rawSections,
      unreadableNewest: unreadableNewest, keepingWrittenFile: false)
  }

  /// As ``save(_:codec:slot:summary:drawThumbnail:rawSections:unreadableNewest:)``; with
  /// `keepingWrittenFile` (a coordinator whose slot syncs), the handle keeps the file it writes
  /// for the upload from before the worker can start (``SaveHandle/keepWrittenFile()``), so the
  /// file is encoded in one piece and the upload sends those bytes: the save copies them once.
  package func save<State>(
    _ state: State, codec: SaveCodec<State>, slot: SaveSlot, summary: SaveSummary = SaveSummary(),
    drawThumbnail: (@Sendable (State) -> [UInt8]?)?, rawSections: [(name: String, bytes: [UInt8])] = [],
    unreadableNewest: UnreadableNewest = .refuse, keepingWrittenFile: Bool
  ) -> SaveHandle {
    let handle = SaveHandle(slot: slot, sequence: writers.takeSequence())
    if keepingWrittenFile { handle.keepWrittenFile() }
    let createdAt = wallClock()
    let snapshot = HandedOver(state)
    let job = SlotWriters.Job(handle: handle, isSnapshot: true) {
      let start = SystemClock().now()
      let result = Result { () throws(SaveFileError) -> (SaveDocument, Duration) in
        // Taken out of the job: once its document is encoded and written, nothing holds it.
        guard !handle.isCancelled, let state = snapshot.take() else {
          throw SaveFileError(.cancelled, "the save was cancelled before it was written")
        }
        var summary = summary
        summary.slot = slot.name
        if summary.device.isEmpty { summary.device = self.device }
        let raw = (drawThumbnail.flatMap { $0(state) }.map { [(name: "thumbnail", bytes: $0)] } ?? []) + rawSections
        let document = try codec.document(for: state, summary: summary, createdAt: createdAt, rawSections: raw)
        return (document, SystemClock().now() - start)
      }
      switch result {
      case .failure(let error): handle.finish(.failure(error))
      case .success(let (document, encodeTime)):
        self.write(
          document, slot: slot, handle: handle, encodeTime: encodeTime, unreadableNewest: unreadableNewest,
          isSnapshot: true)
      }
    }
    writers.enqueue(job, slot: slot.name)
    return handle
  }

  /// How many of the slot's saves are held in memory right now, written or waiting: never
  /// more than two snapshots, whatever the save rate (tests and benchmarks read it).
  public func heldSnapshots(of slot: SaveSlot) -> Int { writers.heldSnapshots(slot: slot.name) }

  /// Saves a document as the slot's next generation on a worker: for tools that rewrite
  /// saves (recover, migrate), keeping every section.
  public func save(document: SaveDocument, slot: SaveSlot, unreadableNewest: UnreadableNewest = .refuse) -> SaveHandle {
    let handle = SaveHandle(slot: slot, sequence: writers.takeSequence())
    let job = SlotWriters.Job(handle: handle, isSnapshot: false) {
      do throws(SaveFileError) {
        try document.summary.checkSize()
        self.write(
          document, slot: slot, handle: handle, encodeTime: .zero, unreadableNewest: unreadableNewest,
          isSnapshot: false)
      } catch {
        handle.finish(.failure(error))
      }
    }
    writers.enqueue(job, slot: slot.name)
    return handle
  }

  /// Saves a whole file's bytes, exactly, as the slot's next generation on a worker: for
  /// `stasis recover`, so a signed save stays signed, and for a cloud download. Refuses bytes
  /// that fail any check.
  ///
  /// With `ifNewestIs`, the write happens only when the slot's newest generation is still that
  /// one (0: the slot has none), checked under the slot's lock; otherwise it is refused with
  /// ``SaveFileError/Kind/slotChanged``: a sync never writes over a save it has not seen.
  /// Bytes whose sections the newest generation already holds write nothing (`.unchanged`,
  /// naming that generation).
  ///
  /// `decoded` is the file's document and whether it is signed, when the caller decoded and
  /// checked it already (a download it verified, a merge it has just encoded): the file is then
  /// not decoded again.
  package func save(
    fileBytes bytes: [UInt8], slot: SaveSlot, unreadableNewest: UnreadableNewest = .refuse, ifNewestIs: Int? = nil,
    decoded: (document: SaveDocument, signed: Bool)? = nil
  ) -> SaveHandle {
    let handle = SaveHandle(slot: slot, sequence: writers.takeSequence())
    let job = SlotWriters.Job(handle: handle, isSnapshot: false) {
      let start = SystemClock().now()
      do throws(SaveFileError) {
        // Decoded, not only verified: its sections are what the slot's newest holds once it is
        // written, so the game's next save of the same state writes nothing.
        let (document, signature): (SaveDocument, SignatureStatus)
        if let decoded {
          (document, signature) = (decoded.document, decoded.signed ? .valid(byCurrentKey: true) : .unsigned)
        } else {
          self.counts.count(OperationCounts.decode("\(slot) (incoming)"))
          (document, signature) = try SaveFileFormat.decodeWithSignature(bytes, signing: self.signing)
        }
        // A file whose state the slot's newest already holds is not written again.
        var receipt: SaveReceipt?
        var request = DurableWrite(
          SaveFileBytes(bytes), slot: slot, writer: document.game, unreadableNewest: unreadableNewest)
        request.ifNewestIs = ifNewestIs
        request.skipsSameState = true
        request.isSigned = signature != .unsigned
        try self.writeDurably(request, handle: handle) { generation, path, unchanged in
          receipt = SaveReceipt(
            slot: slot, generation: generation, path: path, bytes: unchanged ? 0 : bytes.count,
            encodeDuration: .zero, writeDuration: SystemClock().now() - start,
            outcome: unchanged ? .unchanged : .written)
          handle.settle(.success(receipt!))
        }
        handle.finish(.success(receipt!))
      } catch {
        handle.finish(.failure(error))
      }
    }
    writers.enqueue(job, slot: slot.name)
    return handle
  }

  // MARK: Loading

  /// Reads and verifies one file: every checksum, the trailer and the signature (under
  /// `signing`). An unsigned file in a signed slot (``isSigned(_:)``) is refused as
  /// ``SaveFileError/Kind/unsigned``, whatever the policy: a stripped signature never loads.
  public func readDocument(at path: String) throws(SaveFileError) -> SaveDocument {
    try readSignedDocument(at: path).document
  }

  /// ``readDocument(at:)``, and what became of the signature.
  func readSignedDocument(at path: String) throws(SaveFileError) -> (document: SaveDocument, signature: SignatureStatus)
  {
    try verified(try readBytes(at: path), path: path)
  }

  /// One generation's bytes and document, checked as a load checks them: every checksum, the
  /// signature under the store's policy, and an unsigned file in a signed slot refused. For the
  /// cloud sync, which must never upload what the game would refuse to load.
  package func verifiedFile(slot: SaveSlot, generation: Int) throws(SaveFileError) -> (
    bytes: [UInt8], document: SaveDocument
  ) {
    let path = path(of: slot, generation: generation)
    // What a load just read and checked, when the file is still that size: neither read nor
    // decoded again. Generations are never rewritten in place, so the size tells the file a
    // load read from one a crash and a new write put under the same number (as `knownGood`).
    if case .file(let size) = fileSystem.kind(of: path),
      let kept = files.withLock({ memory -> (bytes: [UInt8], document: SaveDocument)? in
        guard case .held(path, let bytes, let document)? = memory[slotOf: path].handOver else { return nil }
        memory[slotOf: path].handOver = nil
        return bytes.count == size ? (bytes, document) : nil
      })
    {
      return kept
    }
    let bytes = try readBytes(at: path)
    return (bytes, try verified(bytes, path: path).document)
  }

  /// One generation's bytes as they are on disk, unchecked: what the cloud sync makes a delta
  /// from (the delta's own checksum names the bytes it was made from).
  package func fileBytes(slot: SaveSlot, generation: Int) throws(SaveFileError) -> [UInt8] {
    try readBytes(at: path(of: slot, generation: generation))
  }

  /// Keeps the next file a load of `slot` reads and checks (bytes and document) for one
  /// ``verifiedFile(slot:generation:)`` of it: the coordinator asks before it restores a slot
  /// that syncs, and the catch-up after the restore takes it instead of decoding the file again.
  /// A later hand-over replaces one not taken, so at most one file is held.
  package func handOverNextRead(of slot: SaveSlot) {
    files.withLock { $0.handOverNextRead(in: folder(of: slot)) }
  }

  /// Lets go of a file kept by ``handOverNextRead(of:)`` that no one took.
  package func dropHandedOver() {
    files.withLock { $0.dropHandOvers() }
  }

  /// A file's bytes decoded under the store's signing policy; unsigned in a signed slot refused.
  func verified(_ bytes: [UInt8], path: String) throws(SaveFileError) -> (
    document: SaveDocument, signature: SignatureStatus
  ) {
    counts.count(OperationCounts.decode(path))
    let read = try SaveFileFormat.decodeWithSignature(bytes, path: path, signing: signing)
    if read.signature == .unsigned, refusesUnsigned(file: path) { throw unsignedInSignedSlot(path) }
    files.withLock { memory in
      guard case .wanted? = memory[slotOf: path].handOver else { return }
      memory[slotOf: path].handOver = .held(path: path, bytes: bytes, document: read.document)
    }
    return read
  }

  /// The bytes of a save file, refusing links, folders and files over the size limit.
  public func readBytes(at path: String) throws(SaveFileError) -> [UInt8] {
    switch fileSystem.kind(of: path) {
    case .missing: throw SaveFileError(.notFound, "no such file", context: .init(file: path))
    case .directory: throw SaveFileError(.notARegularFile, "is a folder, not a save file", context: .init(file: path))
    case .other:
      throw SaveFileError(.notARegularFile, "is not a regular file (a link?); refused", context: .init(file: path))
    case .file(let size):
      guard size <= FormatLimits.maxFileSize else {
        throw SaveFileError(
          .limitExceeded, "\(size) bytes; the limit is \(FormatLimits.maxFileSize)", context: .init(file: path))
      }
    }
    counts.count(OperationCounts.read(path))
    do {
      return try fileSystem.read(path, limit: FormatLimits.maxFileSize)
    } catch {
      throw SaveFileError("the save could not be read", cause: error)
    }
  }

  /// Loads the newest generation of `slot` that passes every check, decodes and validates;
  /// says which newer ones were passed over and why. Never modifies a file.
  ///
  /// A damaged generation (a checksum, a truncation, an invalid state) is passed over. A
  /// generation this build cannot read stops the load with its error (``SaveFileError/Kind/newerSchema``,
  /// ``SaveFileError/Kind/newerFormat``, ...) unless `fallback` is ``LoadFallback/pastUnreadable``.
  public func load<State>(codec: SaveCodec<State>, slot: SaveSlot, fallback: LoadFallback = .pastDamaged)
    throws(SaveFileError) -> LoadedSave<State>
  {
    let all = try generations(of: slot)
    guard !all.isEmpty else {
      throw SaveFileError(.notFound, "slot '\(slot)' has no saves", context: .init(file: folder(of: slot)))
    }
    var skipped: [(generation: Int, error: SaveFileError)] = []
    for generation in all {
      let path = path(of: slot, generation: generation)
      do throws(SaveFileError) {
        let bytes = try readBytes(at: path)
        let (document, signature) = try verified(bytes, path: path)
        let loaded = try decode(document, codec: codec, slot: slot, generation: generation)
        remember(path, game: document.game)
        if generation == all[0] {
          // The table, not the sections: the decoded state shares the file's bytes, which the
          // writer would otherwise hold after the game let them go.
          writers.setNewest(
            Self.sectionTable(bytes).map {
              .init(
                generation: generation, path: path, size: bytes.count, game: document.game, sections: $0,
                signedWithCurrentKey: signature == .valid(byCurrentKey: true))
            }, slot: slot.name)
        }
        return LoadedSave(
          state: loaded.state, document: document, generation: generation, path: path, report: loaded.report,
          skipped: skipped)
      } catch {
        if error.isUnreadableByThisBuild, fallback == .pastDamaged {
          throw unreadableNewest(error, generation: generation, slot: slot, codec: codec)
        }
        skipped.append((generation, error))
      }
    }
    var newest = skipped[0].error
    if skipped.count > 1 {
      newest.message += "; the \(skipped.count - 1) older generation\(skipped.count > 2 ? "s" : "") failed too"
    }
    if newest.suggestion == nil {
      newest.suggestion =
        "no generation of slot '\(slot)' loads: `stasis slots \(directory)` shows what is wrong with each"
    }
    throw newest
  }

  /// The error for a generation this build cannot read that stopped a load: what to do,
  /// naming the older generation that would load if asked.
  private func unreadableNewest<State>(
    _ error: SaveFileError, generation: Int, slot: SaveSlot, codec: SaveCodec<State>
  ) -> SaveFileError {
    var error = error
    error.message = "generation \(generation): \(error.message)"
    let older = (try? generations(of: slot))?.first { candidate in
      guard candidate < generation, let document = try? readDocument(at: path(of: slot, generation: candidate)) else {
        return false
      }
      return (try? codec.load(from: document)) != nil
    }
    let update: String
    switch error.kind {
    case .unsigned:
      update =
        "the save was never signed and this build's signing policy requires a signature: a policy that accepts "
        + "unsigned saves (`acceptingUnsigned: true`) loads it; it is kept"
    case .signatureMismatch: update = "use the build that signed it to load it; it is kept"
    case .typeMismatch, .missingField, .droppedField, .migrationFailed:
      // A build of this schema wrote a field this one cannot decode: a migration is missing
      // (or failed), which the game's developer fixes; updating the game does not.
      update =
        (error.suggestion.map { "\($0); " } ?? "")
        + "a migration is missing or failed: the game's developer adds or fixes it (`SchemaMigrations.register(from:)`; "
        + "a removed field is declared in `removedSaveFields`), and a build with it loads the save; it is kept"
    default: update = "update the game to load it; it is kept"
    }
    error.suggestion =
      update
      + (older.map { "; to play on from generation \($0) instead, `stasis recover \(slot) --generation \($0)`" } ?? "")
    return error
  }

  /// The state in a generation's verified document. When every byte verified but this build
  /// cannot make a state of it (a field it cannot decode, a missing migration, a failed
  /// validation), the store notes it before the error is thrown: it changes no file (the next
  /// write keeps it, durably, before anything is written on top or pruned).
  func decode<State>(_ document: SaveDocument, codec: SaveCodec<State>, slot: SaveSlot, generation: Int)
    throws(SaveFileError) -> (state: State, report: LoadReport)
  {
    try decode(VerifiedSave(document: document, signed: false), codec: codec, slot: slot, generation: generation)
  }

  /// As ``decode(_:codec:slot:generation:)`` for a file verified elsewhere: the state its
  /// verification decoded, when there is one of this `State`, is taken as it is (not decoded
  /// again); the generation is noted as one this build reads either way.
  func decode<State>(_ verified: VerifiedSave, codec: SaveCodec<State>, slot: SaveSlot, generation: Int)
    throws(SaveFileError) -> (state: State, report: LoadReport)
  {
    let path = path(of: slot, generation: generation)
    if let decoded = verified.decoded(as: State.self) {
      files.withLock { _ = $0[slotOf: path].readBack.insert(path) }
      return (decoded.state, decoded.report)
    }
    do {
      counts.count(OperationCounts.stateDecode(path))
      let loaded = try codec.load(from: verified.document, path: path)
      files.withLock { _ = $0[slotOf: path].readBack.insert(path) }
      return loaded
    } catch {
      switch error.kind {
      case .typeMismatch, .missingField, .droppedField, .migrationFailed, .invalidState:
        if case .file(let size) = fileSystem.kind(of: path) {
          files.withLock { $0[slotOf: path].undecodable[path] = (size, error) }
        }
      default: break
      }
      throw error
    }
  }

  // MARK: Listing

  /// Every slot in the folder with its generations, from headers only. Never modifies a file.
  public func listSlots() throws(SaveFileError) -> [SlotInfo] {
    guard fileSystem.kind(of: directory) == .directory else { return [] }
    let names: [String]
    do {
      names = try fileSystem.contents(ofDirectory: directory)
    } catch {
      throw SaveFileError("the save folder could not be listed", cause: error)
    }
    return names.compactMap { name -> SlotInfo? in
      guard let slot = try? SaveSlot(name), fileSystem.kind(of: folder(of: slot)) == .directory else { return nil }
      return SlotInfo(slot: slot, generations: (try? listGenerations(of: slot)) ?? [], kept: keptGenerations(of: slot))
    }
  }

  /// A slot's generations, newest first, from headers only.
  public func listGenerations(of slot: SaveSlot) throws(SaveFileError) -> [GenerationInfo] {
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
      } catch let error as FileSystemError {
        return GenerationInfo(
          generation: generation, path: path, size: size, header: nil,
          error: SaveFileError("the header could not be read", cause: error))
      } catch {
        return GenerationInfo(
          generation: generation, path: path, size: size, header: nil,
          error: SaveFileError(.io, "\(error)", context: .init(file: path)))
      }
    }
  }
}

/// A snapshot handed to the slot's writer, which takes it out once: a job then holds the state
/// only while it encodes it, and a state a game has moved on from is freed as soon as its file
/// is written, not when the job that carried it is.
final class HandedOver<State: Sendable>: Sendable {
  private let state: Mutex<State?>

  init(_ state: State) { self.state = Mutex(state) }

  /// The state, the first time; nil after.
  func take() -> State? { state.withLock { $0.take() } }
}

/// What a store knows of its slots' generation files, slot by slot: one ``SlotMemory`` per
/// slot folder, all behind one lock, so what is known of a slot changes in one step (a removed
/// generation is forgotten at once, never left known in one table and gone from another, and a
/// deleted or renamed slot's memory goes whole).
struct FileMemory {
  /// Each slot's memory, by the slot's folder. Only ever looked up by folder, never iterated
  /// where the order could reach a file (``handOverNextRead(in:)`` clears every slot's).
  private var slots: [String: SlotMemory] = [:]

  /// The memory of the slot `path` is a file of (its folder's).
  subscript(slotOf path: String) -> SlotMemory {
    get { slots[SaveStore.folder(ofFile: path)] ?? SlotMemory() }
    set { self[folder: SaveStore.folder(ofFile: path)] = newValue }
  }

  /// The memory of the slot whose folder is `folder`.
  subscript(folder folder: String) -> SlotMemory {
    get { slots[folder] ?? SlotMemory() }
    set { slots[folder] = newValue.isEmpty ? nil : newValue }
  }

  /// Forgets all that is known of `path`: its generation was removed.
  mutating func forget(_ path: String) { self[slotOf: path].forget(path) }

  /// Forgets a whole slot: its folder was deleted or renamed.
  mutating func forgetSlot(folder: String) { slots[folder] = nil }

  /// Wants the next file a load reads in `folder` kept for one taker, and lets go of any other
  /// slot's: at most one file is held.
  mutating func handOverNextRead(in folder: String) {
    dropHandOvers()
    self[folder: folder].handOver = .wanted
  }

  /// Lets go of every hand-over, wanted or held.
  mutating func dropHandOvers() {
    for key in slots.keys where slots[key]?.handOver != nil { self[folder: key].handOver = nil }
  }
}

/// What a store knows of one slot's generation files (each by its path).
struct SlotMemory {
  /// Files known to pass every check (path → size and writer): the ones this store wrote or
  /// verified. Generations are never rewritten in place, so a verdict holds while the size
  /// does; whether a build can read one still depends on the writer's schema.
  var knownGood: [String: (size: Int, game: GameIdentity)] = [:]
  /// Unreadable generations pruning has kept and logged: each is logged once per store.
  var loggedKept: Set<String> = []
  /// Whole generations a load of this store could not make a state of (path → size and why):
  /// a field it cannot decode, a missing migration, a failed validation. A load only notes
  /// them here; the next write to the slot puts them on its kept list, under its lock, before
  /// it writes (``SaveStore/keepWhatMustBeKept(_:slot:writer:)``).
  var undecodable: [String: (size: Int, error: SaveFileError)] = [:]
  /// Generations a load of this store made a state of (their paths): this build reads them. A
  /// kept entry that says a build could not read one (``KeptGeneration/saysUnreadable``) is
  /// stale from then on, and the coordinator's step after the load, or the next write to the
  /// slot, takes it off the kept list under the slot's lock (a load itself writes nothing).
  var readBack: Set<String> = []
  /// Generations a write has pruned but not yet removed (their paths): its save was settled
  /// first, so the caller did not wait for the unlinks. This store's listings leave them out,
  /// so a save followed by a listing never sees one generation too many.
  var beingPruned: Set<String> = []
  /// The file a load of this slot read, kept for one taker (``SaveStore/handOverNextRead(of:)``):
  /// wanted until the load reads one, then held until ``SaveStore/verifiedFile(slot:generation:)``
  /// takes it.
  var handOver: HandOver?

  /// A file kept for one taker, or the wish for the next one.
  enum HandOver {
    /// The next file a load of the slot reads and checks is to be kept.
    case wanted
    /// The file a load read and checked: its bytes and document.
    case held(path: String, bytes: [UInt8], document: SaveDocument)
  }

  /// Whether nothing at all is known of the slot.
  var isEmpty: Bool {
    knownGood.isEmpty && loggedKept.isEmpty && undecodable.isEmpty && readBack.isEmpty && beingPruned.isEmpty
      && handOver == nil
  }

  /// Forgets all that is known of `path`: its generation was removed.
  mutating func forget(_ path: String) {
    knownGood.removeValue(forKey: path)
    undecodable.removeValue(forKey: path)
    readBack.remove(path)
    loggedKept.remove(path)
    if case .held(path, _, _)? = handOver { handOver = nil }
  }
}
