import CStasisLibNotify
import Synchronization

/// libnotify keeps process-wide state (its application name, one D-Bus proxy) and is not
/// thread-safe: every call into it takes this lock, once per process.
let libNotify = Mutex(LibNotify())

/// What libnotify's lock guards: whether `notify_init` ran, and the GLib main context libnotify's
/// D-Bus proxy delivers its signals to.
///
/// The proxy is made on the first post, while this context is the thread's default, so its
/// signals (a notification closed, the server's name changing owner) never land in a context
/// the game runs — or in none, piling up. Each post dispatches what arrived since the last one
/// first: a server that restarted has a new unique name, and the proxy sends to the name it last
/// saw own `org.freedesktop.Notifications`.
struct LibNotify: ~Copyable {
  /// The context libnotify's proxy belongs to; never freed (the proxy lives as long as the process).
  private let context: OpaquePointer = g_main_context_new()
  /// Whether `notify_init` succeeded in this process.
  private(set) var initialized = false

  /// Calls `notify_init` the first time; libnotify then uses `appName` for notifications that
  /// do not name their own application.
  mutating func initialize(appName: String) -> Bool {
    if !initialized { initialized = notify_init(appName) != 0 }
    return initialized
  }

  /// Runs `body` with libnotify's context as this thread's default, after dispatching what the
  /// proxy received since the last call.
  func withContext<Result>(_ body: () throws(DesktopNotifier.Error) -> Result) throws(DesktopNotifier.Error) -> Result {
    g_main_context_push_thread_default(context)
    defer { g_main_context_pop_thread_default(context) }
    while g_main_context_iteration(context, 0) != 0 {}
    return try body()
  }
}

/// The session bus, or why there is none.
func sessionBus() throws(DesktopNotifier.Error) -> OpaquePointer {
  var error: UnsafeMutablePointer<GError>?
  guard let bus = stasis_notify_session_bus(&error) else {
    throw DesktopNotifier.Error(.noSessionBus, consuming: error)
  }
  guard g_dbus_connection_is_closed(bus) == 0 else {
    g_object_unref(UnsafeMutableRawPointer(bus))
    throw DesktopNotifier.Error(
      .noSessionBus, domain: "StasisNotify", code: 0,
      message: "the session bus closed this process's connection (it was stopped or restarted)")
  }
  return bus
}

/// The well-known name and object of the freedesktop notification service.
let serviceName = "org.freedesktop.Notifications"
let servicePath = "/org/freedesktop/Notifications"

/// How long a notification server may take to answer a ping before ``DesktopNotifier`` gives up:
/// a game posts from the background, inside its time budget.
let pingTimeoutMilliseconds: Int32 = 1000

/// Whether a process owns the notification service's name on `bus` (1), or none does (0).
func serviceHasOwner(on bus: OpaquePointer) throws(DesktopNotifier.Error) -> Bool {
  var error: UnsafeMutablePointer<GError>?
  let owned = stasis_notify_bus_boolean(bus, "NameHasOwner", serviceName, pingTimeoutMilliseconds, &error)
  guard owned >= 0 else { throw DesktopNotifier.Error(classifying: error) }
  return owned == 1
}

/// Whether `bus` would start a notification service on demand (it has a `.service` file for it).
func serviceIsActivatable(on bus: OpaquePointer) throws(DesktopNotifier.Error) -> Bool {
  var error: UnsafeMutablePointer<GError>?
  let found = stasis_notify_activatable(bus, serviceName, pingTimeoutMilliseconds, &error)
  guard found >= 0 else { throw DesktopNotifier.Error(classifying: error) }
  return found == 1
}

/// Pings the service's owner: throws `.noReply` when it does not answer within
/// ``pingTimeoutMilliseconds`` (a server that hangs would otherwise hold a post for D-Bus's
/// default 25 s), `.noNotificationService` when it left. An error reply still means it is alive.
func pingService(on bus: OpaquePointer) throws(DesktopNotifier.Error) {
  var error: UnsafeMutablePointer<GError>?
  guard stasis_notify_ping(bus, serviceName, servicePath, pingTimeoutMilliseconds, &error) == 0 else { return }
  let failure = DesktopNotifier.Error(classifying: error)
  if failure.kind != .failed { throw failure }
}
