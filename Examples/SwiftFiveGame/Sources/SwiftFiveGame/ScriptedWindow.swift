// A stand-in for the game's own SDL binding (SwiftSDL2), so that the fixture runs headless: its
// events are shaped as SwiftSDL2's `SDL_Event` is, `type` and `window.event`, `window.data1`,
// `window.data2`, with SDL2's own numbers (SDL_events.h, SDL_video.h).

/// A window that is resized, minimised at the 300th iteration of the loop, restored at the
/// 310th and closed at the 620th.
struct ScriptedWindow {
  struct Event {
    struct Window {
      var event: UInt8 = 0
      var data1: Int32 = 0
      var data2: Int32 = 0
    }
    var type: UInt32
    var window = Window()
  }

  private static let quit: UInt32 = 0x100  // SDL_QUIT
  private static let windowEvent: UInt32 = 0x200  // SDL_WINDOWEVENT
  private static let script: [Int: [Event]] = [
    1: [Event(type: windowEvent, window: Event.Window(event: 6, data1: 800, data2: 600))],  // SIZE_CHANGED
    300: [Event(type: windowEvent, window: Event.Window(event: 7))],  // SDL_WINDOWEVENT_MINIMIZED
    310: [Event(type: windowEvent, window: Event.Window(event: 9))],  // SDL_WINDOWEVENT_RESTORED
    620: [Event(type: quit)],
  ]

  private var iteration = 0
  private var pending: [Event] = []
  private var polling = false

  /// The next event of this iteration of the loop, as `SDL_PollEvent` gives it; nil ends the
  /// iteration's events.
  mutating func poll() -> Event? {
    if !polling {
      iteration += 1
      pending = Self.script[iteration] ?? []
      polling = true
    }
    guard !pending.isEmpty else {
      polling = false
      return nil
    }
    return pending.removeFirst()
  }
}
