import CStasisSDL2
import Stasis

/// Delivers the mobile `SDL_APP_*` events from an SDL event watch, the moment SDL sees them,
/// instead of from the polled queue: on iOS and Android the OS may give the app no time
/// after sending them, so a save started from the next poll can come too late (kivy#3202,
/// SDL#11627). The polled path skips them (`lifecycleTransitionFromQueue`), so no transition is
/// applied twice.
public final class LifecycleEventWatch {
  /// Called with each transition, on the thread that delivered the event.
  public typealias Handler = @Sendable (LifecycleTransition) -> Void

  fileprivate final class Box: LifecycleEventWatchBoxCalling {
    let handler: Handler
    init(_ handler: @escaping Handler) { self.handler = handler }
    func call(_ transition: LifecycleTransition) { handler(transition) }
  }

  private let box: Unmanaged<Box>

  /// Installs the watch; it stays until ``remove()`` or deinit.
  public init(_ handler: @escaping Handler) {
    box = Unmanaged.passRetained(Box(handler))
    SDL_AddEventWatch(lifecycleWatch, box.toOpaque())
  }

  /// Removes the watch.
  public func remove() {
    SDL_DelEventWatch(lifecycleWatch, box.toOpaque())
  }

  deinit {
    remove()
    box.release()
  }

  /// True for the events this watch handles: the polled path must ignore them.
  public static func handles(_ type: UInt32) -> Bool {
    switch SDL_EventType(type) {
    case SDL_APP_WILLENTERBACKGROUND, SDL_APP_DIDENTERBACKGROUND, SDL_APP_WILLENTERFOREGROUND,
      SDL_APP_DIDENTERFOREGROUND, SDL_APP_TERMINATING, SDL_APP_LOWMEMORY:
      return true
    default:
      return false
    }
  }
}

private func lifecycleWatch(_ userdata: UnsafeMutableRawPointer?, _ event: UnsafeMutablePointer<SDL_Event>?) -> Int32 {
  guard let userdata, let event, LifecycleEventWatch.handles(event.pointee.type),
    let transition = lifecycleTransition(for: event.pointee)
  else { return 0 }
  let box = Unmanaged<AnyObject>.fromOpaque(userdata).takeUnretainedValue()
  (box as? LifecycleEventWatchBoxCalling)?.call(transition)
  return 0
}

/// Lets the C callback reach the handler without knowing the private box type.
private protocol LifecycleEventWatchBoxCalling { func call(_ transition: LifecycleTransition) }
