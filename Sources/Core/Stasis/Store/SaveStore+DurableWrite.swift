import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One durable write of a slot: the file, where it goes, and how. The defaults are a game's
/// save's, so each caller names only what differs (Box2D's `b2DefaultBodyDef` does this for a
/// body): a copy of exact bytes sets ``prunes`` false; a save of a snapshot sets
/// ``skipsSameState``; the sync's write sets ``ifNewestIs``.
struct DurableWrite {
  /// The file's bytes.
  var file: SaveFileBytes
  /// The header's section table, when the caller has it (the encoder returns it); else the
  /// header is read.
  var table: [SectionEntry]?
  /// The slot written.
  var slot: SaveSlot
  /// The game and schema the file is of: whose reads decide what must be kept.
  var writer: GameIdentity
  /// What to do when the slot's newest generation is one `writer` cannot read.
  var unreadableNewest: UnreadableNewest
  /// A save: the slot's signing is checked and marked, what must be kept is kept, and the
  /// oldest generations are pruned after. False for a copy of exact bytes (nothing checked,
  /// nothing pruned).
  var prunes = true
  /// Written only if the slot's newest generation is still this one (checked under the lock);
  /// else `.slotChanged` and nothing is written.
  var ifNewestIs: Int?
  /// A slot whose newest generation holds exactly these sections (the same table, then the
  /// same bytes on disk) is left as it is, and the write is `unchanged`.
  var skipsSameState = false
  /// The file is signed with the store's current key.
  var isSigned = false

  init(
    _ file: SaveFileBytes, table: [SectionEntry]? = nil, slot: SaveSlot, writer: GameIdentity,
    unreadableNewest: UnreadableNewest
  ) {
    self.file = file
    self.table = table
    self.slot = slot
    self.writer = writer
    self.unreadableNewest = unreadableNewest
  }
}

/// The durable-write protocol of a slot: under the slot's lock, a temporary file written in
/// full, flushed, renamed over the next generation, the folder flushed; the save answered; then
/// the oldest generations pruned, never one this build cannot read.
extension SaveStore {
  /// Encodes and writes `document` as the slot's next generation; a game's snapshot
  /// (`isSnapshot`) whose sections the newest generation already holds writes nothing.
  func write(
    _ document: SaveDocument, slot: SaveSlot, handle: SaveHandle, encodeTime: Duration,
    unreadableNewest: UnreadableNewest, isSnapshot: Bool
  ) {
    let clock = SystemClock()
    let start = clock.now()
    do throws(SaveFileError) {
      guard !handle.isCancelled else { throw SaveFileError(.cancelled, "the save was cancelled before it was written") }
      var buffer = spareBuffers.withLock { $0.popLast() } ?? []
      // The bulk arrays stay in the snapshot and are written from there (`SaveFileBytes`), except
      // in a file kept for its upload: encoded in one piece, its bytes are copied once, by the
      // encoding, and the upload sends that buffer (which is then not kept as a spare).
      let kept = handle.keepsWrittenFile
      let (file, table) = SaveFileFormat.encodeFile(
        document, signingKey: signing.current, reusing: &buffer, inOnePiece: kept)
      defer { if !kept { spareBuffers.withLock { if $0.count < 2 { $0.append(file.buffer) } } } }
      let encoded = clock.now()
      var receipt: SaveReceipt?
      var request = DurableWrite(
        file, table: table, slot: slot, writer: document.game, unreadableNewest: unreadableNewest)
      request.skipsSameState = isSnapshot
      request.isSigned = signing.current != nil
      try writeDurably(request, handle: handle) { generation, path, unchanged in
        if !unchanged {
          // Asked for by a cloud sync only: the file as written, in one piece already unless the
          // sync asked after the encoding began (then the one copy of the bulk arrays, counted).
          handle.offerWrittenFile {
            if !file.isContiguous { self.counts.count(OperationCounts.uploadCopies) }
            return WrittenFile(generation: generation, bytes: file.contiguous, document: document)
          }
        }
        receipt = SaveReceipt(
          slot: slot, generation: generation, path: path, bytes: unchanged ? 0 : file.count,
          encodeDuration: encodeTime + (encoded - start), writeDuration: clock.now() - encoded,
          outcome: unchanged ? .unchanged : .written)
        handle.settle(.success(receipt!))
      }
      handle.finish(.success(receipt!))
    } catch {
      handle.finish(.failure(error))
    }
  }

