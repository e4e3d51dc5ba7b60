import Crypto
import Foundation
import Logging
@_spi(Simulation) import Stasis
import Synchronization

/// How a slot syncs: its conflict policy, the game's decision for `manual`, how the state is
/// checked, how often autosaves go up and how retries back off.
public struct CloudSyncConfiguration: Sendable {
  /// How conflicts are resolved (`ConflictPolicy`); `mostRecent` by default.
  public var policy: ConflictPolicy
  /// The game's decision for `ConflictPolicy.manual` (and for a merge whose fallback is
  /// manual); nil, or a nil answer, leaves the slot in conflict.
  public var onConflict: (@Sendable (Conflict) async -> ConflictDecision?)?
  /// Checks that a document is a state the game loads (its codec, migrations, validation);
  /// a download or a merge that fails it is refused. ``CloudSync/init(coordinator:credentials:configuration:clock:transport:logger:)`` sets it from the codec.
  public var validate: (@Sendable (SaveDocument) throws -> Void)?
  /// The game's summary of a merged document's state, as its `summary(of:)` makes it: a merge
  /// that combined the two sides gets the summary of what it made, never one side's. It runs
  /// on the sync's task, never the main thread (which a game may be blocking in
  /// `waitForCatchUp()` or `quit()`), so give a function of the state alone:
  /// `{ try TanksSummary.of(codec.state(from: $0)) }`. Without one, a combined merge keeps the
  /// winner's summary with the longer play time and the higher progress; a merge that is one
  /// side whole always carries that side's.
  public var summarize: (@Sendable (SaveDocument) async throws -> SaveSummary)?
  /// An autosave is uploaded at most once per this interval; background, quit and manual
  /// saves always are.
  public var autosaveUploadInterval: Duration
  /// The first retry after the server could not be reached; each next one doubles.
  public var firstRetry: Duration
  /// The longest wait between retries.
  public var longestRetry: Duration
  /// How retries wait; tests replace it to drive retries without real time.
  public var sleep: @Sendable (Duration) async throws -> Void
  /// The rules the sync decides by (``SyncRules``): the defaults, except in the simulation's
  /// build (`SyncRules.swift`, this module's one seam).
  var rules = SyncRules()
  /// The game's codec, as the coordinator's sync decodes a download or a merge with it: the
  /// state goes on with the file (``VerifiedSave``), and the restore does not decode it again.
  var decodeState: (@Sendable (SaveDocument) throws -> any Sendable)?
  /// How files go over the wire: deltas (on by default, against a server that takes them) and
  /// the size of a resumable upload's parts. `transfer.deltas = false` sends whole files.
  public var transfer = TransferOptions()

