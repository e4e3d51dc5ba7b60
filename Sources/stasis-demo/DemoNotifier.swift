import Stasis

/// The demo's desktop notifications for timers that fall due in the background.
enum DemoNotifier {
  /// None yet: `StasisNotify`'s `DesktopNotifier` is wired here once it lands.
  static func make() -> (any TimerNotifier)? { nil }
}
