import Foundation
import Stasis
import StasisNotify
import Testing

/// `DesktopNotifier` against a real session bus (this process's own `dbus-daemon`) and a real
/// notification server that records what it receives. One server at a time owns the name, so
/// the tests take turns.
@Suite("Desktop notifications over a real session bus", .serialized)
struct DesktopNotifierTests {
  let bus: TestSessionBus

  init() throws {
    bus = try TestSessionBus.shared.get()
  }

  private func notification(_ identifier: String, _ body: String) -> TimerNotification {
    TimerNotification(
      identifier: identifier, title: "Tanks", body: body, date: Date(timeIntervalSince1970: 1_800_000_000))
  }

  private func startServer(refuse: Bool = false) throws -> NotificationRecorder {
    try NotificationRecorder(on: bus, refuse: refuse)
  }

  private func stop(_ server: NotificationRecorder) throws {
    try server.stop(untilReleased: { !DesktopNotifier.isAvailable() })
  }

  @Test("a posted notification arrives with its title, body, app name and category")
  func arrives() throws {
    let server = try startServer()
    defer { try? stop(server) }
    #expect(DesktopNotifier.isAvailable())
    let notifier = DesktopNotifier(appName: "Tanks (tests)")
    try notifier.post(notification("harvest", "The harvest is in."))
    let calls = try server.calls(1)
    #expect(calls[0].event == "notify")
    #expect(calls[0].appName == "Tanks (tests)")
    #expect(calls[0].summary == "Tanks")
    #expect(calls[0].body == "The harvest is in.")
    #expect(calls[0].replacesID == 0)
    #expect(calls[0].hints == NotificationRecorder.Entry.Hints(category: "x-stasis.timer", urgency: 1))
  }

  @Test("a second post for the same identifier replaces the first; another identifier stacks")
  func replaces() throws {
    let server = try startServer()
    defer { try? stop(server) }
    let notifier = DesktopNotifier(appName: "Tanks")
    try notifier.post(notification("harvest", "The harvest is in."))
    try notifier.post(notification("repairs", "Your tank is repaired."))
    try notifier.post(notification("harvest", "The second harvest is in."))
    let calls = try server.calls(3)
    let first = try #require(calls[0].id)
    #expect(first != 0)
    #expect(calls[1].replacesID == 0)
    #expect(calls[1].id != first)
    #expect(calls[2].replacesID == first)
    #expect(calls[2].id == first)
    #expect(calls[2].body == "The second harvest is in.")
  }

  @Test("copies of a notifier share what it keeps: a copy's post replaces the original's")
  func copiesShare() throws {
    let server = try startServer()
    defer { try? stop(server) }
    let notifier = DesktopNotifier(appName: "Tanks")
    let copy = notifier
    try notifier.post(notification("harvest", "The harvest is in."))
    try copy.post(notification("harvest", "The second harvest is in."))
    let calls = try server.calls(2)
    #expect(calls[1].replacesID == calls[0].id)
  }

  @Test("with no notification server on the bus, post throws at once and isAvailable is false")
  func noServer() throws {
    #expect(!DesktopNotifier.isAvailable())
    let notifier = DesktopNotifier(appName: "Tanks")
    let started = ContinuousClock.now
    let error = #expect(throws: DesktopNotifier.Error.self) {
      try notifier.post(notification("harvest", "The harvest is in."))
    }
    let elapsed = ContinuousClock.now - started
    #expect(error?.kind == .noNotificationService)
    #expect(error?.remoteName == "org.freedesktop.DBus.Error.ServiceUnknown")
    #expect(elapsed < .seconds(1), "a post with no server took \(elapsed)")
  }

  @Test("a server that stopped answering: post throws .noReply within about a second, not D-Bus's 25 s")
  func frozenServer() throws {
    let server = try startServer()
    defer { try? stop(server) }
    let notifier = DesktopNotifier(appName: "Tanks")
    try notifier.post(notification("harvest", "The harvest is in."))
    server.freeze()
    let started = ContinuousClock.now
    let error = #expect(throws: DesktopNotifier.Error.self) {
      try notifier.post(notification("harvest", "The second harvest is in."))
    }
    let elapsed = ContinuousClock.now - started
    #expect(error?.kind == .noReply)
    #expect(elapsed < .seconds(3), "a post to a frozen server took \(elapsed)")
    #expect(!DesktopNotifier.isAvailable())
    server.thaw()
    #expect(try server.calls(1).count == 1)
  }

  @Test("a server that answers Notify with an error: post throws .failed with the D-Bus error's name")
  func refused() throws {
    let server = try startServer(refuse: true)
    defer { try? stop(server) }
    let notifier = DesktopNotifier(appName: "Tanks")
    let error = #expect(throws: DesktopNotifier.Error.self) {
      try notifier.post(notification("harvest", "The harvest is in."))
    }
    #expect(error?.kind == .failed)
    #expect(error?.remoteName == "org.freedesktop.Notifications.Error.Refused")
    #expect(try server.calls(1)[0].event == "refused")
  }

  @Test("a notification server that restarted receives the next post")
  func restartedServer() throws {
    let notifier = DesktopNotifier(appName: "Tanks")
    let first = try startServer()
    try notifier.post(notification("harvest", "The harvest is in."))
    _ = try first.calls(1)
    try stop(first)
    let second = try startServer()
    defer { try? stop(second) }
    try notifier.post(notification("repairs", "Your tank is repaired."))
    #expect(try second.calls(1)[0].body == "Your tank is repaired.")
  }
}
