import Foundation
import Logging

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The application object: its lifecycle state, its delegate, its observers, and the
/// background-time budget. Modelled on UIKit's `UIApplication`.
///
/// The platform layer (SDL events, a scripted headless platform, signals) calls the
/// transition methods — ``launch(options:)``, ``enterBackground()``, ``enterForeground(activate:)`` —
/// and the main loop calls ``update()`` once per iteration so the budget is enforced.
///
/// ```swift
/// let app = Application(delegate: game)
/// app.launch()
/// // ... the window was minimised:
/// app.enterBackground()           // willResignActive, didEnterBackground; budget starts
/// while app.hasBackgroundEpisode { app.waitForBackgroundWork() }  // suspended when tasks end
/// app.enterForeground()           // willEnterForeground, coalesced changes, didBecomeActive
/// ```
@MainActor
public final class Application {
  /// How strictly a task that outlives its expiration handler is treated.
  public enum WatchdogPolicy: Sendable {
    /// Log the violation and carry on.
    case logOnly
    /// Log it and kill the process, as iOS's watchdog does.
    case killProcess
  }

  /// Settings fixed at creation.
  public struct Configuration: Sendable {
    /// The background-time budget, started at `didEnterBackground` and at `willTerminate`.
    public var backgroundBudget: Duration
    /// The clock that measures the budget.
    public var clock: any MonotonicClock
    /// What happens to a task still running after its expiration handler returned.
    public var watchdog: WatchdogPolicy

    /// Creates a configuration: a 10-second budget on the system clock, violations logged.
    public init(
      backgroundBudget: Duration = .seconds(10),
      clock: any MonotonicClock = SystemClock(),
      watchdog: WatchdogPolicy = .logOnly
    ) {
      self.backgroundBudget = backgroundBudget
      self.clock = clock
      self.watchdog = watchdog
    }
  }

  /// Where the application is in its life.
  public private(set) var state: ApplicationState = .notRunning
  /// The object told about every transition, before any observer.
  public weak var delegate: (any ApplicationDelegate)?
  /// The settings the application was created with.
  public let configuration: Configuration
  /// True from `willTerminate` until the quit's save episode ends: a second quit means nothing.
  public var isTerminating: Bool { episode?.reason == .termination }
  /// The finished background episodes, oldest first: the newest ``episodeHistoryLimit``, so a
  /// session that goes to the background for days keeps a bounded history.
  public private(set) var backgroundEpisodes: [BackgroundEpisode] = []
  /// How many episodes ``backgroundEpisodes`` keeps (default 100).
  public var episodeHistoryLimit = 100

  /// What ``WatchdogPolicy/killProcess`` does; `StasisTesting` replaces it to observe the kill.
  package var processKiller: @MainActor () -> Void = { kill(getpid(), SIGKILL) }

  /// What the application counted: its waits on the game's thread (`StasisTesting` reads it).
  package let counts = OperationCounts()

  private let logger: Logger
  private let deliveries = DeliveryQueue()
  private let tasks: BackgroundTaskRegistry
  private var observers: [(token: ObserverToken, observer: Observer)] = []
  private var nextObserverToken: UInt64 = 1
  private var heldChanges = CoalescedChanges()
  private var episode: EpisodeInProgress?

  private enum Observer {
    case lifecycle(LifecycleEvent, @MainActor (Application) -> Void)
    case environment(@MainActor (Application, EnvironmentChange) -> Void)
    case backgroundTasks(@MainActor (BackgroundTaskEvent) -> Void)
    case episodes(@MainActor (BackgroundEpisode) -> Void)
    case updates(@MainActor (Application) -> Void)
  }

  private struct EpisodeInProgress {
    let reason: BackgroundEpisode.Reason
    let start: Duration
    let deadline: Duration
  }

  /// Creates an application in the `notRunning` state.
  public init(
    delegate: (any ApplicationDelegate)? = nil,
    configuration: Configuration = Configuration(),
    logger: Logger = Logger(label: "stasis.application")
  ) {
    self.delegate = delegate
    self.configuration = configuration
    self.logger = logger
    self.tasks = BackgroundTaskRegistry(wakeup: deliveries)
  }

  // MARK: Transitions

  /// Launches: `didFinishLaunching(options)`, then `didBecomeActive`. Only from `notRunning`.
  public func launch(options: LaunchOptions = .none) {
    guard state == .notRunning else { return ignore("launch") }
    state = .inactive
    delegate?.applicationDidFinishLaunching(self, options: options)
    notify(.didFinishLaunching)
    state = .active
    delegate?.applicationDidBecomeActive(self)
    notify(.didBecomeActive)
  }

