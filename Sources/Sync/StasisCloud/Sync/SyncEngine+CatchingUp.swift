import Foundation
@_spi(Simulation) import Stasis
@_spi(Simulation) import StasisMerge

/// Who may write into the slot while catching up, and who hears what was written: the game
/// held at `stateGeneration` (through its ``CatchUp``), or a tool (no game, no limit).
struct WriteGate: Sendable {
  /// The generation the game's state is (0: none); nil for a tool.
  var stateGeneration: Int?
  /// The game's hold.
  var progress: CatchUp?

  /// May a generation be written on top of `newest` now? Only on top of the game's own state,
  /// only while the game is held, and only once per catch-up.
  func mayWrite(over newest: Int) -> Bool {
    if let stateGeneration, stateGeneration != newest { return false }
    return progress?.mayWrite() ?? true
  }

  /// A generation was written: the game restores it now, from `written` (what was written, in
  /// memory, with the state its verification decoded), without waiting for the upload.
  func wrote(_ generation: Int, _ reason: String, written: VerifiedSave) {
    progress?.finish(.restore(generation: generation, reason: reason), written: written)
  }

  /// The server's newest is a save of a newer schema or format than this build reads:
  /// the game, held at its own state, is held on until the player answers. Nothing was written.
  func cannotRead(_ error: SaveFileError) {
    guard let progress, stateGeneration != nil else { return }
    progress.finish(unreadable: error)
  }
}

/// Catching up with the server: fast-forward, or a conflict settled by the policy (whole saves
/// by their headers, or a three-way merge against the base revision), the loser kept.
extension SyncEngine {
  /// The device a save this engine makes (a merge, a game's resolution) is from: the store's,
  /// as in every other save it writes, else the name the cloud login gives this device.
  var uploadingDevice: String { store.device.isEmpty ? client.credentials.device : store.device }

  /// Fetch the head; fast-forward, resolve or upload; repeat while the server moved meanwhile.
  func synchronize(gate: WriteGate, uploading: Bool = true) async -> SyncReport {
    var restore: Int?
    // A list an upload made before this pass is not this pass's.
    worker.withLock { $0.listedRevisions = nil }
    defer { worker.withLock { $0.listedRevisions = nil } }
    for _ in 0..<4 {
      var record = heldRecord()
      let local = newestLocal()
      // A generation the server refused is still this device's progress: not to be passed over.
      let ahead = local != nil && record.isUnsynced(local?.generation)
      phase(.syncing)
      let head: HeadFetch
      do {
        head = try await client.head(slot: slot, ifNoneMatch: record.base, holding: heldBase(record, local: local))
        answered()
      } catch {
        _ = failed(error, generation: nil)
        return SyncReport(state: nil, restore: restore, error: error)
      }
      switch head {
      case .missing where record.base != nil:
        // The slot went from the server (deleted there): ours goes up as a new slot.
        record.base = nil
        record.baseGeneration = nil
        record.parent = .base
        writeRecord(&record)
        continue
      case .unchanged, .missing:
        guard ahead, record.conflict == nil else {
          if record.conflict == nil { phase(.synced) }
          return SyncReport(state: record.conflict == nil ? .synced : .conflict, restore: restore, error: nil)
        }
        guard uploading else { return SyncReport(state: .ahead, restore: restore, error: nil) }
        guard let error = await flush(epoch: uploadEpoch) else {
          return SyncReport(state: .synced, restore: restore, error: nil)
        }
        if error.kind == .conflict, record.conflict == nil { continue }  // someone uploaded since: look again
        return SyncReport(state: .ahead, restore: restore, error: error)
      case .changed(let revision, let bytes):
        guard let local, ahead else {
          switch await fastForward(revision: revision, bytes: bytes, gate: gate) {
          case .success(let generation?): return SyncReport(state: .synced, restore: generation, error: nil)
          case .success(nil): return SyncReport(state: .behind, restore: restore, error: nil)
          case .failure(let error): return SyncReport(state: .behind, restore: restore, error: error)
          }
        }
        // Our own upload whose answer was lost is no conflict: it becomes the base.
        if await recogniseOwnUploads(newest: (local.generation, local.bytes)) { continue }
        switch await resolve(
          ours: local, theirs: (revision, bytes), policy: configuration.policy, policyName: configuration.policy.name,
          gate: gate)
        {
        case .settled(let written, nil):
          return SyncReport(state: .synced, restore: written ?? restore, error: nil)
        case .settled(let written, let error?):
          restore = written ?? restore
          if error.kind == .conflict { continue }  // yet another revision: look again
          return SyncReport(state: .ahead, restore: restore, error: error)
        case .stopped(let state, let error):
          return SyncReport(state: state, restore: restore, error: error)
        }
      }
    }
    return SyncReport(state: nil, restore: restore, error: CloudError(.conflict, "the server kept moving; try again"))
  }