  /// The durable write of `request`, under the slot's lock. A failed `fsync` fails the attempt
  /// — the data may be gone — and the write is redone once from the same bytes into a new file.
  /// `unchanged` is true when the request skips the same state and the slot holds it.
  ///
  /// `whenDurable` runs, still under the lock, as soon as the new generation is durable and
  /// before the oldest generations are pruned: a save settles its handle there, so the caller
  /// waits for the save and not for the pruning.
  @discardableResult
  func writeDurably(
    _ request: DurableWrite, handle: SaveHandle,
    whenDurable: (_ generation: Int, _ path: String, _ unchanged: Bool) -> Void = { _, _, _ in }
  ) throws(SaveFileError) -> (generation: Int, path: String, unchanged: Bool) {
    let (slot, pruning, signed) = (request.slot, request.prunes, request.isSigned)
    return try withSlotLock(slot, creating: true) { () throws(SaveFileError) in
      // One listing serves the whole write: under the lock, only this writer changes the
      // folder. A slot file it does not list is not there, and costs no `stat` to find so.
      let names: [String]
      do throws(FileSystemError) {
        names = try fileSystem.contents(ofDirectory: folder(of: slot))
      } catch {
        throw SaveFileError("the slot's folder could not be listed", cause: error)
      }
      let isSigned = names.contains(".\(Self.signedFileName)")
      if pruning, !signed, isSigned, signedSince(folder: folder(of: slot)) != nil {
        throw SaveFileError(
          .signingRequired, "an unsigned save in a signed slot; nothing was written",
          context: .init(file: folder(of: slot)),
          suggestion:
            "sign it with the slot's key, or reset the slot's signing on purpose (SaveStore.resetSigning(of:))")
      }
      var request = request
      if request.table == nil { request.table = Self.sectionTable(request.file.buffer) }
      let written = try writeLocked(request, names: names, handle: handle)
      if pruning, signed, !isSigned || signedSince(folder: folder(of: slot)) == nil {
        // From now on an unsigned file in this slot is refused, whatever the policy. An
        // unchanged save marks it too: its newest generation is signed with the current key
        // (else it is written again), but the write that put it there may have failed after
        // its rename (the folder's flush), before it could mark the slot.
        do {
          try writeSlotFileLocked(Array("\(written.generation)\n".utf8), named: Self.signedFileName, slot: slot)
        } catch {
          logger.warning("slot '\(slot)': could not mark it signed: \(error)")
        }
      }
      if let first = written.pruned.first { files.withLock { $0[slotOf: first].beingPruned.formUnion(written.pruned) } }
      whenDurable(written.generation, written.path, written.unchanged)
      removePruned(written.pruned)
      return (written.generation, written.path, written.unchanged)
    }
  }

  /// The sections that are the state: all but the load report, which says how a state reached
  /// its schema (a new game's save of the state a migrated save holds is the same state).
  private static func state(_ sections: [SectionEntry]) -> [SectionEntry] {
    sections.filter { $0.name != LoadReport.sectionName }
  }

