import CStasisSDL2
import Foundation
import Logging
import Stasis
import StasisSDL
import StasisTesting
import Testing

/// SDL runs headless here: the dummy video driver, events pushed with `SDL_PushEvent`.
@MainActor
@Suite("SDL events to lifecycle transitions", .serialized)
struct LifecycleEventsTests {
  init() throws {
    setenv("SDL_VIDEODRIVER", "dummy", 1)
    try #require(
      SDL_Init(UInt32(SDL_INIT_VIDEO | SDL_INIT_EVENTS)) == 0, "SDL_Init: \(String(cString: SDL_GetError()))")
  }

  private func windowEvent(_ id: SDL_WindowEventID, _ data1: Int32 = 0, _ data2: Int32 = 0) -> SDL_Event {
    var event = SDL_Event()
    event.type = SDL_WINDOWEVENT.rawValue
    event.window.event = UInt8(id.rawValue)
    event.window.data1 = data1
    event.window.data2 = data2
    return event
  }

  private func event(_ type: SDL_EventType) -> SDL_Event {
    var event = SDL_Event()
    event.type = type.rawValue
    return event
  }

  /// Pushes the events through SDL's real queue and maps what comes out.
  private func roundTrip(_ events: [SDL_Event]) -> [LifecycleTransition] {
    SDL_FlushEvents(SDL_FIRSTEVENT.rawValue, SDL_LASTEVENT.rawValue)
    for var event in events { SDL_PushEvent(&event) }
    var out: [LifecycleTransition] = []
    var polled = SDL_Event()
    while SDL_PollEvent(&polled) != 0 {
      if let transition = lifecycleTransition(for: polled) { out.append(transition) }
    }
    return out
  }

  @Test("SDL's raw numbers map as SDL_Event does, for a game on another binding")
  func rawNumbers() {
    // SDL2's ABI numbers, written as a game on SwiftSDL2 would see them: no StasisSDL type.
    let quit: UInt32 = 0x100
    let window: UInt32 = 0x200
    let willEnterBackground: UInt32 = 0x103
    #expect(lifecycleTransition(sdlEventType: quit) == .terminate)
    #expect(lifecycleTransition(sdlEventType: window, windowEvent: 13) == .resignActive)  // FOCUS_LOST
    #expect(lifecycleTransition(sdlEventType: window, windowEvent: 12) == .becomeActive)  // FOCUS_GAINED
    #expect(lifecycleTransition(sdlEventType: window, windowEvent: 7) == .enterBackground)  // MINIMIZED
    #expect(
      lifecycleTransition(sdlEventType: window, windowEvent: 6, data1: 800, data2: 600)  // SIZE_CHANGED
        == .environment(EnvironmentChange(.windowResized, .size(width: 800, height: 600))))
    #expect(lifecycleTransition(sdlEventType: 0x300) == nil)  // SDL_KEYDOWN
    #expect(lifecycleTransition(sdlEventType: willEnterBackground) == .resignActive)
    #expect(lifecycleTransitionFromQueue(sdlEventType: willEnterBackground) == nil)
    #expect(lifecycleTransitionFromQueue(sdlEventType: quit) == .terminate)
    // Every event through SDL's real queue: the raw mapping agrees with the typed one.
    let events = [
      windowEvent(SDL_WINDOWEVENT_FOCUS_LOST), windowEvent(SDL_WINDOWEVENT_HIDDEN), windowEvent(SDL_WINDOWEVENT_SHOWN),
      windowEvent(SDL_WINDOWEVENT_DISPLAY_CHANGED, 1), windowEvent(SDL_WINDOWEVENT_MOVED, 3, 4), event(SDL_QUIT),
      event(SDL_APP_LOWMEMORY), event(SDL_KEYDOWN),
    ]
    for e in events {
      #expect(
        lifecycleTransition(
          sdlEventType: e.type, windowEvent: e.window.event, data1: e.window.data1, data2: e.window.data2)
          == lifecycleTransition(for: e))
    }
  }

  @Test("desktop window events map as the demo game article's window section lays out")
  func desktopMapping() {
    let transitions = roundTrip([
      windowEvent(SDL_WINDOWEVENT_FOCUS_LOST),
      windowEvent(SDL_WINDOWEVENT_MINIMIZED),
      windowEvent(SDL_WINDOWEVENT_RESTORED),
      windowEvent(SDL_WINDOWEVENT_FOCUS_GAINED),
      windowEvent(SDL_WINDOWEVENT_SIZE_CHANGED, 640, 480),
      windowEvent(SDL_WINDOWEVENT_MOVED, 10, 10),
      event(SDL_QUIT),
    ])
    #expect(
      transitions == [
        .resignActive, .enterBackground, .enterForeground, .becomeActive,
        .environment(EnvironmentChange(.windowResized, .size(width: 640, height: 480))), .terminate,
      ])
  }

  @Test("mobile SDL_APP_* events map to the matching transitions")
  func mobileMapping() {
    let transitions = roundTrip([
      event(SDL_APP_WILLENTERBACKGROUND), event(SDL_APP_DIDENTERBACKGROUND),
      event(SDL_APP_WILLENTERFOREGROUND), event(SDL_APP_DIDENTERFOREGROUND),
      event(SDL_APP_LOWMEMORY), event(SDL_APP_TERMINATING),
    ])
    #expect(
      transitions == [
        .resignActive, .enterBackground, .enterForeground, .enterForeground, .memoryWarning, .terminate,
      ])
  }

  @Test("a minimise then a hide send the app to the background once")
  func noDoubleTransition() {
    let app = Application(configuration: .init(clock: ManualClock()))
    var calls: [String] = []
    for event in LifecycleEvent.allCases { app.addObserver(for: event) { _ in calls.append(event.rawValue) } }
    app.launch()
    for transition in roundTrip([
      windowEvent(SDL_WINDOWEVENT_FOCUS_LOST), windowEvent(SDL_WINDOWEVENT_MINIMIZED),
      windowEvent(SDL_WINDOWEVENT_HIDDEN), windowEvent(SDL_WINDOWEVENT_SHOWN),
      windowEvent(SDL_WINDOWEVENT_RESTORED), windowEvent(SDL_WINDOWEVENT_FOCUS_GAINED),
    ]) {
      app.apply(transition)
    }
    #expect(
      calls == [
        "didFinishLaunching", "didBecomeActive", "willResignActive", "didEnterBackground",
        "willEnterForeground", "didBecomeActive",
      ])
  }

  @Test("X11's redundant window events apply only what changes something: the application ignores nothing")
  func noIgnoredTransitions() {
    let handler = RecordingLogHandler.Lines()
    let app = Application(
      configuration: .init(clock: ManualClock()), logger: Logger(label: "t") { _ in RecordingLogHandler(handler) })
    app.launch()
    // What X11 sends: shown then focus gained on start; minimise as focus lost, minimised,
    // hidden; restore as shown, restored, focus gained.
    let applied = roundTrip([
      windowEvent(SDL_WINDOWEVENT_SHOWN), windowEvent(SDL_WINDOWEVENT_FOCUS_GAINED),
      windowEvent(SDL_WINDOWEVENT_FOCUS_LOST), windowEvent(SDL_WINDOWEVENT_MINIMIZED),
      windowEvent(SDL_WINDOWEVENT_HIDDEN), windowEvent(SDL_WINDOWEVENT_SHOWN),
      windowEvent(SDL_WINDOWEVENT_RESTORED), windowEvent(SDL_WINDOWEVENT_FOCUS_GAINED),
    ]).filter { app.apply($0) }
    #expect(applied == [.resignActive, .enterBackground, .enterForeground])
    #expect(app.state == .active)
    #expect(!handler.messages.contains { $0.contains("ignored") }, "\(handler.messages)")
  }

  @Test("a second quit during the quit's save, and events before launch, are not applied")
  func secondQuit() {
    let handler = RecordingLogHandler.Lines()
    let app = Application(
      configuration: .init(clock: ManualClock()), logger: Logger(label: "t") { _ in RecordingLogHandler(handler) })
    #expect(!app.apply(.memoryWarning), "not running yet")
    app.launch()
    _ = app.beginBackgroundTask(named: "slow save")  // keeps the termination episode open
    app.terminate()
    #expect(app.isTerminating)
    #expect(!app.apply(.terminate), "Esc, then closing the window")
    #expect(!handler.messages.contains { $0.contains("ignored") }, "\(handler.messages)")
  }

  @Test("the event watch delivers SDL_APP_* at once, and the polled path skips them: nothing is applied twice")
  func eventWatch() {
    let received = Received()
    let watch = LifecycleEventWatch { received.append($0) }
    defer { watch.remove() }
    SDL_FlushEvents(SDL_FIRSTEVENT.rawValue, SDL_LASTEVENT.rawValue)
    var background = event(SDL_APP_DIDENTERBACKGROUND)
    SDL_PushEvent(&background)
    #expect(received.all == [.enterBackground], "delivered inside SDL_PushEvent, before any poll")
    var minimised = windowEvent(SDL_WINDOWEVENT_MINIMIZED)
    SDL_PushEvent(&minimised)
    #expect(received.all == [.enterBackground], "window events are not the watch's")
    var fromQueue: [LifecycleTransition] = []
    var polled = SDL_Event()
    while SDL_PollEvent(&polled) != 0 {
      if let transition = lifecycleTransitionFromQueue(polled) { fromQueue.append(transition) }
    }
    #expect(fromQueue == [.enterBackground], "only the minimise, from the queue")

    // Driven into an application, the two paths give one background, not two.
    let app = Application(configuration: .init(clock: ManualClock()))
    var calls: [String] = []
    app.addObserver(for: .didEnterBackground) { _ in calls.append("didEnterBackground") }
    app.launch()
    for transition in received.all + fromQueue { app.apply(transition) }
    #expect(calls == ["didEnterBackground"])
  }
}

/// Transitions collected from the watch, which may call from any thread.
private final class Received: @unchecked Sendable {
  private let lock = NSLock()
  private var transitions: [LifecycleTransition] = []
  func append(_ transition: LifecycleTransition) { lock.withLock { transitions.append(transition) } }
  var all: [LifecycleTransition] { lock.withLock { transitions } }
}
