import CStasisLibNotify

extension DesktopNotifier {
  /// Why a desktop notification was not posted: its kind, and GLib's error as it was reported.
  ///
  /// Classify by ``kind`` (or by ``domain``, ``code`` and ``remoteName``), never by the text of
  /// ``message``. The timer itself is unaffected: the game still receives it on its return.
  public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in terms a game can act on.
    public enum Kind: Sendable, Equatable {
      /// There is no session bus to reach (no `DBUS_SESSION_BUS_ADDRESS`, or it refused the
      /// connection, or it went away).
      case noSessionBus
      /// The session bus has no notification service: no process owns
      /// `org.freedesktop.Notifications`, and none can be started for it.
      case noNotificationService
      /// The notification service owns the name but did not answer in time.
      case noReply
      /// The service or the bus answered with another error (see ``remoteName``).
      case failed
    }

    /// What went wrong.
    public var kind: Kind
    /// The `GError`'s domain, such as `g-dbus-error-quark` or `g-io-error-quark`.
    public var domain: String
    /// The `GError`'s code within ``domain``.
    public var code: Int32
    /// The `GError`'s message.
    public var message: String
    /// The D-Bus error's name when the bus or the service replied with one, such as
    /// `org.freedesktop.DBus.Error.ServiceUnknown`.
    public var remoteName: String?

    /// Creates an error; StasisNotify makes them from GLib's.
    public init(_ kind: Kind, domain: String, code: Int32, message: String, remoteName: String? = nil) {
      self.kind = kind
      self.domain = domain
      self.code = code
      self.message = message
      self.remoteName = remoteName
    }

    /// One line: the kind, GLib's message, the D-Bus error's name.
    public var description: String {
      let what =
        switch kind {
        case .noSessionBus: "no session bus"
        case .noNotificationService: "no notification service on the session bus"
        case .noReply: "the notification service did not answer"
        case .failed: "the desktop notification failed"
        }
      return "\(what): \(message) (\(remoteName ?? "\(domain) \(code)"))"
    }
  }
}

extension DesktopNotifier.Error {
  /// An error of `kind` from `error`, which it frees.
  init(_ kind: Kind, consuming error: UnsafeMutablePointer<GError>?) {
    guard let error else {
      self.init(kind, domain: "StasisNotify", code: 0, message: "GLib reported no error")
      return
    }
    defer { g_error_free(error) }
    var remoteName: String?
    if let remote = g_dbus_error_get_remote_error(error) {
      remoteName = String(cString: remote)
      g_free(remote)
    }
    self.init(
      kind, domain: String(cString: g_quark_to_string(error.pointee.domain)), code: error.pointee.code,
      message: String(cString: error.pointee.message), remoteName: remoteName)
  }

  /// `error` (which it frees) classified by its domain and code: a closed or unreachable bus,
  /// a name nobody owns, a reply that did not come, or anything else.
  init(classifying error: UnsafeMutablePointer<GError>?) {
    self.init(Self.kind(of: error), consuming: error)
  }

  private static func kind(of error: UnsafeMutablePointer<GError>?) -> Kind {
    guard let error else { return .failed }
    let code = error.pointee.code
    if error.pointee.domain == g_dbus_error_quark() {
      switch UInt32(bitPattern: code) {
      case G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue, G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue:
        return .noNotificationService
      case G_DBUS_ERROR_NO_REPLY.rawValue, G_DBUS_ERROR_TIMEOUT.rawValue, G_DBUS_ERROR_TIMED_OUT.rawValue:
        return .noReply
      case G_DBUS_ERROR_DISCONNECTED.rawValue, G_DBUS_ERROR_NO_SERVER.rawValue, G_DBUS_ERROR_NO_NETWORK.rawValue:
        return .noSessionBus
      default:
        return .failed
      }
    }
    if error.pointee.domain == g_io_error_quark() {
      switch UInt32(bitPattern: code) {
      case G_IO_ERROR_TIMED_OUT.rawValue: return .noReply
      case G_IO_ERROR_CLOSED.rawValue, G_IO_ERROR_CONNECTION_CLOSED.rawValue, G_IO_ERROR_NOT_FOUND.rawValue,
        G_IO_ERROR_CONNECTION_REFUSED.rawValue:
        return .noSessionBus
      default: return .failed
      }
    }
    return .failed
  }
}