  /// What the slot's newest generation holds: as this store last wrote or read it, else read
  /// from the file once (a process that saves before it loads, a file another process wrote),
  /// so a state is never written twice in a row. Nil when the file does not verify.
  ///
  /// A file read here is checked, not decoded: its header says whose it is and its table what
  /// it holds, the checksums and the signature that it is whole. The write's verdict on it is
  /// remembered (no second read), and its bytes come back for the same-state check (no third).
  private func newestState(slot: SaveSlot, generation: Int) -> (state: SlotWriters.NewestState, bytes: [UInt8]?)? {
    let path = path(of: slot, generation: generation)
    guard case .file(let size) = fileSystem.kind(of: path) else { return nil }
    if let known = writers.newestState(slot: slot.name), known.generation == generation, known.size == size {
      return (known, nil)
    }
    guard rules.comparesWithNewestFile, let bytes = try? readBytes(at: path) else { return nil }
    let verification = bytes.withUnsafeBytes { SaveFileFormat.verify($0, path: path, signing: signing) }
    guard verification.isValid, let header = verification.header,
      verification.signature != .unsigned || !refusesUnsigned(file: path)
    else { return nil }
    remember(path, game: header.game, size: size)
    let state = SlotWriters.NewestState(
      generation: generation, path: path, size: size, game: header.game, sections: header.sections,
      signedWithCurrentKey: verification.signature == SignatureStatus.valid(byCurrentKey: true))
    writers.setNewest(state, slot: slot.name)
    return (state, bytes)
  }

  /// The section table of a file's header; nil when the header does not parse.
  static func sectionTable(_ bytes: [UInt8]) -> [SectionEntry]? {
    bytes.withUnsafeBytes { raw in try? SaveFileFormat.readHeader(raw).sections }
  }

  /// True when `bytes`, whose table is `table`, hold the state `known` holds: the same table
  /// (names, lengths, checksums), then the same bytes as the file on disk, section by section.
  /// The file is read only when every checksum matches: a save of the same state.
  /// `onDisk` is the file's bytes when the caller has just read them.
  private func sameState(
    _ file: SaveFileBytes, table: [SectionEntry], as known: SlotWriters.NewestState, onDisk read: [UInt8]?
  ) -> Bool {
    let ours = Self.state(table)
    let theirs = Self.state(known.sections)
    guard SectionEntry.sameContent(ours, theirs), let onDisk = read ?? (try? readBytes(at: known.path)) else {
      return false
    }
    let bytes = file.contiguous  // a copy only for a save whose every checksum matches
    return zip(ours, theirs).allSatisfy { new, old in
      new.offset + new.length <= bytes.count && old.offset + old.length <= onDisk.count
        && bytes[new.offset..<(new.offset + new.length)] == onDisk[old.offset..<(old.offset + old.length)]
    }
  }

