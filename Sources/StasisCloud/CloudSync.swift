import Crypto
import Foundation
import Logging
import Stasis
import Synchronization

/// How a slot syncs: its conflict policy, the game's decision for `manual`, how the state is
/// checked, how often autosaves go up and how retries back off.
public struct CloudSyncConfiguration: Sendable {
  /// How conflicts are resolved (``ConflictPolicy``); `mostRecent` by default.
  public var policy: ConflictPolicy
  /// The game's decision for ``ConflictPolicy/manual`` (and for a merge whose fallback is
  /// manual); nil, or a nil answer, leaves the slot in conflict.
  public var onConflict: (@Sendable (SyncConflict) async -> ConflictDecision?)?
  /// Checks that a document is a state the game loads (its codec, migrations, validation);
  /// a download or a merge that fails it is refused. ``CloudSaveSync`` sets it from the codec.
  public var validate: (@Sendable (SaveDocument) throws -> Void)?
  /// An autosave is uploaded at most once per this interval; background, quit and manual
  /// saves always are.
  public var autosaveUploadInterval: Duration
  /// The first retry after the server could not be reached; each next one doubles.
  public var firstRetry: Duration
  /// The longest wait between retries.
  public var longestRetry: Duration
  /// How retries wait; tests replace it to drive retries without real time.
  public var sleep: @Sendable (Duration) async throws -> Void

  /// Creates a configuration.
  public init(
    policy: ConflictPolicy = .mostRecent, onConflict: (@Sendable (SyncConflict) async -> ConflictDecision?)? = nil,
    validate: (@Sendable (SaveDocument) throws -> Void)? = nil, autosaveUploadInterval: Duration = .seconds(60),
    firstRetry: Duration = .milliseconds(500), longestRetry: Duration = .seconds(60),
    sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
  ) {
    self.policy = policy
    self.onConflict = onConflict
    self.validate = validate
    self.autosaveUploadInterval = autosaveUploadInterval
    self.firstRetry = firstRetry
    self.longestRetry = longestRetry
    self.sleep = sleep
  }
}

/// What one ``CloudSync/synchronize()`` did.
public struct SyncReport: Sendable, Equatable {
  /// How the slot stands afterwards (nil when the server could not be asked).
  public var state: SyncState?
  /// The generation to restore, when a newer one was written into the slot.
  public var restore: Int?
  /// The failure that stopped it, if one did.
  public var error: CloudError?
}

/// One slot's cloud sync: its record, its upload queue, catching up (fast-forward or
/// conflict resolution) and the retries. All its work runs in order on its own task, never on
/// the main thread; the main thread only hands it commands and reads ``status``.
///
/// ```swift
/// let sync = CloudSync(client: CloudClient(server: server), store: store, slot: "autosave")
/// let report = await sync.synchronize()   // fetch, fast-forward or resolve, upload
/// ```
public final class CloudSync: Sendable {
  /// The server.
  public let client: CloudClient
  /// The local save folder.
  public let store: SaveStore
  /// The slot kept in sync (the same name on both sides).
  public let slot: SaveSlot
  /// How it syncs.
  public let configuration: CloudSyncConfiguration
  private let engine: SyncEngine
  private let commands: AsyncStream<SyncEngine.Command>.Continuation

  /// Creates the sync of `slot` and starts its worker.
  public init(
    client: CloudClient, store: SaveStore, slot: SaveSlot, configuration: CloudSyncConfiguration = .init(),
    logger: Logger = Logger(label: "stasis.cloud")
  ) {
    self.client = client
    self.store = store
    self.slot = slot
    self.configuration = configuration
    let (stream, continuation) = AsyncStream<SyncEngine.Command>.makeStream()
    commands = continuation
    let engine = SyncEngine(
      client: client, store: store, slot: slot, configuration: configuration, logger: logger, commands: continuation)
    self.engine = engine
    Task.detached {
      for await command in stream { await engine.run(command) }
    }
  }

  deinit { commands.finish() }

  /// The slot's cloud state now: phase, base, what went up and down, conflicts, pending.
  public var status: CloudStatus { engine.status.withLock { $0 } }

  /// Called with each event as it happens, on the sync's task (never the main thread).
  public func onEvent(_ body: @escaping @Sendable (CloudEvent) -> Void) {
    engine.eventHandlers.withLock { $0.append(body) }
  }

  // MARK: From the main thread: returns at once

