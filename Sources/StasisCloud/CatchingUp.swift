import Foundation
import Stasis

/// Catching up with the server: fast-forward, or a conflict settled by the policy (whole saves
/// by their headers, or a three-way merge against the base revision), the loser kept.
extension SyncEngine {
  // MARK: Catching up

  /// Fetch the head; fast-forward, resolve or upload; repeat while the server moved meanwhile.
  func synchronize(stateGeneration: Int?, uploading: Bool = true, mayWrite: @Sendable () -> Bool) async
    -> SyncReport
  {
    var restore: Int?
    for _ in 0..<4 {
      var record = load()
      let local = newestLocal()
      let ahead =
        (local?.generation ?? 0) > (record.baseGeneration ?? 0) && local?.generation != record.refusedGeneration
      phase(.syncing)
      let head: HeadFetch
      do {
        head = try await client.head(slot: slot, ifNoneMatch: record.base)
      } catch {
        _ = failed(error, generation: nil)
        return SyncReport(state: nil, restore: restore, error: error)
      }
      switch head {
      case .unchanged, .missing:
        if case .missing = head, record.base != nil {
          // The slot went from the server (deleted there): ours goes up as a new slot.
          record.base = nil
          record.baseGeneration = min(record.baseGeneration ?? 0, (local?.generation ?? 1) - 1)
          store(&record)
        }
        guard ahead, record.conflict == nil else {
          if record.conflict == nil { phase(.synced) }
          return SyncReport(state: record.conflict == nil ? .synced : .conflict, restore: restore, error: nil)
        }
        guard uploading else { return SyncReport(state: .ahead, restore: restore, error: nil) }
        guard let error = await flush(epoch: epoch.load(ordering: .relaxed)) else {
          return SyncReport(state: .synced, restore: restore, error: nil)
        }
        if error.kind == .conflict { continue }  // someone uploaded since: look again
        return SyncReport(state: .ahead, restore: restore, error: error)
      case .changed(let revision, let bytes):
        if let local, ahead, bytes == local.bytes {
          adopt(revision: revision, generation: local.generation)  // our own upload, answer lost
          continue
        }
        if !ahead || local == nil {
          switch await fastForward(
            revision: revision, bytes: bytes, record: &record, stateGeneration: stateGeneration, mayWrite: mayWrite)
          {
          case .success(let generation?):
            return SyncReport(state: .synced, restore: generation, error: nil)
          case .success(nil):
            return SyncReport(state: .behind, restore: restore, error: nil)
          case .failure(let error):
            return SyncReport(state: .behind, restore: restore, error: error)
          }
        }
        let outcome = await resolve(
          record: &record, ours: local!, theirs: (revision, bytes), policy: configuration.policy,
          policyName: configuration.policy.name, stateGeneration: stateGeneration, mayWrite: mayWrite)
        switch outcome {
        case .restore(let generation, let uploaded):
          restore = generation
          if uploaded { return SyncReport(state: .synced, restore: restore, error: nil) }
          continue  // the upload met yet another revision, or waits: look again
        case .keptOurs(let uploaded):
          if uploaded { return SyncReport(state: .synced, restore: restore, error: nil) }
          continue
        case .stopped(let state, let error):
          return SyncReport(state: state, restore: restore, error: error)
        }
      }
    }
    return SyncReport(state: nil, restore: restore, error: CloudError(.conflict, "the server kept moving; try again"))
  }

  /// The server moved and nothing local is unsynced: verify its head and write it as the
  /// slot's next generation. `.success(nil)` when the game's state may not be written under.
  func fastForward(
    revision: Int, bytes: [UInt8], record: inout SyncRecord, stateGeneration: Int?, mayWrite: @Sendable () -> Bool
  ) async -> Result<Int?, CloudError> {
    let newest = (try? store.generations(of: slot).first) ?? nil
    switch verify(bytes, revision: revision) {
    case .failure(let error):
      emit(.refused(error.message))
      return .failure(error)
    case .success:
      break
    }
    if let stateGeneration, stateGeneration != (newest ?? 0) { return .success(nil) }
    guard mayWrite() else { return .success(nil) }
    switch await writeLocal(bytes) {
    case .failure(let error):
      let refusal = CloudError(.refused, "revision \(revision) could not be written locally: \(error)")
      emit(.refused(refusal.message))
      return .failure(refusal)
    case .success(let generation):
      record = load()
      record.base = revision
      record.baseGeneration = generation
      record.queued = []
      record.conflict = nil
      store(&record)
      emit(.fastForwarded(revision: revision, generation: generation))
      return .success(generation)
    }
  }