  private func writeLocked(
    _ request: DurableWrite, names: [String], handle: SaveHandle
  ) throws(SaveFileError) -> (generation: Int, path: String, unchanged: Bool, pruned: [String]) {
    let (file, table, slot, writer) = (request.file, request.table, request.slot, request.writer)
    let pruning = request.prunes
    let folder = folder(of: slot)
    removeStaleTemporaryFiles(names, slot: slot)
    var existing = names.compactMap(Self.generationNumber(fileName:)).sorted(by: >)
    let newest = existing.first ?? 0
    if let expected = request.ifNewestIs, newest != expected {
      throw SaveFileError(
        .slotChanged, "generation \(newest) appeared after generation \(expected) was read; nothing was written",
        context: .init(file: folder), suggestion: "read the slot again")
    }
    let verdicts = WriteVerdicts(store: self, slot: slot, reader: writer)
    // The same game and schema with the same sections is the same state, whichever build (or
    // device) wrote the file.
    if request.skipsSameState, let table, newest > 0, let (known, bytes) = newestState(slot: slot, generation: newest) {
      verdicts.know(size: known.size, of: newest)
      if known.game.name == writer.name, known.game.schemaVersion == writer.schemaVersion,
        known.signedWithCurrentKey || signing.current == nil, sameState(file, table: table, as: known, onDisk: bytes)
      {
        return (known.generation, known.path, true, [])
      }
    }
    // The kept list, once it has been read (or written) by this write: the pruning reuses it.
    var keptList: [KeptGeneration]? = names.contains(".\(Self.keptFileName)") ? nil : []
    if keptList == nil, files.withLock({ !$0[folder: folder].readBack.isEmpty }),
      var kept = try? readKeptList(slot).get()
    {
      // What this store's loads read is no longer "a build cannot read it".
      if releaseReadBackLocked(slot: slot, kept: &kept) { try writeKept(kept, slot: slot) }
      keptList = kept
    }
    if pruning, rules.keepsBeforeWriting,
      let read = try keepWhatMustBeKept(existing, slot: slot, writer: writer, verdicts: verdicts)
    {
      keptList = read
    }
    if request.unreadableNewest == .refuse {
      try refuseOverUnreadable(existing, verdicts: verdicts, slot: slot, writer: writer)
    }

    var lastError: SaveFileError?
    var generation = newest
    for attempt in 1...2 {
      generation += 1
      let final = path(of: slot, generation: generation)
      let temporary = "\(folder)/.\(generation).tmp-\(fileSystem.temporaryTag)-\(attempt)"
      do throws(SaveFileError) {
        try writeFile(file, to: temporary, handle: handle)
        guard !handle.isCancelled else {
          try? fileSystem.unlink(temporary)
          throw SaveFileError(.cancelled, "the save was cancelled before it replaced the previous generation")
        }
        do {
          try fileSystem.rename(temporary, final)
        } catch {
          try? fileSystem.unlink(temporary)
          throw SaveFileError("the new generation could not be put in place", cause: error)
        }
        files.withLock {  // a number a discard freed
          _ = $0[slotOf: final].undecodable.removeValue(forKey: final)
          _ = $0[slotOf: final].readBack.remove(final)
        }
        if pruning {
          remember(final, game: writer, size: file.count)
          verdicts.wrote(generation)
        }
        do {
          try fileSystem.fsyncDirectory(folder)
        } catch {
          throw SaveFileError("the new generation could not be put in place", cause: error)
        }
        writers.setNewest(
          table.map {
            SlotWriters.NewestState(
              generation: generation, path: final, size: file.count, game: writer, sections: $0,
              signedWithCurrentKey: request.isSigned && signing.current != nil)
          }, slot: slot.name)
        // The oldest generations go once the new one is durable, after the save is settled
        // (`writeDurably`): a crash keeps an in-order prefix of a folder's changes (ext4, XFS and
        // btrfs journal them in order; `SimulatedDisk` crashes so), so never a pruning without
        // the rename before it.
        let pruned =
          pruning
          ? prunable([generation] + existing, slot: slot, verdicts: verdicts, keptList: keptList) : []
        return (generation, final, false, pruned)
      } catch {
        // A failed fsync may have lost the data: redo from the snapshot's bytes, into a new file.
        guard error.cause?.operation == .fsync else { throw error }
        existing = try generations(of: slot)
        generation = existing.first ?? 0
        lastError = error
        logger.warning("fsync failed for slot '\(slot)'; writing the save again: \(error)")
      }
    }
    throw lastError!
  }

  /// Creates the slot's folder, with the save folder and its parents, flushing each parent
  /// that gained an entry.
  func makeSlotFolder(_ slot: SaveSlot) throws(SaveFileError) {
    try slot.validated()
    // The common case, every save after the first: one `stat`, not a `stat` and a `mkdir`.
    guard fileSystem.kind(of: folder(of: slot)) != .directory else { return }
    do {
      try makeSaveFolder()
      if try fileSystem.makeDirectory(folder(of: slot)) { try fileSystem.fsyncDirectory(directory) }
    } catch {
      throw SaveFileError("the save folder could not be created", cause: error)
    }
  }

  /// Creates the save folder and any missing parents (`mkdir -p`), flushing each parent that
  /// gained an entry, so a first save into `~/.local/share/<game>/saves` just works.
  func makeSaveFolder() throws(FileSystemError) {
    guard fileSystem.kind(of: directory) != .directory else { return }
    var missing: [String] = []
    var path = directory
    while !path.isEmpty, path != "/", fileSystem.kind(of: path) == .missing {
      missing.append(path)
      guard let slash = path.lastIndex(of: "/") else { break }
      path = String(path[..<slash])
    }
    for folder in missing.reversed() where try fileSystem.makeDirectory(folder) {
      let parent = folder.lastIndex(of: "/").map { String(folder[..<$0]) } ?? "."
      try? fileSystem.fsyncDirectory(parent.isEmpty ? "/" : parent)
    }
  }

