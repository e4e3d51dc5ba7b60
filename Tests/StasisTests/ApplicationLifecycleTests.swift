import Stasis
import Testing

@MainActor
@Suite("Application lifecycle")
struct ApplicationLifecycleTests {
  @Test("launch calls didFinishLaunching with its options, then didBecomeActive")
  func launchOrder() {
    let (app, recorder, _) = makeApplication()
    #expect(app.state == .notRunning)
    app.launch(options: LaunchOptions(restoreSlot: "autosave"))
    #expect(recorder.calls == ["didFinishLaunching", "didBecomeActive"])
    #expect(recorder.launchOptions?.restoreSlot == "autosave")
    #expect(app.state == .active)
  }

  @Test("background then foreground: willResignActive, didEnterBackground, willEnterForeground, didBecomeActive")
  func backgroundForegroundOrder() {
    let (app, recorder, _) = makeApplication()
    app.launch()
    recorder.calls.removeAll()
    app.enterBackground()
    #expect(recorder.calls == ["willResignActive", "didEnterBackground"])
    #expect(app.state == .suspended, "no background task: suspended at once")
    app.enterForeground()
    #expect(
      recorder.calls == ["willResignActive", "didEnterBackground", "willEnterForeground", "didBecomeActive"])
    #expect(app.state == .active)
  }

  @Test("focus lost only calls willResignActive and leaves the app inactive; focus back reactivates")
  func focusLostOnly() {
    let (app, recorder, _) = makeApplication()
    app.launch()
    recorder.calls.removeAll()
    app.resignActive()
    #expect(recorder.calls == ["willResignActive"])
    #expect(app.state == .inactive)
    app.becomeActive()
    #expect(recorder.calls == ["willResignActive", "didBecomeActive"])
    #expect(app.state == .active)
  }

  @Test("from inactive, entering the background does not resign active twice")
  func backgroundFromInactive() {
    let (app, recorder, _) = makeApplication()
    app.launch()
    app.resignActive()
    recorder.calls.removeAll()
    app.enterBackground()
    #expect(recorder.calls == ["didEnterBackground"])
  }

  @Test("quit calls willTerminate and ends not running once its tasks end")
  func quit() {
    let (app, recorder, _) = makeApplication()
    app.launch()
    recorder.calls.removeAll()
    app.terminate()
    #expect(recorder.calls == ["willTerminate"])
    #expect(app.state == .notRunning)
    #expect(app.backgroundEpisodes.last?.reason == .termination)
  }

  @Test("a long session keeps the newest background episodes only (episodeHistoryLimit)")
  func episodeHistoryIsBounded() {
    let (app, _, clock) = makeApplication()
    app.episodeHistoryLimit = 3
    app.launch()
    var task = BackgroundTaskID.invalid
    app.addObserver(for: .didEnterBackground) { app in task = app.beginBackgroundTask(named: "save") }
    for trip in 1...5 {
      app.enterBackground()
      clock.advance(by: .seconds(trip))
      app.endBackgroundTask(task)
      app.update()
      app.enterForeground()
    }
    // Trip N's episode lasted N seconds: the newest three are kept, oldest first.
    #expect(app.backgroundEpisodes.map(\.duration) == [.seconds(3), .seconds(4), .seconds(5)])
  }

  @Test("terminate waits for a save begun in willTerminate, under the same budget")
  func quitWithTask() {
    let (app, _, clock) = makeApplication()
    app.launch()
    var task = BackgroundTaskID.invalid
    app.addObserver(for: .willTerminate) { app in task = app.beginBackgroundTask(named: "final save") }
    app.terminate()
    #expect(app.hasBackgroundEpisode)
    #expect(app.backgroundTimeRemaining == 10)
    clock.advance(by: .seconds(2))
    app.endBackgroundTask(task)
    app.update()
    #expect(app.state == .notRunning)
    #expect(app.backgroundEpisodes.last?.outcome == .completed)
    #expect(app.backgroundEpisodes.last?.budgetLeft == .seconds(8))
  }

  @Test("a memory warning calls didReceiveMemoryWarning and changes nothing")
  func memoryWarning() {
    let (app, recorder, _) = makeApplication()
    app.launch()
    app.receiveMemoryWarning()
    #expect(recorder.calls.last == "didReceiveMemoryWarning")
    #expect(app.state == .active)
  }

  @Test("impossible transitions are ignored: each callback fires once per real transition")
  func impossibleTransitionsIgnored() {
    let (app, recorder, _) = makeApplication()
    app.enterForeground()  // not running
    app.enterBackground()  // not running
    app.receiveMemoryWarning()
    #expect(recorder.calls.isEmpty)
    app.launch()
    app.launch()  // second launch
    app.enterForeground()  // already in the foreground
    app.becomeActive()  // already active
    #expect(recorder.calls == ["didFinishLaunching", "didBecomeActive"])
    app.enterBackground()
    app.enterBackground()  // a second background
    app.resignActive()  // not active
    #expect(recorder.calls == ["didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground"])
    app.enterForeground()
    app.enterForeground()
    #expect(recorder.calls.filter { $0 == "willEnterForeground" }.count == 1)
    app.terminate()
    app.terminate()
    #expect(recorder.calls.filter { $0 == "willTerminate" }.count == 1)
    #expect(app.state == .notRunning)
  }

  @Test("observers run after the delegate, in registration order, and stop when removed")
  func observerOrderAndRemoval() {
    let (app, recorder, _) = makeApplication()
    var log: [String] = []
    app.addObserver(for: .didBecomeActive) { _ in log.append("first after \(recorder.calls.last ?? "")") }
    let second = app.addObserver(for: .didBecomeActive) { _ in log.append("second") }
    app.addObserver(for: .didBecomeActive) { _ in log.append("third") }
    app.addObserver(for: .willResignActive) { _ in log.append("resign") }
    app.launch()
    #expect(log == ["first after didBecomeActive", "second", "third"])
    app.removeObserver(second)
    app.removeObserver(second)  // twice is harmless
    log.removeAll()
    app.resignActive()
    app.becomeActive()
    #expect(log == ["resign", "first after didBecomeActive", "third"])
  }

  @Test("three resizes in the background give one delivery, with the last size, right after willEnterForeground")
  func coalescing() {
    let (app, recorder, _) = makeApplication()
    app.launch()
    app.enterBackground()
    app.post(EnvironmentChange(.windowResized, .size(width: 800, height: 600)))
    app.post(EnvironmentChange(.settingsChanged, .text("volume=3")))
    app.post(EnvironmentChange(.windowResized, .size(width: 1024, height: 768)))
    app.post(EnvironmentChange(.windowResized, .size(width: 1280, height: 720)))
    app.post(EnvironmentChange(.settingsChanged, .text("volume=5")))
    #expect(recorder.changes.isEmpty, "held while in the background")
    recorder.calls.removeAll()
    app.enterForeground()
    #expect(
      recorder.calls == [
        "willEnterForeground", "environment:windowResized", "environment:settingsChanged", "didBecomeActive",
      ])
    #expect(
      recorder.changes == [
        EnvironmentChange(.windowResized, .size(width: 1280, height: 720)),
        EnvironmentChange(.settingsChanged, .text("volume=5")),
      ])
    app.post(EnvironmentChange(.displayChanged, .index(1)))
    #expect(
      recorder.changes.last == EnvironmentChange(.displayChanged, .index(1)), "delivered at once in the foreground")
  }

  @Test("a custom environment kind is coalesced like the built-in ones")
  func customKind() {
    let (app, recorder, _) = makeApplication()
    var observed: [EnvironmentChange] = []
    app.addEnvironmentObserver { _, change in observed.append(change) }
    app.launch()
    app.enterBackground()
    app.post(EnvironmentChange(EnvironmentChange.Kind("audioRoute"), .text("speaker")))
    app.post(EnvironmentChange(EnvironmentChange.Kind("audioRoute"), .text("headphones")))
    app.enterForeground()
    #expect(observed == [EnvironmentChange(EnvironmentChange.Kind("audioRoute"), .text("headphones"))])
    #expect(recorder.changes == observed)
  }
}
