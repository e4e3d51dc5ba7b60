import Foundation
import StasisTestSupport

/// A notification server on the test's session bus (Fixtures/notification-recorder.py): it owns
/// `org.freedesktop.Notifications` from `init` until `stop()`, and appends what it receives to a
/// file, one JSON line each.
final class NotificationRecorder {
  /// One line of the record.
  struct Entry: Decodable, Equatable {
    struct Hints: Decodable, Equatable {
      var category: String?
      var urgency: Int?
    }

    /// `ready`, `notify`, or `refused`.
    var event: String
    var appName: String?
    var replacesID: UInt32?
    var summary: String?
    var body: String?
    var hints: Hints?
    /// The id the server answered.
    var id: UInt32?

    enum CodingKeys: String, CodingKey {
      case event, summary, body, hints, id
      case appName = "app_name"
      case replacesID = "replaces_id"
    }
  }

  private let process = Process()
  private let lifeline = Pipe()
  private let record: URL
  private let log: URL
  private var stopped = false

  /// Starts the server and waits until it owns the name. With `refuse`, it answers every
  /// Notify with a D-Bus error.
  init(on bus: TestSessionBus, refuse: Bool = false) throws {
    let folder = try temporaryFolder()
    record = folder.appendingPathComponent("record.jsonl")
    log = folder.appendingPathComponent("recorder.log")
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    let script = packageRoot.appendingPathComponent("Tests/StasisNotifyTests/Fixtures/notification-recorder.py")
    process.executableURL = URL(fileURLWithPath: bus.python)
    process.arguments = [script.path, bus.address, record.path] + (refuse ? ["--refuse"] : [])
    process.standardInput = lifeline
    process.standardOutput = FileHandle.nullDevice
    process.standardError = try FileHandle(forWritingTo: log)
    try launch(process)
    _ = try waitFor("the notification server to own its name", within: .seconds(10)) { () throws -> Bool? in
      guard process.isRunning else {
        throw SetupFailure("the notification server exited: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
      }
      return try entries().contains { $0.event == "ready" } ? true : nil
    }
  }

  /// Every line recorded so far.
  func entries() throws -> [Entry] {
    guard let data = FileManager.default.contents(atPath: record.path) else { return [] }
    return try data.split(separator: UInt8(ascii: "\n")).map { try JSONDecoder().decode(Entry.self, from: Data($0)) }
  }

  /// The first `count` lines other than `ready`, once they are there.
  func calls(_ count: Int, within limit: Duration = .seconds(10)) throws -> [Entry] {
    try waitFor("\(count) calls in \(record.path)", within: limit) { () throws -> [Entry]? in
      let calls = try entries().filter { $0.event != "ready" }
      return calls.count >= count ? Array(calls.prefix(count)) : nil
    }
  }

  /// Freezes the server (SIGSTOP): it still owns its name but answers nothing.
  func freeze() { kill(process.processIdentifier, SIGSTOP) }

  /// Lets a frozen server run again.
  func thaw() { kill(process.processIdentifier, SIGCONT) }

  /// Stops the server and waits until the bus has released its name (`isReleased` polls that).
  func stop(untilReleased isReleased: () -> Bool) throws {
    guard !stopped else { return }
    stopped = true
    thaw()
    process.terminate()
    do {
      _ = try waitFor("the notification server to exit on SIGTERM", within: .seconds(10)) {
        process.isRunning ? nil : true
      }
    } catch {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      throw error
    }
    _ = try waitFor("the bus to release the notification server's name", within: .seconds(10)) {
      isReleased() ? true : nil
    }
  }

  deinit {
    if !stopped { kill(process.processIdentifier, SIGKILL) }
  }
}