  /// Focus lost only (an overlay, an alert): `willResignActive`; the state becomes `inactive`.
  public func resignActive() {
    guard state == .active else { return ignore("resignActive") }
    state = .inactive
    delegate?.applicationWillResignActive(self)
    notify(.willResignActive)
  }

  /// Focus regained: `didBecomeActive`. Only from `inactive`.
  public func becomeActive() {
    guard state == .inactive else { return ignore("becomeActive") }
    state = .active
    delegate?.applicationDidBecomeActive(self)
    notify(.didBecomeActive)
  }

  /// Sent away: `willResignActive` (when active), then `didEnterBackground`; the budget
  /// starts. The app is suspended by ``update()`` once every task has ended.
  public func enterBackground() {
    guard state == .active || state == .inactive else { return ignore("enterBackground") }
    if state == .active { resignActive() }
    state = .background
    startEpisode(.background)
    delegate?.applicationDidEnterBackground(self)
    notify(.didEnterBackground)
    update()
  }

  /// Brought back: `willEnterForeground`, the held environment changes (one per kind,
  /// newest value), then `didBecomeActive` unless `activate` is false.
  public func enterForeground(activate: Bool = true) {
    guard state.isInBackground else { return ignore("enterForeground") }
    if let episode {
      finishEpisode(episode, outcome: .returnedToForeground(runningTasks: tasks.live.map(\.name)))
    }
    state = .inactive
    delegate?.applicationWillEnterForeground(self)
    notify(.willEnterForeground)
    for change in heldChanges.drain() { deliver(change) }
    if activate { becomeActive() }
  }

  /// Quit: `willTerminate`, with the same budget as the background to save in. The state
  /// becomes `notRunning` once every task ends or the budget runs out (see ``update()``).
  public func terminate() {
    guard state != .notRunning, episode?.reason != .termination else { return ignore("terminate") }
    if let episode { finishEpisode(episode, outcome: .completed) }
    startEpisode(.termination)
    delegate?.applicationWillTerminate(self)
    notify(.willTerminate)
    update()
  }

  /// Memory is short: `didReceiveMemoryWarning`. The state does not change.
  public func receiveMemoryWarning() {
    guard state != .notRunning else { return ignore("receiveMemoryWarning") }
    delegate?.applicationDidReceiveMemoryWarning(self)
    notify(.didReceiveMemoryWarning)
  }

  /// Posts an environment change: delivered now in the foreground, held (newest value per
  /// kind) while in the background and delivered right after `willEnterForeground`.
  public func post(_ change: EnvironmentChange) {
    guard state != .notRunning else { return ignore("post \(change.kind)") }
    if state.isInBackground {
      heldChanges.hold(change)
    } else {
      deliver(change)
    }
  }

  // MARK: Background tasks

  /// Begins a background task: time the app may keep running in the background to finish
  /// work such as a save. End it with ``endBackgroundTask(_:)`` as soon as the work is done.
  ///
  /// - Parameters:
  ///   - name: the task's name in logs and the trace.
  ///   - expirationHandler: run once, on the main actor, when the budget runs out first; it
  ///     must cancel the work and end the task before it returns.
  /// - Returns: the task's ID, or ``BackgroundTaskID/invalid`` when not running.
  public func beginBackgroundTask(
    named name: String,
    expirationHandler: (@MainActor @Sendable () -> Void)? = nil
  ) -> BackgroundTaskID {
    guard state != .notRunning || episode != nil else {
      ignore("beginBackgroundTask \(name)")
      return .invalid
    }
    let id = tasks.begin(name: name, expirationHandler: expirationHandler)
    report(.began(id, name: name))
    return id
  }

  /// Ends a background task. Any thread; a late, repeated or unknown ID is a no-op.
  public nonisolated func endBackgroundTask(_ id: BackgroundTaskID) {
    tasks.end(id)
  }

  /// Seconds of background time left: the budget minus the time since it started, never
  /// negative; `Double.greatestFiniteMagnitude` when no budget is running (as UIKit does).
  public var backgroundTimeRemaining: Double {
    guard let episode else { return .greatestFiniteMagnitude }
    return max(.zero, episode.deadline - configuration.clock.now()).inSeconds
  }

  /// True while a budget is running: from `didEnterBackground` or `willTerminate` until
  /// every task ended or the budget ran out.
  public var hasBackgroundEpisode: Bool { episode != nil }