  /// The one rule's durable step: every generation `writer` cannot read (a newer schema or
  /// format, another key, a field it cannot decode) or passes over (a failed validation) goes
  /// on the slot's kept list, with why, before anything is written beside it. From then on
  /// no build prunes it — not even the newer build that can read it, once an older one has
  /// saved after it — until an explicit discard, or (for an entry that says a build could not
  /// read it) until a build reads it (``releaseReadBackLocked(slot:kept:)``). Throws when the list cannot be written:
  /// nothing goes on top of a save whose keeping is not durable.
  /// Returns the kept list when it read it (as it wrote it, when it kept anything new), so the
  /// write's pruning does not read it again; nil when nothing had to be kept.
  @discardableResult
  func keepWhatMustBeKept(
    _ generations: [Int], slot: SaveSlot, writer: GameIdentity, verdicts: WriteVerdicts? = nil
  ) throws(SaveFileError) -> [KeptGeneration]? {
    let verdicts = verdicts ?? WriteVerdicts(store: self, slot: slot, reader: writer)
    var found: [(generation: Int, error: SaveFileError)] = []
    for generation in generations {
      if let error = verdicts(generation).mustBeKept {
        found.append((generation, error))
      }
    }
    guard !found.isEmpty else { return nil }
    var kept = try readKeptList(slot).get()
    let new = found.filter { entry in !kept.contains { $0.generation == entry.generation } }
    guard !new.isEmpty else { return kept }
    // The slot's headers, read once for every newer-schema generation that needs its schema.
    var headers: [GenerationInfo]?
    for (generation, error) in new {
      let reason: String
      if case .newerSchema = error.kind {
        headers = headers ?? ((try? listGenerations(of: slot)) ?? [])
      }
      if case .newerSchema = error.kind,
        let schema = headers?.first(where: { $0.generation == generation })?.header?.game.schemaVersion
      {
        reason = "schema \(schema), newer than the build that saved after it (schema \(writer.schemaVersion))"
      } else {
        let why = error.kind == .invalidState ? "this build refused its state" : "this build cannot read it"
        reason = "\(why) (\(error.location): \(error.message))"
      }
      kept.append(KeptGeneration(generation: generation, reason: reason))
    }
    try writeKept(kept.sorted { $0.generation > $1.generation }, slot: slot)
    for (generation, _) in new {
      let logged = path(of: slot, generation: generation)
      files.withLock { _ = $0[slotOf: logged].loggedKept.insert(logged) }
      logger.notice(
        "slot '\(slot)': kept generation \(generation) until discarded: \(kept.first { $0.generation == generation }!.reason)"
      )
    }
    return kept
  }

