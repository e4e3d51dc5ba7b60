import Foundation
import StasisTestSupport

/// This test process's own session bus: a real `dbus-daemon`, started once and used by every
/// StasisNotify test. `DBUS_SESSION_BUS_ADDRESS` points at it before any test posts, since GLib
/// and libnotify keep their first session connection for the life of the process.
///
/// Its configuration lists no service folders, so nothing on it is started on demand: a
/// notification server exists only while a test runs one. The daemon runs under a shell that
/// kills it when this process's end of a pipe closes, so it never outlives the tests (SIGKILL:
/// children inherit the test thread's blocked signals, SIGTERM among them).
final class TestSessionBus: @unchecked Sendable {  // immutable after init
  /// The bus, or why the tests cannot have one: a missing tool fails the tests, never skips them.
  static let shared: Result<TestSessionBus, any Error> = Result { try TestSessionBus() }

  /// The bus's address, as `dbus-daemon --print-address` printed it.
  let address: String
  /// A Python 3 that imports Debian's `dbus` and `gi` (python3-dbus, python3-gi).
  let python: String
  /// Our end of the pipe the daemon's shell reads: closed when this process ends.
  private let lifeline: Pipe

  private init() throws {
    let daemon = try Self.executable("dbus-daemon", package: "dbus-daemon")
    python = try Self.pythonWithDBus()
    let folder = try temporaryFolder()
    let config = folder.appendingPathComponent("session.conf")
    try """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>session</type>
      <listen>unix:dir=\(folder.path)</listen>
      <auth>EXTERNAL</auth>
      <policy context="default">
        <allow send_destination="*" eavesdrop="true"/>
        <allow eavesdrop="true"/>
        <allow own="*"/>
      </policy>
    </busconfig>
    """.write(to: config, atomically: true, encoding: .utf8)
    let addressFile = folder.appendingPathComponent("address")
    let log = folder.appendingPathComponent("dbus-daemon.log")
    _ = FileManager.default.createFile(atPath: log.path, contents: nil)
    let shell = Process()
    shell.executableURL = URL(fileURLWithPath: "/bin/sh")
    shell.arguments = [
      "-c",
      #""$1" --config-file="$2" --nofork --print-address=1 >"$3" </dev/null & daemon=$!; cat >/dev/null; kill -KILL "$daemon""#,
      "sh", daemon, config.path, addressFile.path,
    ]
    lifeline = Pipe()
    shell.standardInput = lifeline
    shell.standardOutput = FileHandle.nullDevice
    shell.standardError = try FileHandle(forWritingTo: log)
    try launch(shell)
    // The daemon prints its address once it listens.
    let printed = try waitFor("dbus-daemon to print its address (its log: \(log.path))", within: .seconds(10)) {
      () -> String? in
      let text = (try? String(contentsOf: addressFile, encoding: .utf8)) ?? ""
      return text.hasSuffix("\n") ? text.trimmingCharacters(in: .whitespacesAndNewlines) : nil
    }
    address = printed
    setenv("DBUS_SESSION_BUS_ADDRESS", address, 1)
  }

  /// `name` on `PATH` or in /usr/bin, or a failure that says which Debian package provides it.
  private static func executable(_ name: String, package: String) throws -> String {
    let folders =
      (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + [
        "/usr/bin", "/bin",
      ]
    for folder in folders where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
      return "\(folder)/\(name)"
    }
    throw SetupFailure(
      "\(name) is not installed: the StasisNotify tests need a real session bus "
        + "(Debian's \(package); scripts/install-deps.sh installs it)")
  }

  /// Debian's /usr/bin/python3 first (its python3-dbus and python3-gi are for it), then any
  /// `python3` on `PATH` that imports both.
  private static func pythonWithDBus() throws -> String {
    var candidates = ["/usr/bin/python3"]
    if let onPath = try? executable("python3", package: "python3") { candidates.append(onPath) }
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate) {
      let check = Process()
      check.executableURL = URL(fileURLWithPath: candidate)
      check.arguments = ["-c", "import dbus, dbus.service, dbus.mainloop.glib; from gi.repository import GLib"]
      check.standardOutput = FileHandle.nullDevice
      check.standardError = FileHandle.nullDevice
      try launch(check)
      check.waitUntilExit()
      if check.terminationStatus == 0 { return candidate }
    }
    throw SetupFailure(
      "no python3 imports dbus and gi (tried \(candidates.joined(separator: ", "))): the StasisNotify tests' "
        + "notification server needs Debian's python3-dbus and python3-gi; scripts/install-deps.sh installs them")
  }
}

/// Why the StasisNotify tests could not set up what they need.
struct SetupFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// Polls `condition` until it returns a value or `limit` passes (then throws, naming `what`).
/// A bounded wait on a condition, never a fixed sleep.
func waitFor<Value>(_ what: String, within limit: Duration, _ condition: () throws -> Value?) throws -> Value {
  let deadline = ContinuousClock.now + limit
  while true {
    if let value = try condition() { return value }
    guard ContinuousClock.now < deadline else { throw SetupFailure("timed out after \(limit) waiting for \(what)") }
    usleep(5_000)
  }
}
