import CStasisSDL2
import Stasis

/// A lifecycle transition that an SDL event asks for.
public enum LifecycleTransition: Sendable, Equatable {
  /// Focus lost, or on the way to the background.
  case resignActive
  /// Focus back.
  case becomeActive
  /// Minimised, hidden, or sent away by the platform.
  case enterBackground
  /// Restored, shown, or brought back by the platform.
  case enterForeground
  /// Quit.
  case terminate
  /// Memory is short.
  case memoryWarning
  /// The window, the display or a setting changed.
  case environment(EnvironmentChange)
}

/// Maps one SDL event to the lifecycle transition it stands for, as the demo game's window section
/// lays out: the mobile `SDL_APP_*` events, and on the desktop focus, minimise/restore, hide/show,
/// size and display changes, and `SDL_QUIT`. Events with no lifecycle meaning give `nil`.
public func lifecycleTransition(for event: SDL_Event) -> LifecycleTransition? {
  lifecycleTransition(
    sdlEventType: event.type, windowEvent: event.window.event, data1: event.window.data1, data2: event.window.data2)
}

/// The same mapping from SDL's raw numbers, for a game on another SDL binding (SwiftSDL2, a
/// binding of its own), whose `SDL_Event` is not StasisSDL's type: pass `event.type` and, for
/// `SDL_WINDOWEVENT`, `event.window.event`, `data1` and `data2`. SDL2's numbers are its ABI,
/// the same whichever module imported its headers.
///
/// ```swift
/// if let transition = lifecycleTransition(
///   sdlEventType: event.type, windowEvent: event.window.event,
///   data1: event.window.data1, data2: event.window.data2)
/// {
///   application.apply(transition)
/// }
/// ```
public func lifecycleTransition(sdlEventType: UInt32, windowEvent: UInt8 = 0, data1: Int32 = 0, data2: Int32 = 0)
  -> LifecycleTransition?
{
  switch SDL_EventType(sdlEventType) {
  case SDL_APP_WILLENTERBACKGROUND: return .resignActive
  case SDL_APP_DIDENTERBACKGROUND: return .enterBackground
  case SDL_APP_WILLENTERFOREGROUND, SDL_APP_DIDENTERFOREGROUND: return .enterForeground
  case SDL_APP_TERMINATING, SDL_QUIT: return .terminate
  case SDL_APP_LOWMEMORY: return .memoryWarning
  case SDL_WINDOWEVENT:
    switch SDL_WindowEventID(UInt32(windowEvent)) {
    case SDL_WINDOWEVENT_FOCUS_LOST: return .resignActive
    case SDL_WINDOWEVENT_FOCUS_GAINED: return .becomeActive
    case SDL_WINDOWEVENT_MINIMIZED, SDL_WINDOWEVENT_HIDDEN: return .enterBackground
    case SDL_WINDOWEVENT_RESTORED, SDL_WINDOWEVENT_SHOWN: return .enterForeground
    case SDL_WINDOWEVENT_SIZE_CHANGED:
      return .environment(EnvironmentChange(.windowResized, .size(width: Int(data1), height: Int(data2))))
    case SDL_WINDOWEVENT_DISPLAY_CHANGED:
      return .environment(EnvironmentChange(.displayChanged, .index(Int(data1))))
    default: return nil
    }
  default: return nil
  }
}

/// The transition of an event taken from another binding's queue, by SDL's raw numbers: `nil`
/// for the `SDL_APP_*` events, which a ``LifecycleEventWatch`` delivers (it is installed on the
/// process's one SDL, whichever binding the game polls with).
public func lifecycleTransitionFromQueue(
  sdlEventType: UInt32, windowEvent: UInt8 = 0, data1: Int32 = 0, data2: Int32 = 0
) -> LifecycleTransition? {
  LifecycleEventWatch.handles(sdlEventType)
    ? nil : lifecycleTransition(sdlEventType: sdlEventType, windowEvent: windowEvent, data1: data1, data2: data2)
}

/// The transition of an event taken from SDL's queue (`SDL_PollEvent`): the `SDL_APP_*`
/// events are left to ``LifecycleEventWatch``, which already delivered them.
public func lifecycleTransitionFromQueue(_ event: SDL_Event) -> LifecycleTransition? {
  LifecycleEventWatch.handles(event.type) ? nil : lifecycleTransition(for: event)
}

extension LifecycleTransition {
  /// True when the transition means something in `state`. Windows send redundant events — X11
  /// sends focus gained right after shown, and both minimised and hidden — so the window layer
  /// applies only the ones that change something, and the application's "ignored" log stays
  /// for real misuse.
  public func applies(in state: ApplicationState) -> Bool {
    switch self {
    case .resignActive: return state == .active
    case .becomeActive: return state == .inactive
    case .enterBackground: return state == .active || state == .inactive
    case .enterForeground: return state.isInBackground
    case .terminate: return state != .notRunning
    case .memoryWarning, .environment: return state != .notRunning
    }
  }
}

extension Application {
  /// Applies a transition when it means something in the current state (see
  /// ``LifecycleTransition/applies(in:)``); returns whether it did.
  @discardableResult
  public func apply(_ transition: LifecycleTransition) -> Bool {
    guard transition.applies(in: state), transition != .terminate || !isTerminating else { return false }
    switch transition {
    case .resignActive: resignActive()
    case .becomeActive: becomeActive()
    case .enterBackground: enterBackground()
    case .enterForeground: enterForeground()
    case .terminate: terminate()
    case .memoryWarning: receiveMemoryWarning()
    case .environment(let change): post(change)
    }
    return true
  }
}