  /// Keeps, durably and under the slot's lock, what this store's loads found they could not
  /// make a state of (noted by `load`, which writes nothing): the explicit step a coordinator
  /// takes after a load that failed or passed over a generation, so the generation is kept
  /// even if another process, which never decodes it, writes to the slot next.
  ///
  /// It also takes off the kept list the entries saying a build could not read a generation
  /// this store's loads have since read (``releaseReadBackLocked(slot:kept:)``): the build with
  /// the missing migration read it, so the note is no longer true.
  func keepNoted(slot: SaveSlot) throws(SaveFileError) {
    let prefix = folder(of: slot) + "/"
    let (noted, read) = files.withLock {
      ($0[folder: folder(of: slot)].undecodable, $0[folder: folder(of: slot)].readBack)
    }
    guard !noted.isEmpty || !read.isEmpty else { return }
    if noted.isEmpty, fileSystem.kind(of: prefix + "." + Self.keptFileName) == .missing {
      files.withLock { $0[folder: folder(of: slot)].readBack.subtract(read) }  // nothing is kept: nothing to release
      return
    }
    try withSlotLock(slot) { () throws(SaveFileError) in
      var kept = try readKeptList(slot).get()
      var changed = releaseReadBackLocked(slot: slot, kept: &kept)
      for (path, found) in noted.sorted(by: { $0.key < $1.key }) {
        guard case .file(let size) = fileSystem.kind(of: path), size == found.size,
          let generation = Self.generationNumber(fileName: String(path.dropFirst(prefix.count))),
          !kept.contains(where: { $0.generation == generation })
        else { continue }
        let why = found.error.kind == .invalidState ? "this build refused its state" : "this build cannot read it"
        kept.append(
          KeptGeneration(generation: generation, reason: "\(why) (\(found.error.location): \(found.error.message))"))
        changed = true
      }
      if changed { try writeKept(kept.sorted { $0.generation > $1.generation }, slot: slot) }
    }
  }

  /// Takes off `kept` the entries that say a build could not read (or refused the state of) a
  /// generation a load of this store has since made a state of: the note would be stale, and
  /// this build reads the file, so it is an ordinary generation again for the build that reads it
  /// (the store's rule — never prune what this build cannot read — still holds: a generation this
  /// build cannot read is never one it read back). Entries kept for any other reason (a newer
  /// schema beside an older build's save, a conflict's loser, a start-over) stay. Returns whether
  /// `kept` changed; the caller holds the slot's lock and writes it.
  func releaseReadBackLocked(slot: SaveSlot, kept: inout [KeptGeneration]) -> Bool {
    let prefix = folder(of: slot) + "/"
    let read = files.withLock { memory in
      let mine = memory[folder: folder(of: slot)].readBack
      memory[folder: folder(of: slot)].readBack = []
      return mine
    }
    guard !read.isEmpty else { return false }
    let generations = Set(read.compactMap { Self.generationNumber(fileName: String($0.dropFirst(prefix.count))) })
    let before = kept.count
    kept.removeAll { entry in
      guard generations.contains(entry.generation), entry.saysUnreadable else { return false }
      logger.notice(
        "slot '\(slot)': generation \(entry.generation) was read by this build; no longer kept for: \(entry.reason)")
      return true
    }
    return kept.count != before
  }

  /// Throws when a generation newer than the newest loadable one is one `writer` cannot read.
  private func refuseOverUnreadable(
    _ generations: [Int], verdicts: WriteVerdicts, slot: SaveSlot, writer: GameIdentity
  ) throws(SaveFileError) {
    for generation in generations {
      switch verdicts(generation) {
      case .loadable: return
      case .damaged, .passedOver: continue
      case .unreadable(let reason):
        throw SaveFileError(
          .newerSaveInSlot,
          "generation \(generation) is one this build cannot read (\(reason.location): \(reason.message)); "
            + "saving on top would hide it from the build that can",
          context: .init(file: path(of: slot, generation: generation)),
          suggestion: "update the game, or save alongside it with unreadableNewest: .saveAlongside")
      }
    }
  }

  /// Creates `path` exclusively, writes every byte (partial writes looped, a save's
  /// cancellation checked between chunks), flushes and closes it. On failure the file is removed.
  func writeFile(_ bytes: [UInt8], to path: String, handle: SaveHandle?, flush: Bool = true) throws(SaveFileError) {
    try writeFile(SaveFileBytes(bytes), to: path, handle: handle, flush: flush)
  }

