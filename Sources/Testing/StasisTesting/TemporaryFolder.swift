import Foundation

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
}