  enum Resolution {
    /// A result was written locally as `generation` (restore it); `uploaded` when it went up.
    case restore(Int, uploaded: Bool)
    /// Ours won: nothing local changed; `uploaded` when it went up on top of theirs.
    case keptOurs(uploaded: Bool)
    /// Left unsettled, refused or failed.
    case stopped(SyncState, CloudError?)
  }

  /// Both sides moved past the base: decide by `policy`, keep the loser, write and upload.
  func resolve(
    record: inout SyncRecord, ours: (generation: Int, bytes: [UInt8], document: SaveDocument),
    theirs: (revision: Int, bytes: [UInt8]), policy: ConflictPolicy, policyName: String, stateGeneration: Int?,
    mayWrite: @Sendable () -> Bool
  ) async -> Resolution {
    let theirsDocument: SaveDocument
    switch verify(theirs.bytes, revision: theirs.revision) {
    case .failure(let error):
      emit(.refused(error.message))
      return .stopped(.conflict, error)
    case .success(let document): theirsDocument = document
    }
    var report = ConflictReport(
      base: record.base, ours: ours.generation, theirs: theirs.revision, policy: policyName, result: "pending",
      fields: [], takenFromOurs: 0, takenFromTheirs: 0)
    var baseBytes: [UInt8]?
    var baseDocument: SaveDocument?
    if let base = record.base {
      do {
        baseBytes = try await client.download(slot: slot, revision: base)
      } catch {
        return .stopped(.conflict, failed(error, generation: nil))
      }
      if let bytes = baseBytes, case .success(let document) = verify(bytes, revision: base) {
        baseDocument = document
      }
    }
    let decision = await decide(
      policy: policy, base: baseDocument, baseBytes: baseBytes, ours: ours, theirs: theirsDocument,
      theirsRevision: theirs.revision, report: &report)
    guard let decision else {
      record = load()
      let pending = PendingConflict(
        base: record.base, ours: ours.generation, theirs: theirs.revision, policy: policyName)
      if record.conflict != pending {  // the same conflict found again is not news
        record.conflict = pending
        store(&record)
        emit(.conflict(report))
      }
      phase(.conflict)
      return .stopped(.conflict, nil)
    }
    // What goes up on top of theirs, and what the game must restore (nil: ours, unchanged).
    let upload: [UInt8]
    switch decision {
    case .ours:
      report.result = "ours"
      upload = ours.bytes
    case .theirs:
      report.result = "theirs"
      upload = []
    case .base(let bytes):
      report.result = "base"
      upload = bytes
    case .document(let document, let result):
      report.result = result
      upload = SaveFileFormat.encode(document, signingKey: store.signing.current)
    }
    var written: Int?
    if report.result != "ours" {
      let newest = (try? store.generations(of: slot).first) ?? nil
      if let stateGeneration, stateGeneration != (newest ?? 0) { return .stopped(.conflict, nil) }
      guard mayWrite() else { return .stopped(.conflict, nil) }
      switch await writeLocal(report.result == "theirs" ? theirs.bytes : upload) {
      case .failure(let error):
        emit(.refused("the resolved save could not be written locally: \(error)"))
        return .stopped(.conflict, nil)
      case .success(let generation): written = generation
      }
      do {
        try store.keep(
          generation: ours.generation, slot: slot,
          reason:
            "lost a cloud conflict to r\(theirs.revision) (\(policyName) → \(report.result)); discard to let it go")
        report.keptGeneration = ours.generation
      } catch {
        logger.warning("generation \(ours.generation) could not be kept: \(error)")
      }
    }
    record = load()
    record.conflict = nil
    if report.result == "theirs" {
      record.base = theirs.revision
      record.baseGeneration = written
      record.queued = []
      store(&record)
      emit(.conflict(report))
      return .restore(written!, uploaded: true)
    }
    // Ours, the base or the merge goes up on theirs: history reads base → theirs → result.
    record.base = theirs.revision
    record.baseGeneration = ours.generation
    if let written { record.queued = [written] }
    store(&record)
    do {
      let created = try await client.upload(slot: slot, bytes: upload, base: theirs.revision)
      report.revision = created.revision
      record = load()
      record.base = created.revision
      record.baseGeneration = written ?? ours.generation
      record.queued = []
      store(&record)
      emit(.conflict(report))
      emit(.uploaded(generation: written ?? ours.generation, revision: created.revision, base: theirs.revision))
      return written.map { .restore($0, uploaded: true) } ?? .keptOurs(uploaded: true)
    } catch {
      emit(.conflict(report))
      let error = failed(error, generation: nil)
      if error.kind == .conflict { return written.map { .restore($0, uploaded: false) } ?? .keptOurs(uploaded: false) }
      return written.map { .restore($0, uploaded: true) } ?? .stopped(.ahead, error)
    }
  }

