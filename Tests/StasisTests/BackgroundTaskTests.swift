import Foundation
import Stasis
import StasisTesting
import Testing

@MainActor
@Suite("Background tasks and the budget")
struct BackgroundTaskTests {
  @Test("all tasks end early: the app is suspended with time left")
  func endEarly() {
    let (app, recorder, clock) = makeApplication()
    var ids: [BackgroundTaskID] = []
    recorder.onEnterBackground = { app in
      ids.append(app.beginBackgroundTask(named: "save"))
      ids.append(app.beginBackgroundTask(named: "upload"))
    }
    app.launch()
    app.enterBackground()
    #expect(app.state == .background)
    clock.advance(by: .seconds(1))
    #expect(app.backgroundTimeRemaining == 9)
    app.endBackgroundTask(ids[0])
    app.update()
    #expect(app.state == .background, "one task still running")
    clock.advance(by: .milliseconds(500))
    app.endBackgroundTask(ids[1])
    app.update()
    #expect(app.state == .suspended)
    let episode = try! #require(app.backgroundEpisodes.last)
    #expect(episode.outcome == .completed)
    #expect(episode.duration == .milliseconds(1500))
    #expect(episode.budgetLeft == .milliseconds(8500))
    #expect(episode.description.hasPrefix("background episode completed in 1500.0 ms, 8.500 s of 10.000 s budget left"))
    #expect(app.backgroundTimeRemaining == .greatestFiniteMagnitude, "no budget running once suspended")
  }

