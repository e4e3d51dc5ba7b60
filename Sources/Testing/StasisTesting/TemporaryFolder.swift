import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A new, empty folder under the system's temporary directory that removes itself, and
/// everything in it, when the last reference to it goes: one per test, as GRDB's test case
/// makes and removes a folder per test.
///
/// ```swift
/// let folder = try TemporaryFolder()
/// let store = SaveStore(directory: folder.path)
/// ```
public final class TemporaryFolder: Sendable {
  /// The folder's absolute path.
  public let path: String

  /// Makes the folder (`mkdtemp`), named `PREFIX-XXXXXX` under `TMPDIR` (or `/tmp`).
  public init(prefix: String = "stasis-test") throws {
    let base = ProcessInfo.processInfo.environment["TMPDIR"].map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    var template = Array("\(base ?? "/tmp")/\(prefix)-XXXXXX".utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
      throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: "\(base ?? "/tmp")/\(prefix)-XXXXXX"])
    }
    path = String(cString: made)
  }

  /// The path of `name` inside the folder.
  public func appending(_ name: String) -> String { "\(path)/\(name)" }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// A new, empty folder that lives until the test process exits, for a test that hands the
  /// path on and keeps no reference: it is made inside one folder of this process's own, and
  /// that folder, with everything in it, is removed when the process exits (`atexit`). The two
  /// ways a test gets a temporary folder, this and ``init(prefix:)``, both clean up after it.
  public static func untilExit(prefix: String = "stasis-test") throws -> String {
    let folder = try TemporaryFolder.makeFolder(in: processFolder, prefix: prefix)
    return folder
  }

  /// This process's folder of ``untilExit(prefix:)`` folders, made on first use, with the
  /// handler that removes it at exit.
  private static let processFolder: String = {
    let base = ProcessInfo.processInfo.environment["TMPDIR"].map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
    let folder = (try? makeFolder(in: base ?? "/tmp", prefix: "stasis-tests-\(getpid())")) ?? (base ?? "/tmp")
    exitFolder.withLock { $0 = folder }
    atexit {
      guard let folder = TemporaryFolder.exitFolder.withLock({ $0 }) else { return }
      try? FileManager.default.removeItem(atPath: folder)
    }
    return folder
  }()

  /// The folder the exit handler removes (a C handler captures nothing: it reads it here).
  private static let exitFolder = Mutex<String?>(nil)

  private static func makeFolder(in parent: String, prefix: String) throws -> String {
    var template = Array("\(parent)/\(prefix)-XXXXXX".utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
      throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: "\(parent)/\(prefix)-XXXXXX"])
    }
    return String(cString: made)
  }
}
