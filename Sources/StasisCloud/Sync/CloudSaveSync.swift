import Logging
import Stasis

/// Cloud saves through the ``SaveCoordinator``: every durable save of its slot goes up (an
/// autosave at most once per interval), in the background as a background task of its own
/// that starts after the save and is cancelled when the budget runs out; on launch and on
/// every return the game is held while the slot catches up with the server — a fast-forward
/// or a resolved conflict is restored before the first step.
///
/// ```swift
/// let coordinator = SaveCoordinator(game: tanks, store: store, codec: tanksCodec, slot: "slot-1")
/// let cloud = CloudSaveSync(
///   coordinator: coordinator, server: CloudServer(url: "http://127.0.0.1:8080", token: token, device: "deck"),
///   configuration: CloudSyncConfiguration(policy: .merge(rules: ["highScore": .max], fallback: .mostRecent)))
/// cloud.sync.onEvent { print($0) }
/// ```
///
/// Its main-thread part is a clock reading and a hand-over: the uploads, the requests and the
/// retries run on the sync's own task.
@MainActor
public final class CloudSaveSync: SaveSyncing {
  /// The slot's sync: its status (``CloudSync/status``), events, and the awaited operations.
  public let sync: CloudSync
  private let clock: any MonotonicClock
  private var lastAutosaveUpload: Duration?

  /// Syncs `coordinator`'s slot with `server`, and makes itself the coordinator's ``SaveCoordinator/sync``.
  /// Downloads and merges are checked with the coordinator's codec (migrations and
  /// validation included) before anything local changes. Requests go over HTTP unless
  /// `transport` says otherwise (the simulation's in-process server, for one).
  public init<Game: SaveableGame>(
    coordinator: SaveCoordinator<Game>, server: CloudServer, configuration: CloudSyncConfiguration = .init(),
    clock: any MonotonicClock = SystemClock(), transport: any CloudTransport = HTTPCloudTransport(),
    logger: Logger = Logger(label: "stasis.cloud")
  ) {
    var configuration = configuration
    let codec = coordinator.codec
    let validate = configuration.validate
    configuration.validate = { document in
      _ = try codec.load(from: document)
      try validate?(document)
    }
    sync = CloudSync(
      client: CloudClient(server: server, transport: transport), store: coordinator.store, slot: coordinator.slot,
      configuration: configuration, logger: logger)
    self.clock = clock
    coordinator.sync = self
  }

  public func saveStarted(_ handle: SaveHandle, reason: SaveReason, application: Application) {
    switch reason {
    case .autosave:
      let now = clock.now()
      if let last = lastAutosaveUpload, now - last < sync.configuration.autosaveUploadInterval { return }
      lastAutosaveUpload = now
      sync.upload(after: handle)
    case .manual:
      sync.upload(after: handle)
    case .background, .terminate:
      // Its own background task: the app stays up until the upload ends, and the budget's
      // expiry cancels it (the save is already whole on disk; the upload waits for next time).
      let sync = self.sync
      let id = application.beginCancellableBackgroundTask(named: "upload \(handle.slot)") { sync.cancelUploads() }
      sync.upload(after: handle) { application.endBackgroundTask(id) }
    }
  }

  public func resumeUploads(application: Application) {
    sync.retryNow()
  }

  public func catchUp(stateGeneration: Int, application: Application) -> CatchUp {
    let progress = CatchUp()
    sync.catchUp(stateGeneration: stateGeneration, progress: progress)
    return progress
  }
}