  @Test("the budget expires: each expiration handler runs exactly once and the app is suspended")
  func budgetExpires() {
    let (app, recorder, clock) = makeApplication(budget: .seconds(10))
    var expirations: [String] = []
    var events: [String] = []
    app.addBackgroundTaskObserver { events.append($0.description) }
    recorder.onEnterBackground = { app in
      var first = BackgroundTaskID.invalid
      var second = BackgroundTaskID.invalid
      first = app.beginBackgroundTask(named: "save") {
        expirations.append("save")
        app.endBackgroundTask(first)
      }
      second = app.beginBackgroundTask(named: "upload") {
        expirations.append("upload")
        app.endBackgroundTask(second)
      }
    }
    app.launch()
    app.enterBackground()
    clock.advance(by: .seconds(9.999))
    app.update()
    #expect(expirations.isEmpty)
    #expect(app.state == .background)
    clock.advance(by: .milliseconds(1))
    app.update()
    app.update()
    clock.advance(by: .seconds(5))
    app.update()
    #expect(expirations == ["save", "upload"])
    #expect(app.state == .suspended)
    #expect(app.backgroundEpisodes.last?.outcome == .expired(cutTasks: ["save", "upload"]))
    #expect(app.backgroundEpisodes.last?.watchdogViolations == [])
    #expect(
      events == [
        "begin #1 save", "begin #2 upload", "expire #1 save", "expire #2 upload", "end #1 save", "end #2 upload",
      ])
    #expect(app.backgroundEpisodes.last!.description.contains("expired after 10000.0 ms"))
    #expect(app.backgroundEpisodes.last!.description.contains("cut tasks: save, upload"))
  }

  @Test("a task not ended by its expiration handler is a watchdog violation, logged in the episode")
  func watchdogLogOnly() {
    let (app, recorder, clock) = makeApplication(budget: .seconds(1))
    var killed = false
    app.replaceProcessKiller { killed = true }
    recorder.onEnterBackground = { app in _ = app.beginBackgroundTask(named: "stubborn") {} }
    app.launch()
    app.enterBackground()
    clock.advance(by: .seconds(1))
    app.update()
    #expect(app.state == .suspended)
    #expect(app.backgroundEpisodes.last?.watchdogViolations == ["stubborn"])
    #expect(app.backgroundEpisodes.last!.description.contains("watchdog violations: stubborn"))
    #expect(!killed, "log-only policy does not kill")
  }

  @Test("in strict mode a watchdog violation kills the process")
  func watchdogStrict() {
    let (app, recorder, clock) = makeApplication(budget: .seconds(1), watchdog: .killProcess)
    var killed = 0
    app.replaceProcessKiller { killed += 1 }
    recorder.onEnterBackground = { app in _ = app.beginBackgroundTask(named: "stubborn") {} }
    app.launch()
    app.enterBackground()
    clock.advance(by: .seconds(2))
    app.update()
    app.update()
    #expect(killed == 1)
  }

  @Test("a late, repeated or unknown endBackgroundTask is harmless")
  func lateEnd() {
    let (app, recorder, clock) = makeApplication(budget: .seconds(1))
    var id = BackgroundTaskID.invalid
    recorder.onEnterBackground = { app in id = app.beginBackgroundTask(named: "save") }
    app.launch()
    app.enterBackground()
    clock.advance(by: .seconds(1))
    app.update()  // expires; no handler, so it is a watchdog violation and dropped
    #expect(app.state == .suspended)
    app.endBackgroundTask(id)
    app.endBackgroundTask(id)
    app.endBackgroundTask(.invalid)
    app.endBackgroundTask(BackgroundTaskID(rawValue: 999))
    app.update()
    #expect(app.state == .suspended)
    #expect(app.backgroundEpisodes.count == 1)
  }

  @Test("several tasks at once: the app waits for the last one")
  func severalTasks() {
    let (app, recorder, clock) = makeApplication()
    var ids: [BackgroundTaskID] = []
    recorder.onEnterBackground = { app in
      for index in 0..<5 { ids.append(app.beginBackgroundTask(named: "task \(index)")) }
    }
    app.launch()
    app.enterBackground()
    #expect(app.runningBackgroundTasks.count == 5)
    for id in ids.reversed().dropLast() {
      app.endBackgroundTask(id)
      clock.advance(by: .milliseconds(10))
      app.update()
      #expect(app.state == .background)
    }
    app.endBackgroundTask(ids[0])
    app.update()
    #expect(app.state == .suspended)
    #expect(Set(ids).count == 5, "every task has its own ID")
  }

  @Test("a task ended from another thread suspends the app at the next update")
  func endedFromAnotherThread() async {
    let (app, recorder, _) = makeApplication()
    var id = BackgroundTaskID.invalid
    recorder.onEnterBackground = { app in id = app.beginBackgroundTask(named: "save") }
    app.launch()
    app.enterBackground()
    let task = id
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      Thread.detachNewThread {
        app.endBackgroundTask(task)
        done.resume()
      }
    }
    #expect(app.state == .background)
    app.update()
    #expect(app.state == .suspended)
  }

  @Test("waitForBackgroundWork wakes when a worker thread ends the task")
  func waitWakesOnEnd() {
    // A real clock and a long budget: the wait can only return early because the task ended.
    let recorder = LifecycleRecorder()
    let app = Application(delegate: recorder, configuration: .init(backgroundBudget: .seconds(60)))
    recorder.onEnterBackground = { app in
      let id = app.beginBackgroundTask(named: "save")
      Thread.detachNewThread { app.endBackgroundTask(id) }
    }
    app.launch()
    app.enterBackground()
    while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
    #expect(app.state == .suspended)
    #expect(app.backgroundEpisodes.last?.outcome == .completed)
  }

  @Test("coming back while a task still runs ends the episode without cutting the task")
  func foregroundWhileRunning() {
    let (app, recorder, clock) = makeApplication()
    var id = BackgroundTaskID.invalid
    recorder.onEnterBackground = { app in id = app.beginBackgroundTask(named: "save") }
    app.launch()
    app.enterBackground()
    clock.advance(by: .seconds(1))
    app.enterForeground()
    #expect(app.backgroundEpisodes.last?.outcome == .returnedToForeground(runningTasks: ["save"]))
    #expect(app.runningBackgroundTasks == ["save"])
    clock.advance(by: .seconds(60))
    app.update()  // no budget in the foreground: nothing expires
    #expect(app.runningBackgroundTasks == ["save"])
    app.endBackgroundTask(id)
    app.update()
    #expect(app.runningBackgroundTasks.isEmpty)
    #expect(app.state == .active)
  }

  @Test("the manual clock never goes backwards")
  func manualClock() {
    let clock = ManualClock(start: .seconds(5))
    clock.advance(by: .seconds(-3))
    #expect(clock.now() == .seconds(5))
    clock.advance(by: .milliseconds(250))
    #expect(clock.now() == .milliseconds(5250))
  }
}
