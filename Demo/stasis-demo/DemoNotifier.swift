import Stasis
import StasisNotify

/// The demo's desktop notifications for timers that fall due in the background: freedesktop
/// notifications through `StasisNotify`, where a notification service answers.
enum DemoNotifier {
  /// A `DesktopNotifier` when a notification service answers now; nil (and the timers are
  /// still delivered on return) when none does.
  static func make() -> (any TimerNotifier)? {
    DesktopNotifier.isAvailable() ? DesktopNotifier(appName: "Stasis demo") : nil
  }
}