  /// Creates a configuration.
  public init(
    policy: ConflictPolicy = .mostRecent, onConflict: (@Sendable (Conflict) async -> ConflictDecision?)? = nil,
    validate: (@Sendable (SaveDocument) throws -> Void)? = nil,
    summarize: (@Sendable (SaveDocument) async throws -> SaveSummary)? = nil,
    autosaveUploadInterval: Duration = .seconds(60),
    firstRetry: Duration = .milliseconds(500), longestRetry: Duration = .seconds(60),
    sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
  ) {
    self.policy = policy
    self.onConflict = onConflict
    self.validate = validate
    self.summarize = summarize
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
/// A game syncs through its `SaveCoordinator`: made with ``init(coordinator:credentials:configuration:clock:transport:logger:)``,
/// the sync becomes the coordinator's `SaveCoordinator.sync`. Every durable save of the slot
/// then goes up (an autosave at most once per interval), in the background as a background
/// task of its own that starts after the save and is cancelled when the budget runs out; on
/// launch and on every return the game is held while the slot catches up with the server — a
/// fast-forward or a resolved conflict is restored before the first step.
///
/// ```swift
/// let coordinator = SaveCoordinator(game: tanks, store: store, codec: tanksCodec, slot: "slot-1")
/// let cloud = CloudSync(
///   coordinator: coordinator, credentials: CloudCredentials(url: "http://127.0.0.1:8080", token: token, device: "deck"),
///   configuration: CloudSyncConfiguration(policy: .merge(rules: ["highScore": .max], fallback: .mostRecent)))
/// cloud.onEvent { print($0) }
/// ```
///
/// Its main-thread part is a clock reading and a hand-over. A tool syncs a slot directly:
///
/// ```swift
/// let sync = CloudSync(client: CloudClient(credentials: credentials), store: store, slot: "autosave")
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
  /// Paces autosave uploads (``CloudSyncConfiguration/autosaveUploadInterval``).
  private let clock: any MonotonicClock
  private let lastAutosaveUpload = Mutex<Duration?>(nil)

  /// Creates the sync of `slot` and starts its worker.
  public init(
    client: CloudClient, store: SaveStore, slot: SaveSlot, configuration: CloudSyncConfiguration = .init(),
    clock: any MonotonicClock = SystemClock(), logger: Logger = Logger(label: "stasis.cloud")
  ) {
    var client = client
    client.transfer = configuration.transfer
    self.client = client
    self.store = store
    self.slot = slot
    self.configuration = configuration
    self.clock = clock
    let (stream, continuation) = AsyncStream<SyncEngine.Command>.makeStream()
    commands = continuation
    let engine = SyncEngine(
      client: client, store: store, slot: slot, configuration: configuration, logger: logger, commands: continuation)
    self.engine = engine
    // High priority, as SettingsSync's round trip: on Linux a task of medium priority starts
    // only after every job queued on the pool before it, and a quit waits for this task's
    // uploads inside its budget.
    Task.detached(priority: .high) {
      for await command in stream { await engine.run(command) }
    }
  }

  /// Syncs `coordinator`'s slot with the server `credentials` name, and makes itself the coordinator's
  /// `SaveCoordinator.sync`. Downloads and merges are checked with the coordinator's codec
  /// (migrations and validation included) before anything local changes. Requests go over
  /// HTTP unless `transport` says otherwise (the simulation's in-process server, for one).
  @MainActor
  public convenience init<Game: SaveableGame>(
    coordinator: SaveCoordinator<Game>, credentials: CloudCredentials, configuration: CloudSyncConfiguration = .init(),
    clock: any MonotonicClock = SystemClock(), transport: any CloudTransport = URLSessionCloudTransport(),
    logger: Logger = Logger(label: "stasis.cloud")
  ) {
    var configuration = configuration
    let codec = coordinator.codec
    configuration.decodeState = { document in
      let (state, report) = try codec.load(from: document)
      return DecodedState(state: state, report: report)
    }
    self.init(
      client: CloudClient(credentials: credentials, transport: transport), store: coordinator.store,
      slot: coordinator.slot,
      configuration: configuration, clock: clock, logger: logger)
    coordinator.sync = self
  }

  deinit {
    commands.finish()
    // A sync let go (a session that ended) says nothing more, even while what it began still
    // finishes on its task: its events never print in the next session's output.
    engine.removeEventHandlers()
  }

  /// The slot's cloud state now: phase, base, what went up and down, conflicts, pending.
  public var status: CloudStatus { engine.currentStatus }

  /// Adds a handler called with each event as it happens, on the sync's task (never the main
  /// thread), until this sync is released. A method that adds, unlike the coordinator's
  /// `SaveCoordinator.onEvent` property: any number of handlers, on any thread.
  ///
  /// ```swift
  /// cloud.onEvent { event in print("cloud: \(event)") }  // "cloud: uploaded generation 3 as r12 (base r11)"
  /// ```
  public func onEvent(_ body: @escaping @Sendable (CloudEvent) -> Void) {
    engine.addEventHandler(body)
  }

  /// Adds a handler called with each event on the game's thread, inside `application`'s
  /// `Application.update()`, in the order the events happened: a game loop that holds its
  /// thread hears of its uploads, downloads and conflicts at its next frame, with the rest of
  /// what the library delivers. Any thread; until this sync is released.
  ///
  /// ```swift
  /// cloud.onEvent(in: app) { event in hud.show("cloud: \(event)") }
  /// ```
  public func onEvent(in application: Application, _ body: @escaping @MainActor @Sendable (CloudEvent) -> Void) {
    engine.addEventHandler { event in application.deliverOnUpdate { body(event) } }
  }

  // MARK: From the main thread: returns at once

  /// Queues the upload of the save `handle` writes, once it is durable; `done` is called when
  /// the upload has ended (or was not needed). Never before the save: a failed or cancelled
  /// save uploads nothing.
  public func upload(after handle: SaveHandle, done: (@Sendable () -> Void)? = nil) {
    handle.keepWrittenFile()  // the upload sends what was written, without reading it back
    commands.yield(.upload(handle, epoch: engine.uploadEpoch, done: done))
  }

  /// Starts catching up for a game held at `stateGeneration` (nil: no game to protect, as
  /// for a tool); `progress` is finished with what to restore.
  public func catchUp(stateGeneration: Int?, progress: CatchUp) {
    commands.yield(.catchUp(stateGeneration, progress))
  }

  /// Cancels the upload in flight and those queued before now (the budget ran out); the
  /// saves stay queued in the record and go up on the next catch-up.
  public func cancelUploads() {
    engine.cancelUploads()
  }

  /// Retries waiting uploads now instead of at the next backoff step.
  public func retryNow() {
    engine.cancelScheduledRetry()
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

  /// Settles the slot's conflict by `policy` against the server's head now (`stasis cloud
  /// resolve --take merge`); the report names the policy (`ConflictPolicy.kind`).
  public func resolve(with policy: ConflictPolicy) async -> SyncReport {
    await withCheckedContinuation { continuation in
      commands.yield(.resolve(policy, policy.name, taking: nil, continuation))
    }
  }

  /// Settles the slot's conflict with the side the player chose (`stasis cloud resolve --take
  /// ours`): ours goes up on top of theirs, theirs is written here with ours kept, the base, or
  /// the game's own save. The report says "take ours" (or theirs, base, the game's save).
  public func resolve(taking decision: ConflictDecision) async -> SyncReport {
    let name: String
    switch decision {
    case .side(let side): name = "take \(side.rawValue)"
    case .document: name = "the game's save"
    }
    return await withCheckedContinuation { continuation in
      commands.yield(.resolve(.manual, name, taking: decision, continuation))
    }
  }

  /// Settles the slot's conflict by `policy`, named `name` in the report.
  @available(*, deprecated, message: "use resolve(with:), named by its policy, or resolve(taking:) for a chosen side")
  public func resolve(with policy: ConflictPolicy, named name: String) async -> SyncReport {
    await withCheckedContinuation { continuation in
      commands.yield(.resolve(policy, name, taking: nil, continuation))
    }
  }

  /// Waits until every command handed over so far has run.
  public func settle() async {
    await withCheckedContinuation { continuation in commands.yield(.barrier(continuation)) }
  }

  /// How the slot stands with the server, from one request (`stasis cloud status`).
  @_spi(Plumbing) public func state() async throws(CloudError) -> (
    state: SyncState, record: SyncRecord, head: RemoteRevision?
  ) {
    let record = SyncRecord.load(store: store, slot: slot, server: client.credentials)
    let heads = try await client.slots()
    let head = heads.first { $0.slot == slot.name }
    let local = store.newestGeneration(of: slot)
    return (SyncState.classify(record: record, newestLocal: local, head: head?.revision), record, head)
  }
}

// The coordinator's hooks: told of every save as it starts, asked to catch up on launch and
// return. Called on the main thread; each only reads the clock and hands over a command.
extension CloudSync: SaveSyncing {
  public func saveStarted(_ handle: SaveHandle, reason: SaveReason, application: Application) {
    switch reason {
    case .autosave:
      let now = clock.now()
      let due = lastAutosaveUpload.withLock { last in
        if let previous = last, now - previous < configuration.autosaveUploadInterval { return false }
        last = now
        return true
      }
      if due { upload(after: handle) }
    case .manual:
      upload(after: handle)
    case .background, .terminate:
      // Its own background task: the app stays up until the upload ends, and the budget's
      // expiry cancels it (the save is already whole on disk; the upload waits for next time).
      let id = application.beginCancellableBackgroundTask(named: "upload \(handle.slot)") { self.cancelUploads() }
      upload(after: handle) { application.endBackgroundTask(id) }
    }
  }

  public func resumeUploads(application: Application) {
    retryNow()
  }

  public func beganNewHistory(application: Application) {
    // The slot's newest generation now, read before the new game's first save: every one
    // after it is the new history's.
    commands.yield(.beganNewHistory(after: store.newestGeneration(of: slot) ?? 0))
  }

  public func restoredOlderGeneration(_ generation: Int, application: Application) {
    commands.yield(.restoredOlderGeneration(generation, newest: store.newestGeneration(of: slot) ?? generation))
  }

  public func catchUp(stateGeneration: Int, application: Application) -> CatchUp {
    let progress = CatchUp()
    catchUp(stateGeneration: stateGeneration, progress: progress)
    return progress
  }
}
