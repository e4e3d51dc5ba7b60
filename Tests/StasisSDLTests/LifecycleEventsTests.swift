import CSDL2
import Foundation
import Stasis
import StasisSDL
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

  @Test("desktop window events map as DESIGN.md lays out")
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
}
