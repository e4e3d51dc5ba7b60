import CSDL2
import Stasis

/// A lifecycle transition that an SDL event asks for.
public enum LifecycleTransition: Sendable, Equatable {
  case resignActive
  case becomeActive
  case enterBackground
  case enterForeground
  case terminate
  case memoryWarning
  case environment(EnvironmentChange)
}

/// Maps one SDL event to the lifecycle transition it stands for, as DESIGN.md lays out:
/// the mobile `SDL_APP_*` events, and on the desktop focus, minimise/restore, hide/show,
/// size and display changes, and `SDL_QUIT`. Events with no lifecycle meaning give `nil`.
public func lifecycleTransition(for event: SDL_Event) -> LifecycleTransition? {
  switch SDL_EventType(event.type) {
  case SDL_APP_WILLENTERBACKGROUND: return .resignActive
  case SDL_APP_DIDENTERBACKGROUND: return .enterBackground
  case SDL_APP_WILLENTERFOREGROUND, SDL_APP_DIDENTERFOREGROUND: return .enterForeground
  case SDL_APP_TERMINATING, SDL_QUIT: return .terminate
  case SDL_APP_LOWMEMORY: return .memoryWarning
  case SDL_WINDOWEVENT:
    switch SDL_WindowEventID(UInt32(event.window.event)) {
    case SDL_WINDOWEVENT_FOCUS_LOST: return .resignActive
    case SDL_WINDOWEVENT_FOCUS_GAINED: return .becomeActive
    case SDL_WINDOWEVENT_MINIMIZED, SDL_WINDOWEVENT_HIDDEN: return .enterBackground
    case SDL_WINDOWEVENT_RESTORED, SDL_WINDOWEVENT_SHOWN: return .enterForeground
    case SDL_WINDOWEVENT_SIZE_CHANGED:
      return .environment(
        EnvironmentChange(.windowResized, .size(width: Int(event.window.data1), height: Int(event.window.data2))))
    case SDL_WINDOWEVENT_DISPLAY_CHANGED:
      return .environment(EnvironmentChange(.displayChanged, .index(Int(event.window.data1))))
    default: return nil
    }
  default: return nil
  }
}

/// The transition of an event taken from SDL's queue (`SDL_PollEvent`): the `SDL_APP_*`
/// events are left to ``LifecycleEventWatch``, which already delivered them.
public func lifecycleTransitionFromQueue(_ event: SDL_Event) -> LifecycleTransition? {
  LifecycleEventWatch.handles(event.type) ? nil : lifecycleTransition(for: event)
}

extension Application {
  /// Applies a transition; transitions that make no sense in the current state are ignored
  /// by the application itself, so no transition is ever applied twice.
  public func apply(_ transition: LifecycleTransition) {
    switch transition {
    case .resignActive: resignActive()
    case .becomeActive: becomeActive()
    case .enterBackground: enterBackground()
    case .enterForeground: enterForeground()
    case .terminate: terminate()
    case .memoryWarning: receiveMemoryWarning()
    case .environment(let change): post(change)
    }
  }
}