  /// Queues the upload of the save `handle` writes, once it is durable; `done` is called when
  /// the upload has ended (or was not needed). Never before the save: a failed or cancelled
  /// save uploads nothing.
  public func upload(after handle: SaveHandle, done: (@Sendable () -> Void)? = nil) {
    commands.yield(.upload(handle, epoch: engine.epoch.load(ordering: .relaxed), done: done))
  }

  /// Starts catching up for a game held at `stateGeneration` (nil: no game to protect, as
  /// for a tool); `progress` is finished with what to restore.
  public func catchUp(stateGeneration: Int?, progress: CatchUp) {
    commands.yield(.catchUp(stateGeneration, progress))
  }

  /// Cancels the upload in flight and those queued before now (the budget ran out); the
  /// saves stay queued in the record and go up on the next catch-up.
  public func cancelUploads() {
    engine.epoch.add(1, ordering: .relaxed)
    engine.inFlight.withLock { $0 }?()
  }

  /// Retries waiting uploads now instead of at the next backoff step.
  public func retryNow() {
    engine.retry.withLock {
      $0?.cancel()
      $0 = nil
    }
    commands.yield(.flush)
  }

  // MARK: For tools and tests: awaited

  /// Catches up and uploads: fast-forwards when only the server moved, resolves a conflict
  /// by the policy when both did, uploads when only this side did. Writes into the slot
  /// freely: for a tool, or a game that is not running from this slot.
  public func synchronize() async -> SyncReport {
    await withCheckedContinuation { continuation in commands.yield(.synchronize(uploading: true, continuation)) }
  }

  /// Catches up without uploading (`stasis cloud pull`): fast-forwards when only the server
  /// moved; a conflict is resolved by the policy (whose result does go up).
  public func pull() async -> SyncReport {
    await withCheckedContinuation { continuation in commands.yield(.synchronize(uploading: false, continuation)) }
  }

  /// Uploads the newest unsynced local generation now, if any (`stasis cloud push`).
  public func push() async -> SyncReport {
    await withCheckedContinuation { continuation in commands.yield(.push(continuation)) }
  }

  /// Settles the slot's conflict by `decision` (`stasis cloud resolve --take`): `policy`
  /// names it in the report.
  public func resolve(with policy: ConflictPolicy, named name: String) async -> SyncReport {
    await withCheckedContinuation { continuation in commands.yield(.resolve(policy, name, continuation)) }
  }

  /// Waits until every command handed over so far has run.
  public func settle() async {
    await withCheckedContinuation { continuation in commands.yield(.barrier(continuation)) }
  }

  /// How the slot stands with the server, from one request (`stasis cloud status`).
  public func state() async throws(CloudError) -> (state: SyncState, record: SyncRecord, head: RemoteRevision?) {
    let record = SyncRecord.load(store: store, slot: slot, server: client.server.url)
    let heads = try await client.slots()
    let head = heads.first { $0.slot == slot.name }
    let local = (try? store.generations(of: slot).first) ?? nil
    return (SyncState.classify(record: record, newestLocal: local, head: head?.revision), record, head)
  }
}

/// The worker: every command runs to its end before the next starts, so no two requests of
/// one slot ever race each other.
final class SyncEngine: Sendable {
  enum Command: Sendable {
    case upload(SaveHandle, epoch: Int, done: (@Sendable () -> Void)?)
    case catchUp(Int?, CatchUp)
    case flush
    case synchronize(uploading: Bool, CheckedContinuation<SyncReport, Never>)
    case push(CheckedContinuation<SyncReport, Never>)
    case resolve(ConflictPolicy, String, CheckedContinuation<SyncReport, Never>)
    case barrier(CheckedContinuation<Void, Never>)
  }

  let client: CloudClient
  let store: SaveStore
  let slot: SaveSlot
  let configuration: CloudSyncConfiguration
  let logger: Logger
  let commands: AsyncStream<Command>.Continuation
  let status = Mutex(CloudStatus())
  let eventHandlers = Mutex<[@Sendable (CloudEvent) -> Void]>([])
  /// Bumped by `cancelUploads`: uploads handed over before it are dropped.
  let epoch = Atomic<Int>(0)
  /// Cancels the upload in flight, for `cancelUploads`.
  let inFlight = Mutex<(@Sendable () -> Void)?>(nil)
  /// The retry waiting for its backoff.
  let retry = Mutex<Task<Void, Never>?>(nil)
  private let failures = Mutex(0)

