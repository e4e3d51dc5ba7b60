import Foundation
import Logging

/// A timer as it is scheduled: what ``TimerCenter/scheduled`` lists.
public struct ScheduledTimer: Sendable, Equatable, Codable {
  /// The timer's name; scheduling the same name again replaces it.
  public var identifier: String
  /// The wall-clock date it falls due next, in milliseconds since the Unix epoch.
  public var dueMilliseconds: Int64
  /// For a repeating timer, the milliseconds between occurrences; 0 for a one-shot timer.
  public var intervalMilliseconds: Int64
  /// The text of its desktop notification, and of its firing.
  public var message: String
  /// The due date whose desktop notification was posted (0 when none): a restart or a
  /// clock moved back never posts it twice.
  public var notifiedMilliseconds: Int64

  /// The date it falls due next.
  public var date: Date { Date(timeIntervalSince1970: Double(dueMilliseconds) / 1000) }
  /// The time between occurrences, or nil for a one-shot timer.
  public var interval: Duration? { intervalMilliseconds > 0 ? .milliseconds(intervalMilliseconds) : nil }
}

/// A timer fell due: what ``TimerCenter`` delivers to its observers, on the main actor.
public struct TimerFiring: Sendable, Equatable, CustomStringConvertible {
  /// Where the game was when the timer fell due.
  public enum Circumstance: String, Sendable, Equatable {
    /// Active (or inactive) in the foreground: delivered at its date.
    case onTime
    /// In the background or suspended: delivered on the return to the foreground (and a
    /// desktop notification posted, where a ``TimerNotifier`` was given).
    case inBackground
    /// The game was not running: delivered at the first ``Application/update()`` after launch.
    case notRunning
  }

  /// The timer's identifier.
  public var identifier: String
  /// The first date that fell due (the oldest missed occurrence of a repeating timer).
  public var date: Date
  /// How many occurrences fell due, coalesced into this one firing (1 for a one-shot timer).
  public var occurrences: Int
  /// The timer's message.
  public var message: String
  /// Where the game was when it fell due.
  public var circumstance: Circumstance

  /// Creates a firing.
  public init(identifier: String, date: Date, occurrences: Int, message: String, circumstance: Circumstance) {
    self.identifier = identifier
    self.date = date
    self.occurrences = occurrences
    self.message = message
    self.circumstance = circumstance
  }

  /// `identifier ×occurrences (circumstance)`.
  public var description: String {
    "\(identifier)\(occurrences > 1 ? " ×\(occurrences)" : "") (\(circumstance.rawValue))"
  }
}

/// Timers at wall-clock dates, or after real-time intervals, that survive a kill: "energy
/// refills in 30 minutes", "your crops are ready at 14:00". The recipe of 15.4, local
/// notifications.
///
/// - Timers are written atomically and durably to `SAVES/.timers`; a killed game finds them
///   at its next launch.
/// - While the game is active, a timer fires at its date (checked on every
///   ``Application/update()``).
/// - A timer that fell due while the game was in the background, suspended or not running is
///   delivered on its return or at the first ``Application/update()`` after launch: once, in date order, coalesced per identifier (a
///   repeating timer that fell due five times is one firing of five occurrences).
/// - While in the background, a timer that falls due posts a desktop notification through the
///   ``TimerNotifier`` given (once per due date, across restarts).
/// - The wall clock may jump: moved back, no timer fires twice (a fired one-shot timer is
///   gone, a repeating one's next date is past the last one fired); moved forward, every
///   timer then due fires once.
///
/// A firing is written before it is delivered: a write that fails delivers nothing, and the
/// timer fires on a later check. Save the game after acting on a firing, as after any change.
/// After a write fails, the center writes what it holds again at a later check (at most once a
/// second), when the game goes to the background, when it begins to quit and when the quit's
/// last background task ends: the disk may have failed to flush the folder after the new file
/// was already in place, and a later launch must not read it. (A firing is delivered at most
/// once. When the process is killed, or quits while the disk still fails, before any of those
/// writes succeeds, that file may stay: the timer is then gone without its firing. No store can
/// both deliver at most once and never lose one then; each failure is logged.)
///
/// ```swift
/// let timers = try TimerCenter(store: store, application: app)
/// timers.addObserver { firing in if firing.identifier == "energy" { energy.refill() } }
/// try timers.schedule("energy", after: .seconds(30 * 60), message: "Energy is full")
/// ```
@MainActor
public final class TimerCenter {
  /// The save store whose folder holds the timers.
  public let store: SaveStore
  /// The wall clock timers are due by.
  public let wallClock: any WallClock
  /// Posts a desktop notification for a timer that falls due in the background; nil posts none.
  public var notifier: (any TimerNotifier)?
  /// The title of desktop notifications (the game's name).
  public var notificationTitle: String

