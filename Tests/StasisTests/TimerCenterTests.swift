import Foundation
import Stasis
import StasisTesting
import Synchronization
import Testing

/// Records the desktop notifications a timer center posts.
final class RecordingNotifier: TimerNotifier {
  let posted = Mutex<[TimerNotification]>([])
  func post(_ notification: TimerNotification) throws { posted.withLock { $0.append(notification) } }
  var identifiers: [String] { posted.withLock { $0.map(\.identifier) } }
}

/// What an observer heard, in order.
@MainActor
final class Recorded<Item> {
  var items: [Item] = []
}

@MainActor
@Suite("Timers (15.4): wall-clock dates, across the background, kills and clock jumps")
struct TimerCenterTests {
  let directory = makeTemporaryDirectory()
  let wall = ManualWallClock()

  func open(_ app: Application, notifier: RecordingNotifier? = nil) throws -> (TimerCenter, Recorded<TimerFiring>) {
    let store = SaveStore(directory: directory, wallClock: wall)
    let timers = try TimerCenter(store: store, application: app, wallClock: wall, notifier: notifier)
    let fired = Recorded<TimerFiring>()
    timers.addObserver { firing in fired.items.append(firing) }
    return (timers, fired)
  }

  @Test("while the game is active a timer fires at its date, once, and is gone from the file")
  func firesOnTime() throws {
    let (app, recorder, _) = makeApplication()
    app.launch()
    let (timers, fired) = try open(app)
    try timers.schedule("energy", after: .seconds(30), message: "Energy is full")
    wall.advance(by: .seconds(29))
    app.update()
    #expect(fired.items.isEmpty)
    #expect(timers.timeUntilNextTimer == .seconds(1))
    wall.advance(by: .seconds(1))
    app.update()
    app.update()
    let firings = fired.items
    #expect(firings.map(\.description) == ["energy (onTime)"])
    #expect(firings.first?.message == "Energy is full")
    #expect(timers.scheduled.isEmpty)
    let (reopened, _) = try open(app)
    #expect(reopened.scheduled.isEmpty, "the firing was written before it was delivered")
    _ = recorder
  }

