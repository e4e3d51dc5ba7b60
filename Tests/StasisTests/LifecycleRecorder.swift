import Stasis
import StasisTesting

/// A delegate that writes down every callback, in order, as `delegate: <event>`.
@MainActor
final class LifecycleRecorder: ApplicationDelegate {
  var calls: [String] = []
  var launchOptions: LaunchOptions?
  var changes: [EnvironmentChange] = []
  var onEnterBackground: ((Application) -> Void)?

  func applicationDidFinishLaunching(_ application: Application, options: LaunchOptions) {
    launchOptions = options
    calls.append("didFinishLaunching")
  }
  func applicationDidBecomeActive(_ application: Application) { calls.append("didBecomeActive") }
  func applicationWillResignActive(_ application: Application) { calls.append("willResignActive") }
  func applicationDidEnterBackground(_ application: Application) {
    calls.append("didEnterBackground")
    onEnterBackground?(application)
  }
  func applicationWillEnterForeground(_ application: Application) { calls.append("willEnterForeground") }
  func applicationWillTerminate(_ application: Application) { calls.append("willTerminate") }
  func applicationDidReceiveMemoryWarning(_ application: Application) { calls.append("didReceiveMemoryWarning") }
  func application(_ application: Application, didChangeEnvironment change: EnvironmentChange) {
    calls.append("environment:\(change.kind)")
    changes.append(change)
  }
}

@MainActor
func makeApplication(
  budget: Duration = .seconds(10), watchdog: Application.WatchdogPolicy = .logOnly
) -> (Application, LifecycleRecorder, ManualClock) {
  let recorder = LifecycleRecorder()
  let clock = ManualClock()
  let app = Application(
    delegate: recorder,
    configuration: .init(backgroundBudget: budget, clock: clock, watchdog: watchdog)
  )
  return (app, recorder, clock)
}