  enum Decision {
    case ours
    case theirs
    case base([UInt8])
    case document(SaveDocument, result: String)
  }

  /// The policy's decision; nil leaves the conflict for the game or the player.
  func decide(
    policy: ConflictPolicy, base: SaveDocument?, baseBytes: [UInt8]?,
    ours: (generation: Int, bytes: [UInt8], document: SaveDocument), theirs: SaveDocument, theirsRevision: Int,
    report: inout ConflictReport
  ) async -> Decision? {
    switch policy {
    case .manual:
      guard let onConflict = configuration.onConflict else { return nil }
      let conflict = SyncConflict(
        slot: slot, base: base, baseRevision: report.base, ours: ours.document, oursGeneration: ours.generation,
        theirs: theirs, theirsRevision: theirsRevision)
      switch await onConflict(conflict) {
      case nil: return nil
      case .ours?: return .ours
      case .theirs?: return .theirs
      case .base?: return baseBytes.map { .base($0) }
      case .document(let document)?: return .document(document, result: "game's")
      }
    case .merge(let rules, let fallback):
      guard let base else {
        report.note =
          report.base.map { "base r\($0) is no longer on the server: fell back to \(fallback.name)" }
          ?? "the two never agreed on a base: fell back to \(fallback.name)"
        return await decide(
          policy: fallback, base: nil, baseBytes: nil, ours: ours, theirs: theirs, theirsRevision: theirsRevision,
          report: &report)
      }
      let merged = ThreeWayMerge.merge(
        base: base, ours: ours.document, theirs: theirs, rules: rules,
        fallback: fallback.side(ours: ours.document, theirs: theirs),
        createdAt: Int64((Date().timeIntervalSince1970 * 1000).rounded()))
      report.fields = merged.conflicts.map { "\($0.path): \($0.resolution ?? "unsettled")" }
      report.takenFromOurs = merged.takenFromOurs
      report.takenFromTheirs = merged.takenFromTheirs
      if let refusal = merged.refusal {
        report.note = "\(refusal): fell back to \(fallback.name)"
      } else if let document = merged.document {
        do {
          try configuration.validate?(document)
          return .document(document, result: "merged")
        } catch {
          report.note = "the merged state does not load (\(error)): fell back to \(fallback.name)"
        }
      } else {
        report.note = "\(merged.unsettled.count) fields both changed and no rule settles them"
      }
      return await decide(
        policy: fallback, base: base, baseBytes: baseBytes, ours: ours, theirs: theirs,
        theirsRevision: theirsRevision, report: &report)
    default:
      switch policy.side(ours: ours.document, theirs: theirs) {
      case .ours?: return .ours
      case .theirs?: return .theirs
      case .base?:
        guard let baseBytes else {
          report.note = "the base is no longer on the server: kept both for the player"
          return nil
        }
        return .base(baseBytes)
      case nil: return nil
      }
    }
  }

  /// `stasis cloud resolve`: the head and ours again, settled by `policy`.
  func resolveNow(policy: ConflictPolicy, name: String) async -> SyncReport {
    var record = load()
    guard let local = newestLocal() else {
      return SyncReport(state: nil, restore: nil, error: CloudError(.notFound, "slot '\(slot)' has no local save"))
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
      return SyncReport(state: .synced, restore: nil, error: CloudError(.notFound, "slot '\(slot)' has no conflict"))
    }
    record.conflict = nil
    store(&record)
    switch await resolve(
      record: &record, ours: local, theirs: (revision, bytes), policy: policy, policyName: name,
      stateGeneration: nil, mayWrite: { true })
    {
    case .restore(let generation, _): return SyncReport(state: .synced, restore: generation, error: nil)
    case .keptOurs: return SyncReport(state: .synced, restore: nil, error: nil)
    case .stopped(let state, let error): return SyncReport(state: state, restore: nil, error: error)
    }
  }

}