  /// ``writeFile(_:to:handle:flush:)`` for a file in pieces: each piece written from where it is.
  func writeFile(_ file: SaveFileBytes, to path: String, handle: SaveHandle?, flush: Bool = true)
    throws(SaveFileError)
  {
    let descriptor: Int32
    do {
      descriptor = try fileSystem.createExclusive(path)
    } catch {
      throw SaveFileError("the temporary file could not be created", cause: error)
    }
    var closed = false
    defer {
      if !closed { try? fileSystem.close(descriptor, path: path) }
    }
    do {
      let chunk = 1 << 20
      var written = 0
      try file.forEachPiece { piece in
        var done = 0
        while done < piece.count {
          guard handle?.isCancelled != true else {
            try? fileSystem.unlink(path)
            throw SaveFileError(.cancelled, "the save was cancelled after \(written) of \(file.count) bytes")
          }
          let end = min(piece.count, done + chunk)
          let count = try fileSystem.write(descriptor, UnsafeRawBufferPointer(rebasing: piece[done..<end]), path: path)
          guard count > 0 else { throw FileSystemError(.write, path, .ioError) }
          done += count
          written += count
        }
      }
      if flush { try fileSystem.fsync(descriptor, path: path) }
      closed = true
      try fileSystem.close(descriptor, path: path)
    } catch let error as FileSystemError {
      try? fileSystem.unlink(path)
      throw SaveFileError("the save could not be written", cause: error)
    } catch let error as SaveFileError {
      throw error
    } catch {
      try? fileSystem.unlink(path)
      throw SaveFileError(.io, "\(error)", context: .init(file: path), underlyingError: error)
    }
  }

  /// Removes temporary files a killed save left behind. Only the lock's holder writes them,
  /// so under the lock every one is stale.
  private func removeStaleTemporaryFiles(_ names: [String], slot: SaveSlot) {
    for name in names where name.hasPrefix(".") && name.contains(".tmp-") {
      try? fileSystem.unlink("\(folder(of: slot))/\(name)")
    }
  }

  /// The generations older than the newest `generationsToKeep` loadable ones, except those
  /// this build cannot read and those kept on purpose (``keep(generation:slot:reason:)``):
  /// what the write removes once the new generation is durable. Nothing newer than the oldest
  /// kept loadable one goes.
  /// `keptList` is the slot's kept list when this write has read it already (empty: there is none).
  private func prunable(_ all: [Int], slot: SaveSlot, verdicts: WriteVerdicts, keptList known: [KeptGeneration]?)
    -> [String]
  {
    guard all.count > generationsToKeep else { return [] }
    guard let keptList = known ?? keptGenerationsLocked(slot) else {
      logger.warning("slot '\(slot)': its kept list cannot be read; nothing pruned until it can")
      return []
    }
    let kept = Set(keptList.map(\.generation))
    var loadable = 0
    var paths: [String] = []
    for generation in all {
      let verdict = verdicts(generation)
      if loadable < generationsToKeep {
        if case .loadable = verdict { loadable += 1 }
        continue
      }
      let path = path(of: slot, generation: generation)
      let prunedAnyway = rules.prunesUnreadable && verdict.mustBeKept != nil  // never, outside the simulation's seam
      if kept.contains(generation), !prunedAnyway { continue }  // kept until the game or the player lets it go
      if let reason = verdict.mustBeKept, !prunedAnyway {
        if files.withLock({ $0[slotOf: path].loggedKept.insert(path).inserted }) {
          logger.notice("slot '\(slot)': kept generation \(generation), which this build cannot read: \(reason)")
        }
        continue
      }
      paths.append(path)
    }
    return paths
  }

  /// Removes what ``prunable(_:slot:verdicts:keptList:)`` chose, under the slot's lock,
  /// after the new generation is durable and its save was settled: the caller does not wait for
  /// the unlinks (an unlink that frees a file's blocks costs a save of 1k bodies a quarter of its
  /// time). Not flushed: a crash that loses an unlink leaves an old generation, which the next
  /// save prunes. Until the unlinks are done, this store's listings leave those files out.
  private func removePruned(_ paths: [String]) {
    guard !paths.isEmpty else { return }
    defer { files.withLock { $0[slotOf: paths[0]].beingPruned.subtract(paths) } }
    for path in paths where (try? fileSystem.unlink(path)) != nil {
      files.withLock { $0.forget(path) }
    }
  }
}
