import Crypto
import Foundation
import Logging
@_spi(Plumbing) @_spi(Simulation) import Stasis
import Synchronization

/// The worker: every command runs to its end before the next starts, so no two requests of
/// one slot ever race each other.
final class SyncEngine: Sendable {
  enum Command: Sendable {
    case upload(SaveHandle, epoch: Int, done: (@Sendable () -> Void)?)
    case catchUp(Int?, CatchUp)
    case flush
    case synchronize(uploading: Bool, CheckedContinuation<SyncReport, Never>)
    case push(CheckedContinuation<SyncReport, Never>)
    case resolve(ConflictPolicy, String, taking: ConflictDecision?, CheckedContinuation<SyncReport, Never>)
    case barrier(CheckedContinuation<Void, Never>)
    case beganNewHistory(after: Int)
    case restoredOlderGeneration(Int, newest: Int)
  }

  let client: CloudClient
  let store: SaveStore
  let slot: SaveSlot
  let configuration: CloudSyncConfiguration
  let logger: Logger
  let commands: AsyncStream<Command>.Continuation
  /// What the game and tools see of the slot (``Observed``): its status and who hears its events.
  let observed = Mutex(Observed())
  /// What other threads reach to stop work (``Requests``): the upload epoch, the upload in
  /// flight and the retry waiting.
  let requests = Mutex(Requests())
  /// What the worker keeps between commands (``WorkerState``), in one place behind one lock.
  let worker: Mutex<WorkerState>

  /// What is seen from outside: the status the game reads on its thread, and the handlers
  /// every event goes to (called outside the lock).
  struct Observed {
    var status = CloudStatus()
    var handlers: [@Sendable (CloudEvent) -> Void] = []
  }

  /// What `cancelUploads`, `retryNow` and the backoff's timer reach from other threads, apart
  /// from the worker's state so that a cancel never waits for the worker's lock holder.
  struct Requests {
    /// Bumped by `cancelUploads`: uploads handed over before it are dropped.
    var epoch = 0
    /// Cancels the upload in flight, for `cancelUploads`.
    var cancelInFlight: (@Sendable () -> Void)?
    /// The retry waiting for its backoff.
    var retry: Task<Void, Never>?
    /// Tells one scheduled retry from the next.
    var retryNumber: UInt64 = 0
  }