  /// The server moved and nothing local is unsynced: verify its head and write it as the
  /// slot's next generation. `.success(nil)` when the game's state may not be written under.
  func fastForward(revision: Int, bytes: [UInt8], gate: WriteGate) async -> Result<Int?, CloudError> {
    let file: VerifiedSave
    switch verify(bytes, revision: revision) {
    case .failure(let error):
      emit(.refused(error))
      phase(.behind)
      if let unreadable = error.fileError,
        [.newerSchema, .newerFormat].contains(unreadable.kind)
      {
        // The head is a save of a newer build: the game is held as one device is held by a
        // newest generation it cannot read, with the same choices (play on, or wait).
        var held = unreadable
        held.context.file = "revision \(revision) of slot '\(slot)' on the server"
        gate.cannotRead(held)
      }
      return .failure(error)
    case .success(let verified): file = verified
    }
    let newest = store.newestGeneration(of: slot) ?? 0
    guard gate.mayWrite(over: newest) else { return .success(nil) }
    switch await writeLocal(bytes, file, ifNewestIs: newest) {
    case .failure(let error):
      phase(.behind)
      let refusal = CloudError.refusedLocally("revision \(revision) could not be written locally", error)
      emit(.refused(refusal))
      return .failure(refusal)
    case .success(let generation):
      var record = heldRecord()
      record.agree(revision: revision, generation: generation)
      writeRecord(&record)
      agreed(revision, file: bytes)
      emit(.fastForwarded(revision: revision, generation: generation))  // told before the game wakes
      gate.wrote(generation, "fast-forwarded to r\(revision)", written: file)
      return .success(generation)
    }
  }

  enum Resolution {
    /// Settled: `written` is the local generation the result was written as (nil: ours won,
    /// nothing local changed); `uploadError` says why the result has not gone up yet (it
    /// waits in the record, on theirs).
    case settled(written: Int?, uploadError: CloudError?)
    /// Left unsettled, refused or failed; nothing local changed.
    case stopped(SyncState, CloudError?)
  }