  /// Where a timers file this build could not read was moved, when one was: kept, never
  /// deleted, and the timers started again empty.
  public private(set) var setAside: String?

  private var timers: [ScheduledTimer]
  private let launchedAt: Int64
  private weak var application: Application?
  private var applicationObservers: [ObserverToken] = []
  private var observers = ObserverList<TimerFiring>()
  private var heldInBackground: [String] = []
  private var failedNotifier = false
  /// True after a write failed: the disk may hold that write's file (a flush of the folder can
  /// fail after the rename put it in place) or the one before. `timers` is the truth; it is
  /// written again at a check (at most once a second), when the game goes to the background,
  /// when it begins to quit and when the quit's last background task ends.
  private var unsettled = false
  /// When a write last failed (wall-clock milliseconds): a check writes again, to fire what is
  /// due or to settle, a second after it at the earliest, so a disk that keeps failing costs the
  /// game's thread one write a second, not one a frame.
  private var lastFailure: Int64?
  private let logger: Logger

  /// Opens the timers of `store`'s folder.
  ///
  /// - Parameters:
  ///   - store: the save store; the file is `store.directory/.timers`.
  ///   - application: timers are checked on its every ``Application/update()``; firings are
  ///     delivered while it is in the foreground and held while it is in the background.
  ///   - wallClock: the clock timers are due by; tests inject `ManualWallClock`.
  ///   - notifier: posts desktop notifications for timers due in the background.
  ///   - notificationTitle: their title.
  ///   - logger: where the center notes failed writes and notifications.
  public init(
    store: SaveStore, application: Application, wallClock: any WallClock = SystemWallClock(),
    notifier: (any TimerNotifier)? = nil, notificationTitle: String = "",
    logger: Logger = Logger(label: "stasis.timers")
  ) throws(SaveFileError) {
    self.store = store
    self.wallClock = wallClock
    self.notifier = notifier
    self.notificationTitle = notificationTitle
    self.logger = logger
    self.launchedAt = Self.milliseconds(wallClock.now())
    do {
      self.timers = try Self.read(store)
    } catch  where error.kind != .io && error.kind != .locked {
      self.timers = []
      setAside = try store.setAsideFolderFile(named: Self.fileName, because: error, logger: logger)
    }
    self.application = application
    applicationObservers.append(application.addUpdateObserver { [weak self] _ in self?.check() })
    for moment in [LifecycleEvent.didEnterBackground, .willTerminate] {
      applicationObservers.append(application.addObserver(for: moment) { [weak self] _ in self?.settle() })
    }
    // A write that failed while the quit's save ran: the checks stop when the state becomes
    // `notRunning`, so the end of the quit's episode writes again too.
    applicationObservers.append(
      application.addEpisodeObserver { [weak self] episode in
        if episode.reason == .termination { self?.settle() }
      })
  }

  isolated deinit {
    if let application { for token in applicationObservers { application.removeObserver(token) } }
  }

