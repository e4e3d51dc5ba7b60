import Logging
import Stasis

/// What one settings round trip came to.
public enum SettingsSyncOutcome: Sendable, Equatable {
  /// The server merged this device's settings into the player's and its answer was merged
  /// here. `changed` are the keys whose value changed on this device: another device's changes.
  case merged(changed: [String])
  /// The server has no settings routes (a `stasis-server` from before them): the settings stay
  /// on this device, and the sync asks no more until the game is launched again. Slot sync is
  /// not affected.
  case unsupported
  /// The server could not be reached or refused the request; the next launch, return or
  /// change tries again.
  case failed(CloudError)
  /// The server's answer could not be written to the settings file; tried again as for
  /// ``failed(_:)``.
  case notWritten(SaveFileError)
}

/// Carries a game's settings (`SettingsStore`) between the player's devices through
/// `stasis-server` (15.6): one round trip sends this device's settings and merges the server's
/// answer, key by key — the last writer wins by `SettingsStamp`, so settings never conflict.
///
/// A round trip runs on launch (when the sync is made), on every return to the foreground,
/// ``changeDelay`` after a change on this device (with every change made meanwhile),
/// and on the way to the background when a change has not gone up yet, as a background task
/// of its own that the budget's expiry cancels. At most one is in flight; what asks during it
/// is one more round trip after it. Another device's changes reach observers of the store as
/// `SettingsChange.Source.cloud`.
///
/// Against a server from before settings (`404`), it logs once and stops for the session; the
/// slot's ``CloudSync`` goes on as before.
///
/// ```swift
/// let settings = try SettingsStore(store: store, defaults: Options(), application: app)
/// let settingsSync = SettingsSync(settings: settings, credentials: credentials, application: app)
/// ```
///
/// Keep it for as long as the game runs; a sync let go stops.
@MainActor
public final class SettingsSync<Settings: Codable & Sendable> {
  /// The settings kept in sync.
  public let settings: SettingsStore<Settings>
  /// The server.
  public let client: CloudClient
  /// How long after a change on this device its settings go up, on the application's clock;
  /// every change made meanwhile goes in the same round trip (a slider dragged costs one a
  /// second, however long it is dragged). Default 1 s. Without an application, a change goes
  /// up at once.
  public var changeDelay: Duration = .seconds(1)
  /// What the last round trip came to; nil before the first ended.
  public private(set) var lastOutcome: SettingsSyncOutcome?
  /// False once the server answered that it has no settings routes: no round trip is tried
  /// again while this sync lives.
  public private(set) var serverHasSettings = true

  private weak var application: Application?
  private var applicationObservers: [ObserverToken] = []
  private var settingsObserver: ObserverToken?
  private let logger: Logger
  /// A change on this device that no round trip has sent yet.
  private var unsent = false
  /// When the change waiting for ``changeDelay`` was made.
  private var changedAt: Duration?
  /// A round trip asked for and not yet begun.
  private var requested = false
  /// The round trip in flight: its request, on a task of its own (never the game's thread).
  private var worker: Task<Result<SettingsFile, CloudError>, Never>?
  /// The number of the round trip in flight: its answer is taken once, by whichever comes
  /// first, the application's next `update()` or ``settle()``.
  private var trip = 0
  /// Background tasks that end when no round trip is left to run.
  private var backgroundTasks: [BackgroundTaskID] = []

  /// Syncs `settings` through `client`, starting with a round trip now (the launch's).
  ///
  /// - Parameters:
  ///   - settings: the game's settings store.
  ///   - client: the server, the player's token and this device's name.
  ///   - application: when given, a round trip runs on every `willEnterForeground`, a change
  ///     waits ``changeDelay`` on its clock (checked on each `update()`), and one not yet sent
  ///     goes up on `didEnterBackground` and `willTerminate`, inside the background budget.
  ///   - logger: where the sync notes failures and a server without settings.
  public init(
    settings: SettingsStore<Settings>, client: CloudClient, application: Application? = nil,
    logger: Logger = Logger(label: "stasis.cloud.settings")
  ) {
    self.settings = settings
    self.client = client
    self.logger = logger
    settingsObserver = settings.addObserver { [weak self] change in
      // Another device's change came from the server; any other (this game, another process
      // or `stasis settings set`) goes up.
      if change.source != .cloud { self?.changed() }
    }
    if let application { attach(to: application) }
    request()
  }

  /// Syncs `settings` with the server `credentials` name, over HTTP unless `transport` says
  /// otherwise.
  public convenience init(
    settings: SettingsStore<Settings>, credentials: CloudCredentials, application: Application? = nil,
    transport: any CloudTransport = URLSessionCloudTransport(), logger: Logger = Logger(label: "stasis.cloud.settings")
  ) {
    self.init(
      settings: settings, client: CloudClient(credentials: credentials, transport: transport),
      application: application, logger: logger)
  }

  isolated deinit {
    worker?.cancel()
    // A round trip let go ends nothing by itself: its background tasks end here, so a quit
    // never waits out the budget for a sync the game released.
    for id in backgroundTasks { application?.endBackgroundTask(id) }
    if let settingsObserver { settings.removeObserver(settingsObserver) }
    if let application { for token in applicationObservers { application.removeObserver(token) } }
  }