  /// Both sides moved past the base: decide by `policy`, keep the loser first, write the
  /// result (not ours) as a new generation for the game to restore, and upload it on theirs.
  func resolve(
    ours: (generation: Int, bytes: [UInt8], document: SaveDocument), theirs: (revision: Int, bytes: [UInt8]),
    policy: ConflictPolicy, policyName: String, taking: ConflictDecision? = nil, gate: WriteGate
  ) async -> Resolution {
    var record = heldRecord()
    let theirsFile: VerifiedSave
    switch verify(theirs.bytes, revision: theirs.revision) {
    case .failure(let error):
      emit(.refused(error))
      return .stopped(.conflict, error)
    case .success(let file): theirsFile = file
    }
    let theirsDocument = theirsFile.document
    // The base of a three-way merge is the revision ours continues, and only when theirs
    // continues it too: a history begun elsewhere (a new game, a device that played before it
    // ever synced) is never merged as if it had come from this one.
    let continued = record.parentRevision(of: ours.generation)
    let shared: Int?
    var unshared: String?
    var history = ConflictReport.History.shared
    switch await sharedBase(continued, theirs: theirs.revision) {
    case .failure(let error): return .stopped(.conflict, failed(error, generation: nil))
    case .success(.shared(let revision)): shared = revision
    case .success(.none(let why, let note)): (shared, history, unshared) = (nil, why, note)
    }
    var report = ConflictReport(
      base: shared, ours: ours.generation, theirs: theirs.revision, decidedBy: policy.kind, outcome: .pending,
      fields: [], takenFromOurs: 0, takenFromTheirs: 0)
    if let unshared {
      report.note = unshared
    } else if history == .neverAgreed, let agreed = record.base {
      history = .newGame
      report.note = "this device's save begins a history of its own (a new game), not r\(agreed)'s: unrelated histories"
    }
    report.history = history
    var base: (bytes: [UInt8], document: SaveDocument)?
    var baseSigned = false
    if let revision = shared {
      // Downloaded, never taken from what this device holds: the held file is only what the
      // device last agreed on (a delta's starting point, checked by the delta's own checksum),
      // which need not be the revision both sides continue (stasis-sim, seed 17).
      let bytes: [UInt8]?
      do {
        bytes = try await client.download(slot: slot, revision: revision, holding: heldBase(heldRecord()))
      } catch {
        return .stopped(.conflict, failed(error, generation: nil))
      }
      if let bytes {
        switch verify(bytes, revision: revision) {
        case .success(let file): (base, baseSigned) = ((bytes, file.document), file.signed)
        case .failure(let error):
          emit(.refused(error))  // a damaged base is no base: never written, never merged
          report.note = "base r\(revision) failed verification"
        }
      }
    }
    let decision = await decide(
      policy: policy, taking: taking, base: base, ours: ours, theirs: theirsDocument,
      theirsRevision: theirs.revision, report: &report)
    guard let decision else {
      record = heldRecord()
      let pending = PendingConflict(
        base: record.base, ours: ours.generation, theirs: theirs.revision, policy: policyName)
      // The same conflict found again is not news, unless this process has not told it yet (a
      // launch over a conflict the record kept): the game hears it once per process.
      let told = currentStatus.conflicts.contains {
        $0.outcome == .pending && ($0.ours, $0.theirs) == (pending.ours, pending.theirs)
      }
      if record.conflict != pending || !told {
        if record.conflict != pending {
          record.conflict = pending
          writeRecord(&record)
        }
        report.comparison = ConflictComparison(
          ours: ours.document, oursGeneration: ours.generation, theirs: theirsDocument,
          theirsRevision: theirs.revision)
        emit(.conflict(report))
      }
      phase(.conflict)
      return .stopped(.conflict, nil)
    }
    // What is written locally (nil: ours, already there) and what goes up on theirs (nil: nothing).
    // The local file goes with its document, as checked or as made here: never decoded again.
    let local: (bytes: [UInt8], file: VerifiedSave)?
    let upload: [UInt8]?
    switch decision {
    case .side(.ours):
      (report.outcome, local, upload) = (.side(.ours), nil, ours.bytes)
      report.sections = Self.whole(ours.document, .ours, policyName)
    case .side(.theirs):
      (report.outcome, local, upload) = (.side(.theirs), (theirs.bytes, theirsFile), nil)
      report.sections = Self.whole(theirsDocument, .theirs, policyName)
    case .side(.base):
      // The policy takes the base only when there is one: its document was checked above.
      guard let base else { return .stopped(.conflict, nil) }
      let file = VerifiedSave(document: base.document, signed: baseSigned)
      (report.outcome, local, upload) = (.side(.base), (base.bytes, file), base.bytes)
      report.sections = Self.whole(base.document, .base, policyName)
    case .document(var document, let outcome):
      // Made here, whichever side its summary came from: the revision names this device.
      document.summary.device = uploadingDevice
      let bytes = SaveFileFormat.encode(document, signingKey: store.signing.current)
      let file = VerifiedSave(document: document, signed: store.signing.current != nil)
      (report.outcome, local, upload) = (outcome, (bytes, file), bytes)
    }
    var written: Int?
    if let local {
      let newest = store.newestGeneration(of: slot) ?? 0
      guard newest == ours.generation, gate.mayWrite(over: newest) else { return .stopped(.conflict, nil) }
      // The loser is kept before anything is written: the write may prune.
      do {
        try store.keep(
          generation: ours.generation, slot: slot,
          reason:
            "lost a cloud conflict to r\(theirs.revision) (\(policyName) → \(report.outcome.rawValue)); discard to let it go"
        )
      } catch {
        emit(
          .refused(.refusedLocally("generation \(ours.generation) could not be kept, so nothing was written", error)))
        return .stopped(.conflict, nil)
      }
      report.keptGeneration = ours.generation
      switch await writeLocal(local.bytes, local.file, ifNewestIs: newest) {
      case .failure(let error):
        emit(.refused(.refusedLocally("the resolved save could not be written locally", error)))
        return .stopped(.conflict, nil)
      case .success(let generation):
        written = generation
        gate.wrote(
          generation, "resolved a cloud conflict (\(report.outcome.rawValue))", written: local.file)
      }
    }
    record = heldRecord()
    guard let upload else {  // theirs won: it is the head already
      record.agree(revision: theirs.revision, generation: written!)
      writeRecord(&record)
      agreed(theirs.revision, file: theirs.bytes)
      emit(.conflict(report))
      return .settled(written: written, uploadError: nil)
    }
    // Ours, the base or the merge goes up on theirs: history reads base → theirs → result.
    // Ours or the base taken whole continues what ours did; a merge continues theirs.
    let result = written ?? ours.generation
    let parent: UploadParent =
      switch decision {
      case .side(.ours): continued.map(UploadParent.revision) ?? .newHistory
      case .side(.base): shared.map(UploadParent.revision) ?? .newHistory
      case .side(.theirs), .document: .revision(theirs.revision)
      }
    record.resolving(onto: theirs.revision, upload: result, loser: theirs.revision, parent: parent)
    record.sending(generation: result, sha256: sha256Hex(upload))
    writeRecord(&record)
    do {
      // Theirs lost: the server keeps it out of pruning until it is discarded.
      let created = try await client.upload(
        slot: slot, bytes: upload, base: theirs.revision, loser: theirs.revision, parent: parent,
        deltaFrom: HeldRevision(revision: theirs.revision, bytes: theirs.bytes))
      report.revision = created.revision
      record = heldRecord()
      record.agree(revision: created.revision, generation: result)
      writeRecord(&record)
      agreed(created.revision, file: upload)
      emit(.conflict(report))
      emit(.uploaded(generation: result, revision: created.revision, base: theirs.revision))
      return .settled(written: written, uploadError: nil)
    } catch {
      emit(.conflict(report))
      return .settled(written: written, uploadError: failed(error, generation: nil))
    }
  }

