// The desktop notifications article's Swift, compiled (GuideTests checks every block is here).
import Foundation
import Stasis
import StasisNotify

/// A notifier only where a notification service answers.
func snippetNotifier() -> (any TimerNotifier)? {
  let notifier: (any TimerNotifier)? = DesktopNotifier.isAvailable() ? DesktopNotifier(appName: "Tanks") : nil
  return notifier
}

/// The second harvest's notification replaces the first's on the desktop.
func snippetHarvests(notifier: any TimerNotifier) throws {
  try notifier.post(TimerNotification(identifier: "harvest", title: "Tanks", body: "Harvest is in.", date: .now))
  try notifier.post(TimerNotification(identifier: "harvest", title: "Tanks", body: "Harvest 2 is in.", date: .now))
}
