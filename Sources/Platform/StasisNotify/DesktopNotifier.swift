import CStasisLibNotify
import Stasis
import Synchronization

/// Posts `TimerNotification`s as desktop notifications: freedesktop notifications over
/// the session bus (D-Bus), through libnotify.
///
/// A newer notification for the same `TimerNotification.identifier` replaces the
/// older one on the desktop instead of stacking beside it: the notifier keeps the server's id for
/// each identifier and sends it back as `replaces_id`.
///
/// ```swift
/// import StasisNotify
///
/// if DesktopNotifier.isAvailable() {
///   let notifier = DesktopNotifier(appName: "Tanks")
///   try notifier.post(TimerNotification(identifier: "harvest", title: "Tanks", body: "The harvest is in.", date: .now))
/// }
/// ```
///
/// `post` throws a ``DesktopNotifier/Error`` — never crashes, never waits long — when there is no
/// session bus, when nothing owns `org.freedesktop.Notifications` on it, or when the owner does
/// not answer a ping within a second. Copies of a notifier share what it keeps, and any thread
/// may post. StasisNotify turns the session connection's exit-on-close off, so a session bus
/// that goes away does not terminate the game.
public struct DesktopNotifier: TimerNotifier {
  /// The application name the notifications carry (`app_name`).
  public let appName: String
  private let shelf = Shelf()

  /// How many identifiers a notifier remembers; posting for one more forgets the one posted
  /// longest ago, whose next notification then stacks instead of replacing.
  public static let rememberedIdentifiers = 64

  /// Creates a notifier whose notifications carry `appName`; the first one in a process
  /// initializes libnotify (`notify_init`).
  public init(appName: String) {
    self.appName = appName
    libNotify.withLock { _ = $0.initialize(appName: appName) }
  }

  /// Whether a notification service answers on the session bus now: a process owns
  /// `org.freedesktop.Notifications` and answers a ping, or the bus can start one on demand.
  public static func isAvailable() -> Bool {
    do {
      let bus = try sessionBus()
      defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
      if try serviceHasOwner(on: bus) {
        try pingService(on: bus)
        return true
      }
      return try serviceIsActivatable(on: bus)
    } catch {
      return false
    }
  }

  /// Shows `notification` on the desktop: its title as the summary, its body as the body, in the
  /// category `x-stasis.timer` at normal urgency, replacing the notification posted last for the
  /// same identifier.
  public func post(_ notification: TimerNotification) throws(DesktopNotifier.Error) {
    let bus = try sessionBus()
    defer { g_object_unref(UnsafeMutableRawPointer(bus)) }
    // A service that can be started on demand has no owner yet: libnotify's call starts it.
    if try serviceHasOwner(on: bus) { try pingService(on: bus) }
    try libNotify.withLock { (state) throws(DesktopNotifier.Error) in
      guard state.initialize(appName: appName) else {
        throw Error(.failed, domain: "StasisNotify", code: 0, message: "notify_init failed")
      }
      try state.withContext { () throws(DesktopNotifier.Error) in
        try shelf.show(notification, appName: appName)
      }
    }
  }
}

/// The libnotify notification objects a notifier keeps, one per identifier, oldest first:
/// libnotify sends an object's server id as `replaces_id` when it is shown again.
private final class Shelf: Sendable {
  private struct Kept {
    var identifier: String
    var object: UnsafeMutablePointer<NotifyNotification>
  }

  private let kept = Mutex<[Kept]>([])

  /// Shows `notification` through the object kept for its identifier, or a new one. Called
  /// under libnotify's lock.
  func show(_ notification: TimerNotification, appName: String) throws(DesktopNotifier.Error) {
    try kept.withLock { (kept) throws(DesktopNotifier.Error) in
      let object: UnsafeMutablePointer<NotifyNotification>
      if let index = kept.firstIndex(where: { $0.identifier == notification.identifier }) {
        object = kept.remove(at: index).object
        notify_notification_update(object, notification.title, notification.body, nil)
      } else {
        object = notify_notification_new(notification.title, notification.body, nil)
        notify_notification_set_app_name(object, appName)
        notify_notification_set_category(object, "x-stasis.timer")
        notify_notification_set_urgency(object, NOTIFY_URGENCY_NORMAL)
        if kept.count >= DesktopNotifier.rememberedIdentifiers {
          g_object_unref(kept.removeFirst().object)
        }
      }
      // The newest last, shown or not: an object the server refused has id 0 and is shown anew.
      kept.append(Kept(identifier: notification.identifier, object: object))
      var error: UnsafeMutablePointer<GError>?
      guard notify_notification_show(object, &error) != 0 else {
        throw DesktopNotifier.Error(classifying: error)
      }
    }
  }

  deinit {
    libNotify.withLock { _ in
      kept.withLock { kept in
        for each in kept { g_object_unref(each.object) }
        kept.removeAll()
      }
    }
  }
}