  /// Names of the background tasks still running, in the order they began.
  public nonisolated var runningBackgroundTasks: [String] { tasks.live.map(\.name) }

  /// The game's one delivery point, called once per main-loop iteration on the game's thread.
  /// First it runs, in the order they were handed over, the deliveries of other threads (cloud
  /// events, catch-up outcomes, settings round trips' answers, records changes and writes; see
  /// ``deliverOnUpdate(_:)``). Then it enforces the budget: reports tasks ended since the last
  /// call, suspends the app when none are left, and runs the expiration handlers once the budget
  /// is spent. Last, the update observers poll what is theirs: the coordinator's saves that ended,
  /// timers due, another process's settings. A loop that never yields, never pumps the main queue
  /// and never awaits hears everything here.
  public func update() {
    // Update observers last: what they report follows the episode's own line.
    defer {
      for (_, observer) in observers {
        if case .updates(let block) = observer { block(self) }
      }
    }
    runDeliveries()
    for event in tasks.takeUnreported() { report(event) }
    guard let episode else { return }
    if tasks.live.isEmpty {
      finishEpisode(episode, outcome: .completed)
      return
    }
    guard configuration.clock.now() >= episode.deadline else { return }
    var cut: [String] = []
    for task in tasks.live {
      cut.append(task.name)
      report(.expired(task.id, name: task.name))
      task.expirationHandler?()
    }
    for event in tasks.takeUnreported() { report(event) }
    var violations: [String] = []
    for task in tasks.live {
      violations.append(task.name)
      tasks.remove(task.id)
      report(.watchdogViolation(task.id, name: task.name))
      logger.error(
        "watchdog: background task '\(task.name)' \(task.id) did not end after its expiration handler"
      )
    }
    finishEpisode(episode, outcome: .expired(cutTasks: cut), violations: violations)
    if !violations.isEmpty && configuration.watchdog == .killProcess {
      processKiller()
    }
  }

  /// Blocks the game's thread until a background task ends, a delivery arrives or the budget
  /// runs out, then calls ``update()``. For loops with nothing to do while in the background
  /// (`while app.hasBackgroundEpisode { app.waitForBackgroundWork() }`); tests with a
  /// `ManualClock` (from `StasisTesting`) advance the clock and call ``update()`` instead.
  ///
  /// It needs no main queue, run loop or main-actor hop: what other threads hand the game (a
  /// settings upload's answer, a records write) arrives through ``deliverOnUpdate(_:)``, wakes
  /// this wait, and is run by the ``update()`` that follows. So a quit with work in flight takes
  /// the time that work needs, never the whole budget. Returns true when it was woken before the
  /// budget ran out.
  @discardableResult
  public func waitForBackgroundWork() -> Bool {
    // A task that ended, or a delivery that came, since the last update is what this waits for:
    // the update now handles it, and nothing is left to wait for.
    let happened = hasWorkForUpdate()
    update()
    guard let episode else { return false }
    if happened { return true }
    counts.count(OperationCounts.gameThreadWaits)
    let woken = deliveries.waitForWakeup(
      timeout: max(Duration.zero, episode.deadline - configuration.clock.now()), unless: hasWorkForUpdate)
    update()
    return woken
  }

  // MARK: Deliveries

  /// Hands `work` to the game's thread: it runs inside the next ``update()`` (or the update of an
  /// explicit wait), after what was handed over before it. Any thread. This is how the library's
  /// workers reach the game — a settings round trip's answer, a records change, a cloud event —
  /// without the main queue, a run loop or a main-actor hop.
  ///
  /// ```swift
  /// worker.onFinish { result in application.deliverOnUpdate { hud.show(result) } }
  /// ```
  public nonisolated func deliverOnUpdate(_ work: @escaping @MainActor @Sendable () -> Void) {
    deliveries.enqueue(work)
  }

  /// True while deliveries wait for the next ``update()``.
  public nonisolated var hasPendingDeliveries: Bool { !deliveries.isEmpty }

  /// Blocks the game's thread until something is handed over for the next ``update()`` (or
  /// `timeout` passes), without running it: for a headless loop with nothing to do until the
  /// library has news. Returns true when a delivery is waiting. An explicit wait: a call that
  /// has to wait counts as one wait on the game's thread.
  @discardableResult
  public func waitForDeliveries(timeout: Duration) -> Bool {
    guard deliveries.isEmpty else { return true }
    counts.count(OperationCounts.gameThreadWaits)
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while deliveries.isEmpty {
      let left = deadline - clock.now
      guard left > .zero else { return false }
      _ = deliveries.waitForWakeup(timeout: left, unless: { !self.deliveries.isEmpty })
    }
    return true
  }

