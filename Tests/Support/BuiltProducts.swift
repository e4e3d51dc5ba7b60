// Helpers the test targets share: the repository, built products, processes, folders.
import Foundation
import StasisTesting

/// The package's root folder.
public let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent()

/// A built product: the release build when `scripts/test.sh` made one (the stress level's
/// runs take seconds there and minutes in debug), else the one next to this test binary.
///
/// `withDefaultTraits`: the one next to the tests, always. `scripts/test.sh` builds the release
/// demo without the package's traits (no HTTP client, no SQLite); a test of what they add — the
/// window's high-score table — runs the build a player runs.
public func builtProduct(_ name: String, withDefaultTraits: Bool = false) throws -> URL {
  let release = packageRoot.appendingPathComponent(".build/release/\(name)")
  if !withDefaultTraits, ProcessInfo.processInfo.environment["STASIS_USE_RELEASE"] == "1",
    FileManager.default.isExecutableFile(atPath: release.path)
  {
    return release
  }
  let here = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
  let url = here.appendingPathComponent(name)
  guard FileManager.default.isExecutableFile(atPath: url.path) else {
    throw MissingProduct(description: "\(name) is not built next to the tests at \(url.path); run `swift build` first")
  }
  return url
}

/// A product the tests run was not built.
public struct MissingProduct: Error, CustomStringConvertible {
  public var description: String
}

/// The result of running a built product.
public struct ProcessResult {
  public var status: Int32
  public var stdout: String
  public var stderr: String
  public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// Launches take turns: a test process crashed with SIGSEGV (signal 11) while many tests launched
/// the CLI at once, as a helper saw in `Process.run()` before. Foundation's launch on Linux is
/// not known to be safe from several threads; serialising it costs microseconds per launch.
private let launches = NSLock()

/// `process.run()`, one launch at a time in this test process.
public func launch(_ process: Process) throws {
  launches.lock()
  defer { launches.unlock() }
  try process.run()
}

/// Runs a built product with arguments and waits for it to exit; `environment`, when given,
/// replaces this process's environment.
public func run(
  _ product: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String]? = nil,
  withDefaultTraits: Bool = false
) throws -> ProcessResult {
  let process = Process()
  process.executableURL = try builtProduct(product, withDefaultTraits: withDefaultTraits)
  process.arguments = arguments
  if let directory { process.currentDirectoryURL = directory }
  if let environment { process.environment = environment }
  // stderr goes to a file, so a chatty child never blocks on a full pipe while we read stdout.
  let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("stasis-stderr-\(UUID().uuidString)")
  FileManager.default.createFile(atPath: errURL.path, contents: nil)
  defer { try? FileManager.default.removeItem(at: errURL) }
  let errHandle = try FileHandle(forWritingTo: errURL)
  let out = Pipe()
  process.standardOutput = out
  process.standardError = errHandle
  try launch(process)
  let outData = out.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  try errHandle.close()
  return ProcessResult(
    status: process.terminationStatus,
    stdout: String(decoding: outData, as: UTF8.self),
    stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
}

/// A fresh empty folder under the system's temporary folder, removed with the others when the
/// test process exits (`StasisTesting`'s `TemporaryFolder.untilExit`).
public func temporaryFolder() throws -> URL {
  URL(fileURLWithPath: try TemporaryFolder.untilExit(prefix: "stasis-test"))
}

/// A process whose standard output is read line by line as it comes.
public final class LineProcess: @unchecked Sendable {
  public let process = Process()
  private let pipe = Pipe()
  private var buffer = Data()
  public private(set) var lines: [String] = []

  /// Starts the process; it is killed after `limit` seconds, so a test that waits on it fails
  /// instead of hanging the suite.
  public init(_ executable: URL, _ arguments: [String], environment: [String: String] = [:], limit: Double = 120) throws
  {
    process.executableURL = executable
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try launch(process)
    let process = self.process
    DispatchQueue.global().asyncAfter(deadline: .now() + limit) {
      if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
  }

  /// Reads until a line satisfies `match` (or the process closes its output); returns it.
  public func waitForLine(_ match: (String) -> Bool) -> String? {
    if let line = lines.first(where: match) { return line }
    while true {
      let chunk = pipe.fileHandleForReading.availableData
      if chunk.isEmpty { return nil }
      buffer.append(chunk)
      while let newline = buffer.firstIndex(of: 0x0A) {
        let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
        buffer.removeSubrange(buffer.startIndex...newline)
        lines.append(line)
        if match(line) { return line }
      }
    }
  }
}