  init(
    client: CloudClient, store: SaveStore, slot: SaveSlot, configuration: CloudSyncConfiguration, logger: Logger,
    commands: AsyncStream<Command>.Continuation
  ) {
    self.client = client
    self.store = store
    self.slot = slot
    self.configuration = configuration
    self.logger = logger
    self.commands = commands
    let record = SyncRecord.load(store: store, slot: slot, server: client.server.url)
    status.withLock {
      $0.base = record.base
      $0.pending = record.queued.count
      if record.conflict != nil { $0.phase = .conflict }
    }
  }

  func run(_ command: Command) async {
    switch command {
    case .upload(let handle, let epoch, let done):
      defer { done?() }
      guard case .success(let receipt) = await handle.value else { return }
      var record = load()
      if !record.queued.contains(receipt.generation) {
        record.queued.append(receipt.generation)
        store(&record)
      }
      guard epoch == self.epoch.load(ordering: .relaxed) else {
        emit(.uploadCancelled(generation: receipt.generation))
        return
      }
      _ = await cancellable { await self.flush(epoch: epoch) }
    case .flush:
      _ = await flush(epoch: epoch.load(ordering: .relaxed))
    case .catchUp(let stateGeneration, let progress):
      let report = await synchronize(stateGeneration: stateGeneration, mayWrite: { progress.mayWrite() })
      progress.finish(report.restore.map { .restore(generation: $0, reason: "synced with the cloud") } ?? .unchanged)
    case .synchronize(let uploading, let continuation):
      continuation.resume(returning: await synchronize(stateGeneration: nil, uploading: uploading, mayWrite: { true }))
    case .push(let continuation):
      let error = await flush(epoch: epoch.load(ordering: .relaxed))
      continuation.resume(returning: SyncReport(state: nil, restore: nil, error: error))
    case .resolve(let policy, let name, let continuation):
      continuation.resume(returning: await resolveNow(policy: policy, name: name))
    case .barrier(let continuation):
      continuation.resume()
    }
  }

  /// Runs `body` as a task `cancelUploads` can cancel.
  private func cancellable<T: Sendable>(_ body: @escaping @Sendable () async -> T) async -> T {
    let task = Task { await body() }
    inFlight.withLock { $0 = { task.cancel() } }
    defer { inFlight.withLock { $0 = nil } }
    return await task.value
  }

  // MARK: Record and events

  private func load() -> SyncRecord { SyncRecord.load(store: store, slot: slot, server: client.server.url) }

  private func store(_ record: inout SyncRecord) {
    do {
      try record.save(store: store, slot: slot)
    } catch {
      logger.warning("the sync record of slot '\(slot)' could not be written: \(error)")
    }
    let base = record.base
    let pending = record.queued.count
    status.withLock {
      $0.base = base
      $0.pending = pending
    }
  }

  private func emit(_ event: CloudEvent) {
    status.withLock { status in
      status.events.append(event)
      switch event {
      case .uploaded(_, let revision, _):
        status.uploaded.append(revision)
        status.phase = .synced
      case .fastForwarded(let revision, _):
        status.downloaded.append(revision)
        status.phase = .synced
      case .conflict(let report):
        status.conflicts.append(report)
        status.phase = report.result == "pending" ? .conflict : .synced
      case .offline: status.phase = .offline
      case .unauthorized: status.phase = .unauthorized
      case .uploadCancelled, .refused: break
      }
    }
    switch event {
    case .offline, .refused, .unauthorized, .uploadCancelled: logger.notice("\(event.description)")
    default: logger.debug("\(event.description)")
    }
    for handler in eventHandlers.withLock({ $0 }) { handler(event) }
  }

  private func phase(_ phase: CloudStatus.Phase) { status.withLock { $0.phase = phase } }

  // MARK: Local saves

  /// The newest local generation whose bytes pass every check, with its bytes and document.
  private func newestLocal() -> (generation: Int, bytes: [UInt8], document: SaveDocument)? {
    for generation in (try? store.generations(of: slot)) ?? [] {
      guard let bytes = try? store.readBytes(at: store.path(of: slot, generation: generation)),
        let document = try? SaveFileFormat.decode(bytes, signing: store.signing)
      else { continue }
      return (generation, bytes, document)
    }
    return nil
  }

  /// Checks a download before anything local changes: every checksum, the signature under the
  /// store's policy, and the game's own load and validation.
  private func verify(_ bytes: [UInt8], revision: Int) -> Result<SaveDocument, CloudError> {
    do {
      let document = try SaveFileFormat.decode(bytes, path: "r\(revision)", signing: store.signing)
      try configuration.validate?(document)
      return .success(document)
    } catch {
      return .failure(CloudError(.refused, "revision \(revision) of slot '\(slot)' failed verification: \(error)"))
    }
  }