  /// Runs a round trip now, after the one in flight if there is one, and returns what it came
  /// to; ``SettingsSyncOutcome/unsupported`` at once against a server without settings.
  @discardableResult
  public func synchronize() async -> SettingsSyncOutcome {
    guard serverHasSettings else { return .unsupported }
    request()
    await settle()
    return lastOutcome ?? .unsupported
  }

  /// Waits until no round trip is in flight or asked for, and takes each answer as it comes
  /// (a tool before it exits, a test). A game loop need not call it: the answers reach the
  /// settings at its next `update()`.
  public func settle() async {
    while let worker {
      let answered = trip
      finish(answered, await worker.value)
    }
  }

  // MARK: Private

  private func attach(to application: Application) {
    self.application = application
    applicationObservers.append(
      application.addObserver(for: .willEnterForeground) { [weak self] _ in self?.request() })
    applicationObservers.append(
      application.addObserver(for: .didEnterBackground) { [weak self] application in
        self?.enteredBackground(application)
      })
    // A quit is a last trip to the background: a change made a moment before it goes up too.
    applicationObservers.append(
      application.addObserver(for: .willTerminate) { [weak self] application in
        self?.enteredBackground(application)
      })
    applicationObservers.append(
      application.addUpdateObserver { [weak self] application in self?.poll(application) })
  }

  private func changed() {
    unsent = true
    guard let application, changeDelay > .zero else { return request() }
    if changedAt == nil { changedAt = application.configuration.clock.now() }
  }

  /// A change waiting for ``changeDelay`` goes up once the delay has passed.
  private func poll(_ application: Application) {
    guard let changedAt, application.state == .active || application.state == .inactive else { return }
    guard application.configuration.clock.now() - changedAt >= changeDelay else { return }
    self.changedAt = nil
    request()
  }

  /// A change not yet sent goes up now, as a background task the budget's expiry cancels (on
  /// the way to the background, and at a quit).
  private func enteredBackground(_ application: Application) {
    guard serverHasSettings, unsent || changedAt != nil || worker != nil else { return }
    changedAt = nil
    backgroundTasks.append(
      application.beginCancellableBackgroundTask(named: "settings upload") { [weak self] in self?.worker?.cancel() })
    request()
  }

  private func request() {
    guard serverHasSettings else { return }
    requested = true
    if worker == nil { startRoundTrip() }
  }

  /// Sends the settings on a task of its own. Its answer is handed to the game's thread through
  /// the application's deliveries (taken at the next `update()`, however the loop holds its
  /// thread), or, without an application, through the main actor.
  private func startRoundTrip() {
    requested = false
    unsent = false
    trip &+= 1
    let number = trip
    let sent = settings.entries
    let client = self.client
    let application = self.application
    // High priority: a quit or a trip to the background waits for this answer inside its budget,
    // and on Linux a task of medium priority starts only after every job queued before it on
    // the pool (40 jobs of 250 ms on 2 cores held one back 5 s; at high priority, 10 ms).
    worker = Task.detached(priority: .high) { [weak self] in
      let result: Result<SettingsFile, CloudError>
      do throws(CloudError) {
        result = .success(try await client.mergeSettings(sent))
      } catch {
        result = .failure(error)
      }
      if let application {
        application.deliverOnUpdate { self?.finish(number, result) }
      } else {
        await MainActor.run { self?.finish(number, result) }
      }
      return result
    }
  }

  /// Takes round trip `number`'s answer, once; starts the next round trip when one was asked for
  /// meanwhile, else ends the background tasks waiting for it.
  private func finish(_ number: Int, _ result: Result<SettingsFile, CloudError>) {
    guard number == trip, worker != nil else { return }
    let cancelled = worker?.isCancelled ?? false
    worker = nil
    lastOutcome = take(result)
    if requested, serverHasSettings, !cancelled {
      startRoundTrip()  // the background tasks wait for this one too
      return
    }
    for id in backgroundTasks { application?.endBackgroundTask(id) }
    backgroundTasks.removeAll()
    // Cancelled by the budget's expiry while a return asked for a round trip: that one runs.
    if requested, serverHasSettings { startRoundTrip() }
  }

  /// Merges the server's answer into the settings: the changes of other devices reach the
  /// settings' observers as ``SettingsChange/Source/cloud``.
  private func take(_ result: Result<SettingsFile, CloudError>) -> SettingsSyncOutcome {
    let answer: SettingsFile
    switch result {
    case .success(let file): answer = file
    case .failure(let error):
      if error.kind == .notFound {
        serverHasSettings = false
        logger.notice("settings: \(error.message); they stay on this device until the next launch")
        return .unsupported
      }
      unsent = true
      logger.info("settings: not synced: \(error)")
      return .failed(error)
    }
    let before = settings.entries
    do {
      try settings.merge(answer)
    } catch {
      unsent = true
      logger.error("settings: the server's settings could not be written: \(error)")
      return .notWritten(error)
    }
    let after = settings.entries
    return .merged(changed: after.entries.filter { before[$0.key]?.value != $0.value }.map(\.key))
  }
}