  // MARK: Scheduling

  /// Schedules `identifier` at `date` (replacing a timer of the same name), repeating every
  /// `interval` when given. Written durably before it returns.
  public func schedule(
    _ identifier: String, at date: Date, repeatingEvery interval: Duration? = nil, message: String = ""
  ) throws(SaveFileError) {
    let intervalMilliseconds = interval.map { Int64($0.inMilliseconds.rounded()) } ?? 0
    guard !identifier.isEmpty, interval == nil || intervalMilliseconds > 0 else {
      throw SaveFileError(
        .typeMismatch, "a timer needs a name and a positive interval", context: .init(part: "timers"))
    }
    var new = timers.filter { $0.identifier != identifier }
    new.append(
      ScheduledTimer(
        identifier: identifier, dueMilliseconds: Self.milliseconds(date), intervalMilliseconds: intervalMilliseconds,
        message: message, notifiedMilliseconds: 0))
    try write(new)
  }

  /// Schedules `identifier` after `delay` of real time from now (the wall clock's now).
  public func schedule(
    _ identifier: String, after delay: Duration, repeatingEvery interval: Duration? = nil, message: String = ""
  ) throws(SaveFileError) {
    try schedule(
      identifier, at: wallClock.now().addingTimeInterval(delay.inSeconds), repeatingEvery: interval, message: message)
  }

  /// Cancels `identifier`; an unknown name is a no-op.
  public func cancel(_ identifier: String) throws(SaveFileError) {
    guard timers.contains(where: { $0.identifier == identifier }) else { return }
    try write(timers.filter { $0.identifier != identifier })
  }

  /// The scheduled timers, by date (then name).
  public var scheduled: [ScheduledTimer] { timers }

  /// How long until the next timer falls due, on the wall clock (zero when one is due now);
  /// nil when none is scheduled. A loop that sleeps in the background wakes by then.
  public var timeUntilNextTimer: Duration? {
    guard let next = timers.first?.dueMilliseconds else { return nil }
    return .milliseconds(max(0, next - Self.milliseconds(wallClock.now())))
  }

  // MARK: Observers

  /// Observes firings, in date order, on the main actor.
  @discardableResult
  public func addObserver(_ block: @escaping @MainActor (TimerFiring) -> Void) -> ObserverToken {
    observers.add(block)
  }

  /// Removes an observer; an unknown token is a no-op.
  public func removeObserver(_ token: ObserverToken) {
    observers.remove(token)
  }

  // MARK: Checking

  /// Fires what is due. Called on every ``Application/update()``; call it yourself only
  /// without an update loop.
  public func check() {
    guard let application, application.state != .notRunning else { return }
    let now = Self.milliseconds(wallClock.now())
    // A failing disk is tried again once a second (a clock moved back tries at once).
    if unsettled, let lastFailure, now >= lastFailure, now - lastFailure < 1000 { return }
    guard let first = timers.first, first.dueMilliseconds <= now else { return settle() }
    if application.state.isInBackground {
      notifyDue(now: now)
    } else {
      fireDue(now: now)
    }
  }

  private func fireDue(now: Int64) {
    var firings: [TimerFiring] = []
    var remaining: [ScheduledTimer] = []
    for timer in timers {
      guard timer.dueMilliseconds <= now else {
        remaining.append(timer)
        continue
      }
      var occurrences = 1
      if timer.intervalMilliseconds > 0 {
        let passed = (now - timer.dueMilliseconds) / timer.intervalMilliseconds
        occurrences += Int(passed)
        var next = timer
        next.dueMilliseconds += (passed + 1) * timer.intervalMilliseconds
        remaining.append(next)
      }
      let circumstance: TimerFiring.Circumstance =
        timer.dueMilliseconds < launchedAt
        ? .notRunning : heldInBackground.contains(timer.identifier) ? .inBackground : .onTime
      firings.append(
        TimerFiring(
          identifier: timer.identifier, date: timer.date, occurrences: occurrences, message: timer.message,
          circumstance: circumstance))
    }
    do {
      try write(remaining)
    } catch {
      logger.error("timers: \(error); what is due fires at a check a second from now")
      return
    }
    heldInBackground.removeAll()
    for firing in firings {
      observers.notify(firing)
    }
  }