  /// Writes `bytes` as the slot's next generation, durably.
  private func writeLocal(_ bytes: [UInt8]) async -> Result<Int, SaveFileError> {
    await store.save(fileBytes: bytes, slot: slot).value.map(\.generation)
  }

  // MARK: Uploading

  /// Uploads the newest unsynced generation, if any, on the base. Returns the failure, if one.
  @discardableResult
  private func flush(epoch: Int) async -> CloudError? {
    var record = load()
    guard record.conflict == nil else { return nil }  // nothing goes up over an unsettled conflict
    guard let local = newestLocal(), local.generation > (record.baseGeneration ?? 0),
      local.generation != record.refusedGeneration
    else {
      if !record.queued.isEmpty {
        record.queued = []
        store(&record)
      }
      return nil
    }
    if let agreed = record.baseGeneration, agreed != local.generation,
      let bytes = try? store.readBytes(at: store.path(of: slot, generation: agreed)),
      let document = try? SaveFileFormat.decode(bytes, signing: store.signing),
      document.sections == local.document.sections
    {
      // The state is the base's (a quit right after a restore): the server has it already.
      record.baseGeneration = local.generation
      record.queued.removeAll { $0 <= local.generation }
      store(&record)
      phase(.synced)
      return nil
    }
    guard epoch == self.epoch.load(ordering: .relaxed), !Task.isCancelled else {
      emit(.uploadCancelled(generation: local.generation))
      return CloudError(.cancelled, "cancelled before it started")
    }
    phase(.syncing)
    do {
      let created = try await client.upload(slot: slot, bytes: local.bytes, base: record.base)
      failures.withLock { $0 = 0 }
      record = load()
      record.base = created.revision
      record.baseGeneration = local.generation
      record.queued.removeAll { $0 <= local.generation }
      store(&record)
      emit(.uploaded(generation: local.generation, revision: created.revision, base: created.baseRevision))
      return nil
    } catch {
      if error.kind == .conflict, let head = error.head, head.sha256 == sha256Hex(local.bytes) {
        // Our own upload committed but its answer was lost (the server died, the line
        // dropped): the head is these very bytes. Adopt it; uploading again would fork.
        adopt(revision: head.revision, generation: local.generation)
        return nil
      }
      return failed(error, generation: local.generation)
    }
  }

  /// Records that the server's `revision` is exactly local `generation`.
  private func adopt(revision: Int, generation: Int) {
    var record = load()
    record.base = revision
    record.baseGeneration = generation
    record.queued.removeAll { $0 <= generation }
    store(&record)
    emit(.uploaded(generation: generation, revision: revision, base: nil))
  }

  /// Records a failed request; schedules a retry when the server was unreachable.
  private func failed(_ error: CloudError, generation: Int?) -> CloudError {
    let waiting = load().queued.count
    switch error.kind {
    case .offline, .server:
      emit(.offline(message: error.message, waiting: waiting))
      scheduleRetry()
    case .cancelled:
      emit(.uploadCancelled(generation: generation ?? 0))
    case .unauthorized:
      emit(.unauthorized(error.message))
    case .refused:
      if let generation {
        var record = load()
        record.refusedGeneration = generation
        record.queued.removeAll { $0 <= generation }
        store(&record)
      }
      emit(.refused(error.message))
    case .conflict, .notFound:
      phase(.conflict)
    }
    return error
  }

  /// Retries after the backoff: 0.5 s, 1 s, 2 s, … up to the longest wait.
  private func scheduleRetry() {
    let count = failures.withLock {
      $0 += 1
      return $0
    }
    let first = configuration.firstRetry
    let delay = min(configuration.longestRetry, first * Int(pow(2, Double(min(count - 1, 20)))))
    let sleep = configuration.sleep
    let commands = self.commands
    retry.withLock { task in
      guard task == nil else { return }
      task = Task {
        do {
          try await sleep(delay)
        } catch {
          return  // retryNow() or shut down
        }
        self.retry.withLock { $0 = nil }
        commands.yield(.flush)
      }
    }
  }

  // MARK: Catching up

  /// Fetch the head; fast-forward, resolve or upload; repeat while the server moved meanwhile.
  private func synchronize(stateGeneration: Int?, uploading: Bool = true, mayWrite: @Sendable () -> Bool) async
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
  private func fastForward(
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
  private func resolve(
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
  private func decide(
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
  private func resolveNow(policy: ConflictPolicy, name: String) async -> SyncReport {
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

func sha256Hex(_ bytes: [UInt8]) -> String {
  SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
}