  @Test("due in the background: one desktop notification each; on return, once, in date order, coalesced")
  func background() throws {
    let (app, recorder, _) = makeApplication()
    let notifier = RecordingNotifier()
    app.launch()
    let (timers, fired) = try open(app, notifier: notifier)
    try timers.schedule("crops", after: .seconds(10), message: "Your crops are ready")
    try timers.schedule("mail", after: .seconds(5))
    try timers.schedule("energy", after: .seconds(60), repeatingEvery: .seconds(60))
    app.enterBackground()
    app.update()
    #expect(app.state == .suspended)
    wall.advance(by: .seconds(600))
    app.update()
    app.update()
    #expect(fired.items.isEmpty, "nothing is delivered while in the background")
    #expect(notifier.identifiers == ["mail", "crops", "energy"])
    #expect(notifier.posted.withLock { $0 }.first { $0.identifier == "crops" }?.body == "Your crops are ready")
    app.enterForeground()
    app.update()
    app.update()
    #expect(
      fired.items.map(\.description) == ["mail (inBackground)", "crops (inBackground)", "energy ×10 (inBackground)"])
    #expect(timers.scheduled.map(\.identifier) == ["energy"])
    #expect(timers.scheduled.first?.date == wall.now().addingTimeInterval(60), "the next occurrence after now")
    #expect(notifier.identifiers.count == 3, "no notification posted twice")
    _ = recorder
  }

  @Test("killed while suspended: the timers are read again, and what fell due is delivered at launch")
  func acrossAKill() throws {
    do {
      let (app, recorder, _) = makeApplication()
      app.launch()
      let (timers, _) = try open(app)
      try timers.schedule("chest", at: wall.now().addingTimeInterval(120), message: "A chest opened")
      try timers.schedule("later", at: wall.now().addingTimeInterval(3600))
      app.enterBackground()
      app.update()
      _ = recorder
    }
    wall.advance(by: .seconds(300))
    let (app, recorder, _) = makeApplication()
    let (timers, fired) = try open(app)
    #expect(timers.scheduled.map(\.identifier) == ["chest", "later"])
    app.launch()
    app.update()
    #expect(fired.items.map(\.description) == ["chest (notRunning)"])
    #expect(timers.scheduled.map(\.identifier) == ["later"])
    _ = recorder
  }

  @Test("the wall clock moves back: no timer fires twice; it jumps forward: every timer then due fires once")
  func clockJumps() throws {
    let (app, recorder, _) = makeApplication()
    app.launch()
    let (timers, fired) = try open(app)
    let start = wall.now()
    try timers.schedule("once", after: .seconds(10))
    try timers.schedule("tick", after: .seconds(60), repeatingEvery: .seconds(60))
    wall.advance(by: .seconds(60))
    app.update()
    #expect(fired.items.map(\.description) == ["once (onTime)", "tick (onTime)"])
    wall.set(to: start.addingTimeInterval(-3600))
    for _ in 0..<240 {
      wall.advance(by: .seconds(30))
      app.update()
    }
    // Back to start+3600: "once" is gone; "tick" fell due at +120, +180, ... up to +3600, one
    // by one as the clock passed them, never again at +60.
    let afterBack = fired.items.map(\.identifier)
    #expect(afterBack.filter { $0 == "once" }.count == 1)
    #expect(afterBack.filter { $0 == "tick" }.count == 1 + 59)
    fired.items.removeAll()
    try timers.schedule("harvest", at: wall.now().addingTimeInterval(7200))
    wall.advance(by: .seconds(86_400))
    app.update()
    app.update()
    #expect(fired.items.map(\.description) == ["tick ×1440 (onTime)", "harvest (onTime)"])
    _ = recorder
  }

  @Test("a notification posted before a kill is not posted again by the next process")
  func notifiedOnce() throws {
    let notifier = RecordingNotifier()
    do {
      let (app, recorder, _) = makeApplication()
      app.launch()
      let (timers, _) = try open(app, notifier: notifier)
      try timers.schedule("raid", after: .seconds(10))
      app.enterBackground()
      wall.advance(by: .seconds(20))
      app.update()
      _ = recorder
    }
    #expect(notifier.identifiers == ["raid"])
    let (app, recorder, _) = makeApplication()
    app.launch()
    app.enterBackground()
    let (timers, fired) = try open(app, notifier: notifier)
    app.update()
    #expect(notifier.identifiers == ["raid"], "posted once across the restart")
    app.enterForeground()
    app.update()
    #expect(fired.items.map(\.description) == ["raid (notRunning)"])
    #expect(timers.scheduled.isEmpty)
    _ = recorder
  }

  /// What the game does after a firing's write failed.
  enum AfterTheFailure: String, CaseIterable, Sendable {
    /// Quits at once.
    case quits
    /// Goes to the background.
    case goesToTheBackground
    /// Plays on: the next check, with nothing due, writes again.
    case playsOn
    /// Quits while a background task (the quit's save) runs; the firing's write fails during
    /// the quit, and the task ends after.
    case quitsWhileSaving
  }

  /// `stasis-sim` seed 593412131 on PostgreSQL (CI, 2026-11-28): a firing's write failed at the
  /// folder's flush, after its rename had put the new file in place; the game quit cleanly and
  /// its next launch read that file. The timer was gone without firing.
  @Test(
    "a firing whose write failed after the rename is not lost: the center writes what it holds again",
    arguments: AfterTheFailure.allCases)
  func failedFlushAfterRename(_ after: AfterTheFailure) throws {
    let disk = SimulatedDisk()
    let store = SaveStore(directory: "/saves", fileSystem: disk, wallClock: wall)
    do {
      let (app, recorder, _) = makeApplication()
      app.launch()
      let timers = try TimerCenter(store: store, application: app, wallClock: wall)
      let fired = Recorded<TimerFiring>()
      timers.addObserver { firing in fired.items.append(firing) }
      try timers.schedule("energy", after: .seconds(30))
      wall.advance(by: .seconds(60))
      if after == .quitsWhileSaving {
        let save = app.beginBackgroundTask(named: "the quit's save")
        disk.fail(.fsyncDirectory, with: .ioError)
        app.terminate()  // its update checks the timers: the firing's write fails
        #expect(disk.faultsInjected == 1)
        app.endBackgroundTask(save)
        app.update()  // the episode ends; the state is notRunning, and no check runs again
        #expect(app.state == .notRunning)
      } else {
        disk.fail(.fsyncDirectory, with: .ioError)
        app.update()
        #expect(disk.faultsInjected == 1)
        switch after {
        case .quits: app.terminate()
        case .goesToTheBackground: app.enterBackground()
        default:
          wall.advance(by: .seconds(-120))  // nothing is due at this check: it only writes again
          app.update()
        }
      }
      #expect(fired.items.isEmpty, "a firing whose write failed is not delivered")
      #expect(timers.scheduled.map(\.identifier) == ["energy"])
      _ = recorder
    }
    // The process ends without a crash: the disk keeps every rename, flushed or not.
    let (app, recorder, _) = makeApplication()
    let timers = try TimerCenter(store: store, application: app, wallClock: wall)
    #expect(timers.scheduled.map(\.identifier) == ["energy"], "the file the failed write put in place was replaced")
    _ = recorder
  }

  @Test("a disk that keeps failing costs one write a second, not one a frame")
  func failingDiskIsRetriedOnceASecond() throws {
    let disk = SimulatedDisk()
    let store = SaveStore(directory: "/saves", fileSystem: disk, wallClock: wall)
    let (app, recorder, _) = makeApplication()
    app.launch()
    let timers = try TimerCenter(store: store, application: app, wallClock: wall)
    disk.fail(.fsyncDirectory, times: 1000, with: .ioError)
    #expect(throws: SaveFileError.self) { try timers.schedule("energy", after: .seconds(3600)) }
    let refused = disk.faultsInjected
    #expect(refused >= 1)
    for _ in 0..<60 {
      wall.advance(by: .milliseconds(16))
      app.update()
    }
    #expect(disk.faultsInjected == refused, "60 frames in 0.96 s after the failure: no write")
    wall.advance(by: .milliseconds(100))
    app.update()
    #expect(disk.faultsInjected == refused + 1, "a second after the failure, one write again")
    for _ in 0..<60 {
      wall.advance(by: .milliseconds(16))
      app.update()
    }
    #expect(disk.faultsInjected == refused + 1, "and none in the second after that")
    disk.clearFaults()
    wall.advance(by: .seconds(1))
    app.update()
    let (reopened, _) = try open(app)
    #expect(reopened.scheduled.isEmpty, "the refused schedule's file was replaced by what the center holds")
    _ = (timers, recorder)
  }

  @Test("a due timer on a failing disk: its firing is written again once a second, and fires once the disk holds")
  func dueTimerOnFailingDisk() throws {
    let disk = SimulatedDisk()
    let store = SaveStore(directory: "/saves", fileSystem: disk, wallClock: wall)
    let (app, recorder, _) = makeApplication()
    app.launch()
    let timers = try TimerCenter(store: store, application: app, wallClock: wall)
    let firings = Recorded<TimerFiring>()
    timers.addObserver { firings.items.append($0) }
    var fired: [String] { firings.items.map(\.identifier) }
    try timers.schedule("energy", after: .seconds(1))
    disk.fail(.fsyncDirectory, times: 1000, with: .ioError)
    wall.advance(by: .seconds(1))
    app.update()
    let first = disk.faultsInjected
    #expect(first >= 1 && fired.isEmpty, "due: its firing's write failed, so nothing is delivered")
    for _ in 0..<60 {
      wall.advance(by: .milliseconds(16))
      app.update()
    }
    #expect(disk.faultsInjected == first, "60 frames in 0.96 s: the firing is not written again each frame")
    wall.advance(by: .milliseconds(100))
    app.update()
    #expect(disk.faultsInjected == first + 1 && fired.isEmpty, "a second later: one more write, failed")
    disk.clearFaults()
    wall.advance(by: .seconds(1))
    app.update()
    #expect(fired == ["energy"], "the disk holds: it fires, once")
    _ = recorder
  }

  @Test("due in the background on a failing disk: the notification is posted once, not again at each try")
  func backgroundNotificationOnFailingDisk() throws {
    let disk = SimulatedDisk()
    let store = SaveStore(directory: "/saves", fileSystem: disk, wallClock: wall)
    let (app, recorder, _) = makeApplication()
    let notifier = RecordingNotifier()
    app.launch()
    let timers = try TimerCenter(store: store, application: app, wallClock: wall, notifier: notifier)
    try timers.schedule("crops", after: .seconds(10))
    app.enterBackground()
    app.update()
    disk.fail(.fsyncDirectory, times: 1000, with: .ioError)
    wall.advance(by: .seconds(20))
    app.update()
    #expect(notifier.identifiers == ["crops"] && disk.faultsInjected >= 1, "posted; its mark's write failed")
    for _ in 0..<5 {
      wall.advance(by: .seconds(2))
      app.update()
    }
    #expect(disk.faultsInjected > 1, "the mark was written again")
    #expect(notifier.identifiers == ["crops"], "and the notification was not posted again")
    disk.clearFaults()
    wall.advance(by: .seconds(2))
    app.update()
    let again = RecordingNotifier()
    let next = try TimerCenter(store: store, application: app, wallClock: wall, notifier: again)
    wall.advance(by: .seconds(2))
    app.update()
    #expect(again.identifiers.isEmpty, "the mark reached the disk: a new process does not post it again")
    _ = (recorder, next)
  }

  @Test("an unreadable timers file is set aside, kept, and the timers start again")
  func unreadableFile() throws {
    let (app, recorder, _) = makeApplication()
    app.launch()
    try Array("not a save file".utf8).write(to: "\(directory)/.timers")
    let (timers, _) = try open(app)
    let aside = try #require(timers.setAside)
    #expect(try [UInt8](contentsOf: aside) == Array("not a save file".utf8))
    #expect(timers.scheduled.isEmpty)
    try timers.schedule("x", after: .seconds(1))
    let (reopened, _) = try open(app)
    #expect(reopened.scheduled.map(\.identifier) == ["x"])
    _ = recorder
  }
}

extension Array where Element == UInt8 {
  func write(to path: String) throws { try Data(self).write(to: URL(fileURLWithPath: path)) }
  init(contentsOf path: String) throws { self = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }
}