  /// What a three-way merge may use as its base.
  enum SharedBase {
    /// A revision both sides continue.
    case shared(Int)
    /// None: how the histories meet, and a note for the report (nil: nothing to add).
    case none(ConflictReport.History, String?)
  }

  /// `continued` when `theirs` continues it too (its chain of parents on the server reaches
  /// it): the revision a three-way merge may use as its base. The server hands a pruned
  /// revision's parent down, so the chain among what it still has is exact. A `continued` the
  /// server no longer has is returned as it is: its download then finds it gone, and the
  /// conflict says so. A server that does not record parents (one from before them) gives no
  /// shared base: its history cannot tell a new game from a continuation.
  func sharedBase(_ continued: Int?, theirs: Int) async -> Result<SharedBase, CloudError> {
    guard let continued else { return .success(.none(.neverAgreed, nil)) }
    if configuration.rules.mergesAcrossUnrelatedHistories { return .success(.shared(continued)) }
    let history: [RemoteRevision]
    do {
      guard let listed = try await listRevisions(holding: theirs) else {
        return .success(.none(.unrecorded, "the server no longer lists the slot's revisions: no three-way merge"))
      }
      history = listed
    } catch {
      return .failure(error)
    }
    guard history.allSatisfy(\.parentIsRecorded) else {
      return .success(
        .none(.unrecorded, "the server does not record parents (a stasis-server before them): no three-way merge"))
    }
    var parents: [Int: Int?] = [:]
    for revision in history { parents[revision.revision] = revision.parent }
    guard parents[continued] != nil else { return .success(.shared(continued)) }
    var next: Int? = theirs
    for _ in 0...history.count {  // a chain longer than the history is no chain
      guard let revision = next else { break }
      if revision == continued { return .success(.shared(continued)) }
      guard let parent = parents[revision] else { break }
      next = parent
    }
    return .success(
      .none(
        .unrelated,
        "r\(theirs) does not continue r\(continued), which this device's save continues: unrelated histories"))
  }

  /// Every section of a save taken whole, for the report.
  static func whole(_ document: SaveDocument, _ side: MergeSide, _ policy: String) -> [SectionMerge] {
    document.sections.map { SectionMerge(name: $0.name, source: .side(side), how: "the whole save: \(policy)") }
  }

  /// What ``decide(policy:taking:base:ours:theirs:theirsRevision:report:)`` settled on: one
  /// side whole (the base only when there is one), or a document made here and what it is.
  enum Decision {
    case side(MergeSide)
    case document(SaveDocument, outcome: ConflictReport.Outcome)
  }