  /// In the background: a desktop notification per timer newly due, remembered in the file
  /// so that neither a restart nor a clock moved back posts it again.
  private func notifyDue(now: Int64) {
    var changed = timers
    var posted = false
    for index in changed.indices where changed[index].dueMilliseconds <= now {
      let timer = changed[index]
      if !heldInBackground.contains(timer.identifier) { heldInBackground.append(timer.identifier) }
      guard let notifier, timer.notifiedMilliseconds != timer.dueMilliseconds else { continue }
      changed[index].notifiedMilliseconds = timer.dueMilliseconds
      posted = true
      do {
        try notifier.post(
          TimerNotification(
            identifier: timer.identifier, title: notificationTitle,
            body: timer.message.isEmpty ? timer.identifier : timer.message, date: timer.date))
        failedNotifier = false
      } catch {
        if !failedNotifier { logger.notice("timers: no desktop notification: \(error)") }
        failedNotifier = true
      }
    }
    guard posted else { return settle() }
    do {
      try write(changed)
    } catch {
      // Posted is posted: the marks are the truth, written again at a later check, so a
      // failing disk does not post the notification again at each try.
      timers = changed
      logger.error("timers: \(error)")
    }
  }

  // MARK: The file

  static let fileName = "timers"
  static let identity = GameIdentity(name: "stasis-timers", build: "", schemaVersion: 1)

  /// After a failed write, writes what the center holds again, so that a later launch reads
  /// neither a firing that was never delivered nor a change the caller was told failed. (A
  /// firing's write that failed at the folder's flush left its file in place: a clean quit
  /// would keep it, and the timer would be gone without firing.)
  private func settle() {
    guard unsettled else { return }
    do {
      try write(timers)
    } catch {
      logger.error("timers: \(error); written again at a later check")
    }
  }

  /// Writes `new` (sorted by date, then name) atomically and durably, then makes it current.
  private func write(_ new: [ScheduledTimer]) throws(SaveFileError) {
    let sorted = new.sorted { ($0.dueMilliseconds, $0.identifier) < ($1.dueMilliseconds, $1.identifier) }
    let tree = try SaveValueEncoder().encode(sorted)
    let document = SaveDocument(
      game: Self.identity, createdAt: Self.milliseconds(wallClock.now()),
      summary: SaveSummary(details: .null, slot: ".\(Self.fileName)"),
      sections: [SaveSection(name: Self.fileName, content: .tree(tree))])
    do {
      try store.writeFolderFile(SaveFileFormat.encode(document), named: Self.fileName)
    } catch {
      (unsettled, lastFailure) = (true, Self.milliseconds(wallClock.now()))
      throw error
    }
    timers = sorted
    unsettled = false
  }

  private static func read(_ store: SaveStore) throws(SaveFileError) -> [ScheduledTimer] {
    guard let bytes = try store.readFolderFile(named: fileName) else { return [] }
    let path = "\(store.directory)/.\(fileName)"
    let read = bytes.withUnsafeBytes { raw in
      Result { () throws(SaveFileError) in try SaveFileFormat.decode(raw, path: path) }
    }
    let document = try read.get()
    guard document.game.name == identity.name, case .tree(let tree)? = document[section: fileName]?.content else {
      throw SaveFileError(.anotherGame, "not Stasis's timers", context: .init(file: path))
    }
    return try SaveValueDecoder().decode([ScheduledTimer].self, from: tree)
  }

  private static func milliseconds(_ date: Date) -> Int64 { date.unixMilliseconds }
}