  /// What the slot's worker keeps between commands: its record, what it knows of the server,
  /// and its backoff. Only the worker's one task changes it (commands run one at a time), so
  /// the lock is for the readers on other threads (`heldRecord()`, a retry's schedule).
  struct WorkerState {
    /// The slot's record as last written: read from disk once, then kept here, since this
    /// worker is the only one that writes it while the game runs.
    var record: SyncRecord
    /// The record as it is on disk: what a crash would leave.
    var durableRecord: SyncRecord
    /// Requests failed in a row, for the backoff; any answer from the server resets it.
    var failures = 0
    /// The file of the revision last agreed with the server, kept in memory: the base of the
    /// next delta up and down, whether or not the store has pruned its generation since (a game
    /// that autosaves every tick and uploads once a minute prunes it long before). One file.
    var agreedFile: HeldRevision?
    /// True while the saves going up are near the server's upload limit (said once).
    var nearLimit = false
    /// The slot's revision list as this pass fetched it: a catch-up lists revisions at most
    /// once (to recognise its own lost uploads, then to find a merge's base). Cleared at each pass.
    var listedRevisions: [RemoteRevision]?
  }

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
    let record = SyncRecord.load(store: store, slot: slot, server: client.credentials)
    worker = Mutex(WorkerState(record: record, durableRecord: record))
    observed.withLock {
      $0.status.base = record.base
      $0.status.pending = record.queued.count
      if record.conflict != nil { $0.status.state = .conflict }
    }
  }

  /// The slot's cloud state now.
  var currentStatus: CloudStatus { observed.withLock { $0.status } }

  /// Adds a handler that every event is sent to.
  func addEventHandler(_ body: @escaping @Sendable (CloudEvent) -> Void) {
    observed.withLock { $0.handlers.append(body) }
  }

  /// Lets go of every handler: nothing more is heard (a sync released).
  func removeEventHandlers() {
    observed.withLock { $0.handlers.removeAll() }
  }

  /// The upload epoch now: an upload handed over with an older one is dropped.
  var uploadEpoch: Int { requests.withLock { $0.epoch } }

  /// Drops the uploads handed over before now and cancels the one in flight.
  func cancelUploads() {
    let cancel = requests.withLock { requests in
      requests.epoch += 1
      return requests.cancelInFlight
    }
    cancel?()
  }

  /// Cancels the retry waiting for its backoff (a flush comes next instead).
  func cancelScheduledRetry() {
    // Cancelled outside the lock: a cancellation runs the sleep's handlers on this thread.
    let waiting = requests.withLock { requests in
      defer { requests.retry = nil }
      return requests.retry
    }
    waiting?.cancel()
  }

  func run(_ command: Command) async {
    switch command {
    case .upload(let handle, let epoch, let done):
      defer { done?() }
      guard case .success(let receipt) = await handle.value else { return }
      var record = heldRecord()
      if !record.queued.contains(receipt.generation) {
        // Kept in memory only: written, and flushed, with the upload's own record write (one
        // per attempt), or by `persistQueued()` below when the upload does not go.
        record.queued.append(receipt.generation)
        keepInMemory(record)
      }
      defer { persistQueued() }
      guard epoch == uploadEpoch else {
        emit(.uploadCancelled(generation: receipt.generation))
        return
      }
      let written = handle.takeWrittenFile()
      _ = await cancellable(epoch: epoch) { await self.flush(epoch: epoch, written: written) }
    case .flush:
      _ = await flush(epoch: uploadEpoch)
    case .catchUp(let stateGeneration, let progress):
      // The progress is finished as soon as something is written (the game restores it while
      // the upload goes on), or here when nothing was.
      _ = await synchronize(gate: WriteGate(stateGeneration: stateGeneration, progress: progress))
      progress.finish(.unchanged)
    case .synchronize(let uploading, let continuation):
      continuation.resume(returning: await synchronize(gate: WriteGate(), uploading: uploading))
    case .push(let continuation):
      let error = await flush(epoch: uploadEpoch)
      continuation.resume(returning: SyncReport(state: nil, restore: nil, error: error))
    case .resolve(let policy, let name, let taking, let continuation):
      continuation.resume(returning: await resolveNow(policy: policy, name: name, taking: taking))
    case .barrier(let continuation):
      continuation.resume()
    case .beganNewHistory(let after):
      beginNewHistory(after: after)
    case .restoredOlderGeneration(let generation, let newest):
      // The synced generation, or an unsynced one after it, still continues the base.
      if let agreed = heldRecord().baseGeneration, generation >= agreed { return }
      beginNewHistory(after: newest)
    }
  }

  /// The generations after `after` begin a history of their own. A mark already set stays
  /// where it is when it is lower: what came after it is a new history too.
  func beginNewHistory(after: Int) {
    var record = heldRecord()
    let mark = min(record.newHistoryAfter ?? after, after)
    guard record.newHistoryAfter != mark else { return }
    record.newHistoryAfter = mark
    writeRecord(&record)
  }

  /// Runs `body` as a task `cancelUploads` can cancel: the task is registered and the epoch read
  /// again under one lock, so a cancel that came after `epoch` was read either finds the task or
  /// is seen in the epoch.
  func cancellable<T: Sendable>(epoch: Int, _ body: @escaping @Sendable () async -> T) async -> T {
    let task = Task { await body() }
    let current = requests.withLock { requests in
      requests.cancelInFlight = { task.cancel() }
      return requests.epoch
    }
    if current != epoch { task.cancel() }
    defer { requests.withLock { $0.cancelInFlight = nil } }
    return await task.value
  }

  // MARK: Record and events

  /// The slot's record as this engine holds it, in memory: what it last wrote (or read on
  /// launch). Not a read of the slot file `.cloud` (that is `SyncRecord.load`).
  func heldRecord() -> SyncRecord { worker.withLock { $0.record } }

  /// Writes the slot's record, atomically and durably, and keeps it for the next `heldRecord()`.
  /// With `durable: false` it is written atomically but not flushed (no fsync): the next
  /// process reads it, and a crash of the machine may leave the record before, which is for
  /// what is found again (an upload's `201`: the revision is recognised by the SHA-256 the
  /// record remembered, durably, before it went).
  func writeRecord(_ record: inout SyncRecord, durable: Bool = true) {
    record.sequence = heldRecord().sequence + 1
    do {
      try record.save(store: store, slot: slot, durable: durable)
      if durable {
        let written = record
        worker.withLock { $0.durableRecord = written }
      }
    } catch {
      logger.warning("the sync record of slot '\(slot)' could not be written: \(error)")
    }
    keepInMemory(record)
  }

  /// Keeps `record` for the next `heldRecord()` and the status, without writing it: what the next
  /// durable write carries (a save queued for the upload that writes the record anyway).
  func keepInMemory(_ record: SyncRecord) {
    worker.withLock { $0.record = record }
    let base = record.base
    let pending = record.queued.count
    observed.withLock {
      $0.status.base = base
      $0.status.pending = pending
    }
  }

  /// Says so (once, until a save goes below) when a save of `bytes` is near the largest file
  /// the server takes: the limit applies to the file, whatever a delta sends.
  func warnNearLimit(_ bytes: Int) {
    guard let limit = client.serverUploadLimit else { return }
    let near = bytes >= limit - limit / 10
    let first = worker.withLock { state in
      defer { state.nearLimit = near }
      return near && !state.nearLimit
    }
    if first { emit(.nearUploadLimit(bytes: bytes, limit: limit)) }
  }

  /// Writes the record when a generation waits in it that the record on disk does not show
  /// waiting: a save that did not go up (offline, a conflict) is never forgotten by a crash.
  func persistQueued() {
    var record = heldRecord()
    let durable = worker.withLock { $0.durableRecord }
    if record.queued.contains(where: { !durable.queued.contains($0) && record.isUnsynced($0) }) { writeRecord(&record) }
  }

  func emit(_ event: CloudEvent) {
    let handlers = observed.withLock { observed in
      observed.status.apply(event)
      return observed.handlers
    }
    switch event {
    case .nearUploadLimit: logger.warning("\(event.description)")
    case .offline, .refused, .unauthorized, .uploadCancelled: logger.notice("\(event.description)")
    default: logger.debug("\(event.description)")
    }
    for handler in handlers { handler(event) }
  }

  func phase(_ state: SyncState) { observed.withLock { $0.status.state = state } }

  // MARK: Local saves

  /// The newest local generation whose bytes pass every check, with its bytes and document.
  func newestLocal() -> (generation: Int, bytes: [UInt8], document: SaveDocument)? {
    for generation in (try? store.generations(of: slot)) ?? [] {
      // As a load reads it: an unsigned file in a signed slot (a tool's edit) never goes up.
      guard let (bytes, document) = try? store.verifiedFile(slot: slot, generation: generation) else { continue }
      return (generation, bytes, document)
    }
    return nil
  }

  /// The revision this device's record agrees it holds (the base), with that generation's
  /// bytes as they are on disk: what a delta is made from and applied to. Nil when the base is
  /// unknown or its generation is gone; a damaged one only makes a delta the server refuses
  /// (its checksum names the base), and the upload goes again whole.
  /// `local` is the newest local file as this pass read it: when it is the base's generation,
  /// its bytes are the base's, and the file is not read again.
  func heldBase(_ record: SyncRecord, local: (generation: Int, bytes: [UInt8], document: SaveDocument)? = nil)
    -> HeldRevision?
  {
    guard let revision = record.base else { return nil }
    if let agreed = worker.withLock({ $0.agreedFile }), agreed.revision == revision { return agreed }
    if let local, local.generation == record.baseGeneration {
      return HeldRevision(revision: revision, bytes: local.bytes)
    }
    guard let generation = record.baseGeneration, let bytes = try? store.fileBytes(slot: slot, generation: generation)
    else { return nil }
    return HeldRevision(revision: revision, bytes: bytes)
  }

  /// Keeps `bytes` as the file of `revision`, the one just agreed.
  func agreed(_ revision: Int, file bytes: [UInt8]) {
    worker.withLock { $0.agreedFile = HeldRevision(revision: revision, bytes: bytes) }
  }

  /// Checks a download before anything local changes: every checksum, the signature under the
  /// store's policy, and the game's own load and validation.
  func verify(_ bytes: [UInt8], revision: Int) -> Result<VerifiedSave, CloudError> {
    do {
      store.counts.count(OperationCounts.decode("r\(revision)"))
      let read = try SaveFileFormat.decodeWithSignature(bytes, path: "r\(revision)", signing: store.signing)
      let decoded = try check(read.document, named: "r\(revision)")
      return .success(VerifiedSave(document: read.document, signed: read.signature != .unsigned, decoded: decoded))
    } catch {
      return .failure(.refusedLocally("revision \(revision) of slot '\(slot)' failed verification", error))
    }
  }

  /// The game's own checks of `document` (named `name` in the counts): its state decoded by the
  /// game's codec (migrations and validation included), when the sync was made for a
  /// coordinator, then the configuration's `validate`. Returns the decoded state, which goes on
  /// with the document (``VerifiedSave``) so that nothing decodes it again.
  func check(_ document: SaveDocument, named name: String) throws -> (any Sendable)? {
    var decoded: (any Sendable)?
    if let decodeState = configuration.decodeState {
      store.counts.count(OperationCounts.stateDecode(name))
      decoded = try decodeState(document)
    }
    try configuration.validate?(document)
    return decoded
  }

  /// Writes `bytes` as the slot's next generation, durably, only if the newest generation is
  /// still `expected` (checked under the slot's lock): nothing is written over a save unseen.
  /// `file` is their document as already checked: the bytes are not decoded again.
  func writeLocal(_ bytes: [UInt8], _ file: VerifiedSave, ifNewestIs expected: Int) async -> Result<Int, SaveFileError>
  {
    await store.save(fileBytes: bytes, slot: slot, ifNewestIs: expected, decoded: (file.document, file.signed)).value
      .map(\.generation)
  }

  // MARK: Uploading

  /// Uploads the newest unsynced generation, if any, on the base. Returns the failure, if one.
  /// `written` is the save that asked for it, as it was written: when it is still the slot's
  /// newest generation it is sent as it is, without listing, reading and decoding the slot.
  @discardableResult
  func flush(epoch: Int, written: WrittenFile? = nil) async -> CloudError? {
    var record = heldRecord()
    guard record.conflict == nil else {  // nothing goes up over an unsettled conflict
      return CloudError(.conflict, "slot '\(slot)' has an unsettled conflict: resolve it first")
    }
    let newest =
      if let written, store.newestGeneration(of: slot) == written.generation {
        (generation: written.generation, bytes: written.bytes, document: written.document)
      } else {
        newestLocal()
      }
    guard let local = newest, record.isUnsynced(local.generation), local.generation != record.refusedGeneration
    else {
      if !record.queued.isEmpty {
        record.queued = []
        writeRecord(&record)
      }
      return nil
    }
    let held = heldBase(record)
    if held != nil, let agreed = record.baseGeneration, agreed != local.generation,
      let base = held.flatMap({ held in held.bytes.withUnsafeBytes { try? SaveFileFormat.readHeader($0) } }),
      let ours = local.bytes.withUnsafeBytes({ try? SaveFileFormat.readHeader($0) }),
      SectionEntry.sameContent(base.sections, ours.sections),
      let first = base.sections.first, let theirsFirst = ours.sections.first, let last = base.sections.last,
      held!.bytes[first.offset..<(last.offset + last.length)]
        == local.bytes[theirsFirst.offset..<(theirsFirst.offset + last.offset + last.length - first.offset)]
    {
      // The state is the base's (a quit right after a restore): the server has it already.
      record.baseGeneration = local.generation
      record.queued.removeAll { $0 <= local.generation }
      writeRecord(&record)
      phase(.synced)
      return nil
    }
    guard epoch == uploadEpoch, !Task.isCancelled else {
      emit(.uploadCancelled(generation: local.generation))
      return CloudError(.cancelled, "cancelled before it started")
    }
    phase(.syncing)
    warnNearLimit(local.bytes.count)
    // Remembered before it goes: if its answer is lost, the revision is still known as ours.
    let attempt = SentUpload(generation: local.generation, sha256: sha256Hex(local.bytes), base: record.base)
    let remembered = record.sending(generation: attempt.generation, sha256: attempt.sha256)
    writeRecord(&record)  // the attempt's one durable record write: what it sends, and what waits
    do {
      // A conflict's resolution waiting to go up still names the revision it beat.
      let loser = record.loser.flatMap { $0 == record.base ? $0 : nil }
      let created = try await client.upload(
        slot: slot, bytes: local.bytes, base: record.base, loser: loser, parent: record.parent(of: local.generation),
        deltaFrom: held)
      answered()
      record = heldRecord()
      record.agree(revision: created.revision, generation: local.generation)
      agreed(created.revision, file: local.bytes)
      // Not flushed: a crash of the machine leaves the record saying what was sent, and the
      // revision is recognised as this device's own (recogniseOwnUploads).
      writeRecord(&record, durable: false)
      emit(.uploaded(generation: local.generation, revision: created.revision, base: created.baseRevision))
      return nil
    } catch {
      if error.kind != .offline { answered() }
      if error.neverSent, remembered {
        // This attempt never left, so it is not on the server: forgotten, it cannot push an
        // earlier attempt whose answer was lost out of the bounded list (found by stasis-sim).
        record = heldRecord()
        record.sent.removeAll { $0 == attempt }
        writeRecord(&record)
      }
      if error.kind == .conflict, await recogniseOwnUploads(newest: (local.generation, local.bytes)) {
        return await flush(epoch: epoch)  // the newer saves go up on our own revision
      }
      if error.kind == .notFound, record.base != nil {
        // The slot went from the server (deleted there): ours goes up as a new slot.
        record = heldRecord()
        record.base = nil
        record.baseGeneration = nil
        record.parent = .base
        writeRecord(&record)
        return await flush(epoch: epoch)
      }
      return failed(error, generation: local.generation)
    }
  }

  /// After a `412`, or a head that moved while this device is ahead: is one of the server's
  /// revisions since the base this device's own upload, committed though its answer was lost
  /// (the server died, the line dropped)? Known by the SHA-256 and the base of what was sent
  /// (the record's ``SyncRecord/sent``, and the newest local generation), whichever
  /// generation it was. The newest such revision becomes the base, as if its `201` had come,
  /// and what was saved since goes up on it: a device never conflicts with itself. (Another
  /// device may have built on it since: then that is a conflict, on the right base.)
  func recogniseOwnUploads(newest local: (generation: Int, bytes: [UInt8])?) async -> Bool {
    var record = heldRecord()
    var mine = configuration.rules.recognisesOnlyNewest ? [] : record.sent
    if let local {
      mine.append(SentUpload(generation: local.generation, sha256: sha256Hex(local.bytes), base: record.base))
    }
    guard let history = try? await listRevisions() else { return false }
    for revision in history where revision.revision > (record.base ?? 0) {  // newest first
      guard let upload = mine.first(where: { $0.sha256 == revision.sha256 && $0.base == revision.baseRevision })
      else { continue }
      record = heldRecord()
      record.agree(revision: revision.revision, generation: upload.generation)
      writeRecord(&record)
      emit(.uploaded(generation: upload.generation, revision: revision.revision, base: upload.base))
      return true
    }
    return false
  }

  /// The slot's revisions, newest first (nil: no such slot): fetched, unless this pass listed
  /// them already and the list holds `revision` (the head it is about).
  func listRevisions(holding revision: Int? = nil) async throws(CloudError) -> [RemoteRevision]? {
    if let revision, let listed = worker.withLock({ $0.listedRevisions }),
      listed.contains(where: { $0.revision == revision })
    {
      return listed
    }
    let listed = try await client.revisions(slot: slot)
    worker.withLock { $0.listedRevisions = listed }
    return listed
  }

  /// The server answered: the backoff starts again from its first step.
  func answered() { worker.withLock { $0.failures = 0 } }

  /// Records a failed request; schedules a retry when the server was unreachable.
  func failed(_ error: CloudError, generation: Int?) -> CloudError {
    let waiting = heldRecord().queued.count
    switch error.kind {
    case .offline, .server, .unavailable:
      // (A 503's message says "the server is unavailable": the event tells it from a network
      // that is down, and from a conflict, which is never retried this way.)
      emit(.offline(error, waiting: waiting))
      scheduleRetry(notBefore: error.retryAfter)
    case .cancelled:
      emit(.uploadCancelled(generation: generation ?? 0))
    case .unauthorized:
      emit(.unauthorized(error))
    case .refused:
      if let generation {
        var record = heldRecord()
        record.refusedGeneration = generation
        record.queued.removeAll { $0 <= generation }
        writeRecord(&record)
      }
      emit(.refused(error))
    case .conflict:
      // Another device saved first: settled at the next catch-up (a launch, a return, `pull`).
      phase(.conflict)
    default:  // no such slot or revision, and kinds a request never fails with here
      emit(.refused(error))
    }
    return error
  }

  /// Retries after the backoff: 0.5 s, 1 s, 2 s, … up to the longest wait, and never sooner
  /// than the server's `Retry-After` (`notBefore`), within the longest wait.
  func scheduleRetry(notBefore: Duration? = nil) {
    let count = worker.withLock {
      $0.failures += 1
      return $0.failures
    }
    let first = configuration.firstRetry
    let backoff = first * Int(pow(2, Double(min(count - 1, 20))))
    let delay = min(configuration.longestRetry, max(backoff, notBefore ?? .zero))
    let sleep = configuration.sleep
    let commands = self.commands
    requests.withLock { requests in
      guard requests.retry == nil else { return }
      requests.retryNumber &+= 1
      let number = requests.retryNumber
      requests.retry = Task {
        let slept = (try? await sleep(delay)) != nil
        // Done waiting, either way: the next failure may schedule again (unless a newer retry
        // took this one's place meanwhile).
        self.requests.withLock { if $0.retryNumber == number { $0.retry = nil } }
        if slept { commands.yield(.flush) }  // cancelled: retryNow() flushes itself
      }
    }
  }
}

func sha256Hex(_ bytes: [UInt8]) -> String {
  hexEncoded(SHA256.hash(data: bytes))
}

extension CloudStatus {
  /// What `event` changes in the status: its histories, and the phase it leaves the slot in.
  mutating func apply(_ event: CloudEvent) {
    events.append(event, keepingNewest: CloudStatus.historyLimit)
    switch event {
    case .uploaded(_, let revision, _):
      uploaded.append(revision, keepingNewest: CloudStatus.historyLimit)
      state = .synced
    case .fastForwarded(let revision, _):
      downloaded.append(revision, keepingNewest: CloudStatus.historyLimit)
      state = .synced
    case .conflict(let report):
      conflicts.append(report, keepingNewest: CloudStatus.historyLimit)
      state = report.outcome == .pending ? .conflict : .synced
    case .offline: state = .offline
    case .unauthorized: state = .unauthorized
    case .uploadCancelled:
      // Back to where it was before it talked to the server: the save waits (`pending`).
      if state == .syncing { state = base == nil ? .idle : .synced }
    case .refused, .nearUploadLimit: break
    }
  }
}