  /// The policy's decision; nil leaves the conflict for the game or the player.
  func decide(
    policy: ConflictPolicy, taking: ConflictDecision? = nil, base: (bytes: [UInt8], document: SaveDocument)?,
    ours: (generation: Int, bytes: [UInt8], document: SaveDocument), theirs: SaveDocument, theirsRevision: Int,
    report: inout ConflictReport
  ) async -> Decision? {
    switch policy {
    case .manual:
      let chosen: ConflictDecision?
      if let taking {
        chosen = taking  // the player's choice, asked for by name
      } else if let onConflict = configuration.onConflict {
        let conflict = Conflict(
          slot: slot, base: base?.document, baseRevision: report.base, ours: ours.document,
          oursGeneration: ours.generation, theirs: theirs, theirsRevision: theirsRevision)
        chosen = await onConflict(conflict)
      } else {
        return nil
      }
      switch chosen {
      case nil: return nil
      case .side(.base)? where base == nil: return nil
      case .side(let side)?: return .side(side)
      case .document(let document)?: return .document(document, outcome: .game)
      }
    case .merge(let rules, let fallback):
      guard let base else {
        report.note =
          report.note.map { "\($0): fell back to \(fallback.name)" }
          ?? report.base.map { "base r\($0) is no longer on the server: fell back to \(fallback.name)" }
          ?? "the two never agreed on a base: fell back to \(fallback.name)"
        return await decide(
          policy: fallback, base: nil, ours: ours, theirs: theirs, theirsRevision: theirsRevision, report: &report)
      }
      var rules = rules
      rules.mergesRestValueByValue = rules.mergesRestValueByValue || configuration.rules.mergesRestValueByValue
      let merged = ThreeWayMerge.merge(
        base: base.document, ours: ours.document, theirs: theirs, rules: rules,
        fallback: fallback.side(ours: ours.document, theirs: theirs),
        createdAt: store.wallClock())
      report.fields = merged.conflicts.map { "\($0.path): \($0.resolution ?? "unsettled")" }
      report.sections = merged.sections
      report.takenFromOurs = merged.takenFromOurs
      report.takenFromTheirs = merged.takenFromTheirs
      if let refusal = merged.refused {
        report.note = "\(refusal): fell back to \(fallback.name)"
      } else if var document = merged.document {
        do {
          _ = try check(document, named: "merged")
          if let summarize = configuration.summarize, document.sections != ours.document.sections,
            document.sections != theirs.sections
          {
            // Combined: the summary is the game's own of the merged state, not one side's.
            var summary = try await summarize(document)
            (summary.slot, summary.device) = (document.summary.slot, document.summary.device)
            document.summary = summary
          }
          // A merge that is one side whole is that side: no new state, no new revision.
          if document.sections == theirs.sections { return .side(.theirs) }
          if document.sections == ours.document.sections { return .side(.ours) }
          return .document(document, outcome: .merged)
        } catch {
          report.note = "the merged state does not load (\(error)): fell back to \(fallback.name)"
        }
      } else {
        report.note = "\(merged.unsettled.count) fields both changed and no rule settles them"
      }
      return await decide(
        policy: fallback, base: base, ours: ours, theirs: theirs, theirsRevision: theirsRevision, report: &report)
    default:
      switch policy.side(ours: ours.document, theirs: theirs) {
      case .base? where base == nil:
        report.note = (report.note ?? "the base is no longer on the server") + ": kept both for the player"
        return nil
      case let side?: return .side(side)
      case nil: return nil
      }
    }
  }

  /// `stasis cloud resolve`: the head and ours again, settled by `policy`.
  func resolveNow(policy: ConflictPolicy, name: String, taking: ConflictDecision? = nil) async -> SyncReport {
    var record = heldRecord()
    guard let local = newestLocal() else {
      return SyncReport(state: nil, restore: nil, error: CloudError(.noLocalSave, "slot '\(slot)' has no local save"))
    }
    let head: HeadFetch
    do {
      head = try await client.head(slot: slot, ifNoneMatch: nil)
    } catch {
      return SyncReport(state: nil, restore: nil, error: error)
    }
    guard case .changed(let revision, let bytes) = head else {
      return SyncReport(state: nil, restore: nil, error: CloudError(.notFound, "slot '\(slot)' is not on the server"))
    }
    guard revision != record.base || record.conflict != nil else {
      return SyncReport(state: .synced, restore: nil, error: CloudError(.noConflict, "slot '\(slot)' has no conflict"))
    }
    record.conflict = nil
    writeRecord(&record)
    switch await resolve(
      ours: local, theirs: (revision, bytes), policy: policy, policyName: name, taking: taking, gate: WriteGate())
    {
    case .settled(let written, let error):
      return SyncReport(state: error == nil ? .synced : .ahead, restore: written, error: error)
    case .stopped(let state, let error): return SyncReport(state: state, restore: nil, error: error)
    }
  }
}