  /// Runs what was handed over so far, without the rest of ``update()`` (the budget, the update
  /// observers): for test helpers that wait for one delivery.
  package func runPendingDeliveries() { runDeliveries() }

  /// What the next ``update()`` has to do that a wait must not sleep through: deliveries, and
  /// tasks that ended since it last looked.
  private nonisolated func hasWorkForUpdate() -> Bool {
    !deliveries.isEmpty || tasks.hasUnreported
  }

  private func runDeliveries() {
    // What is delivered now may hand over more: that waits for the next update, so one update
    // always ends.
    for work in deliveries.take() { work() }
  }

  // MARK: Observers

  /// Observes one lifecycle moment; called after the delegate, in registration order.
  @discardableResult
  public func addObserver(
    for event: LifecycleEvent, _ block: @escaping @MainActor (Application) -> Void
  ) -> ObserverToken {
    addObserver(.lifecycle(event, block))
  }

  /// Observes environment changes; called after the delegate, in registration order.
  @discardableResult
  public func addEnvironmentObserver(
    _ block: @escaping @MainActor (Application, EnvironmentChange) -> Void
  ) -> ObserverToken {
    addObserver(.environment(block))
  }

  /// Observes background-task events (begin, end, expire, watchdog), for traces.
  @discardableResult
  public func addBackgroundTaskObserver(
    _ block: @escaping @MainActor (BackgroundTaskEvent) -> Void
  ) -> ObserverToken {
    addObserver(.backgroundTasks(block))
  }

  /// Observes the end of each background episode.
  @discardableResult
  public func addEpisodeObserver(_ block: @escaping @MainActor (BackgroundEpisode) -> Void) -> ObserverToken {
    addObserver(.episodes(block))
  }

  /// Observes every ``update()``, at its end: for work polled once per main-loop iteration
  /// whether or not the game steps (the save coordinator waiting for a sync).
  @discardableResult
  public func addUpdateObserver(_ block: @escaping @MainActor (Application) -> Void) -> ObserverToken {
    addObserver(.updates(block))
  }

  /// Removes an observer; an unknown token is a no-op.
  public func removeObserver(_ token: ObserverToken) {
    observers.removeAll { $0.token == token }
  }

  // MARK: Private

  private func addObserver(_ observer: Observer) -> ObserverToken {
    let token = ObserverToken(rawValue: nextObserverToken)
    nextObserverToken += 1
    observers.append((token, observer))
    return token
  }

  private func notify(_ event: LifecycleEvent) {
    // A copy: an observer may remove itself or others while being called.
    for (_, observer) in observers {
      if case .lifecycle(let wanted, let block) = observer, wanted == event { block(self) }
    }
  }

  private func deliver(_ change: EnvironmentChange) {
    delegate?.application(self, didChangeEnvironment: change)
    for (_, observer) in observers {
      if case .environment(let block) = observer { block(self, change) }
    }
  }

  private func report(_ event: BackgroundTaskEvent) {
    for (_, observer) in observers {
      if case .backgroundTasks(let block) = observer { block(event) }
    }
  }

  private func startEpisode(_ reason: BackgroundEpisode.Reason) {
    let now = configuration.clock.now()
    episode = EpisodeInProgress(reason: reason, start: now, deadline: now + configuration.backgroundBudget)
  }

  private func finishEpisode(
    _ finished: EpisodeInProgress, outcome: BackgroundEpisode.Outcome, violations: [String] = []
  ) {
    let now = configuration.clock.now()
    let record = BackgroundEpisode(
      reason: finished.reason,
      duration: now - finished.start,
      budget: configuration.backgroundBudget,
      budgetLeft: max(.zero, finished.deadline - now),
      outcome: outcome,
      watchdogViolations: violations
    )
    episode = nil
    backgroundEpisodes.append(record, keepingNewest: episodeHistoryLimit)
    if case .expired = outcome {
      logger.warning("\(record.description)")
    } else {
      logger.info("\(record.description)")
    }
    switch finished.reason {
    case .background where state == .background: state = .suspended
    case .termination: state = .notRunning
    default: break
    }
    for (_, observer) in observers {
      if case .episodes(let block) = observer { block(record) }
    }
  }

  private func ignore(_ transition: String) {
    logger.notice("ignored \(transition) while \(state.rawValue)")
  }
}

/// Returned when adding an observer; pass it to ``Application/removeObserver(_:)``.
public struct ObserverToken: Hashable, Sendable {
  let rawValue: UInt64
}
