import Stasis
import Synchronization

/// Records every operation a save makes, with its data, while doing it for real: the raw
/// material for replaying crashes (the method of ALICE, OSDI 2014): a test replays every
/// prefix of a real save as a crash and checks that the slot still loads.
public final class RecordingFileSystem: FileSystemWrapper {
  /// One file-system operation, with paths relative to the root.
  public enum Operation: Equatable, Sendable {
    case create(String)
    case write(String, [UInt8])
    case fsync(String)
    case rename(String, String)
    case fsyncDirectory(String)
    case unlink(String)
  }

  /// The real file system underneath.
  public let wrapped: any FileSystem = PosixFileSystem()
  /// Paths under it are recorded relative to it.
  public let root: String
  private let recorded = Mutex<[Operation]>([])
  private let descriptors = Mutex<[Int32: String]>([:])

  /// Records operations under `root`.
  public init(root: String) { self.root = root }

  /// Every recorded operation, in order.
  public var operations: [Operation] { recorded.withLock { $0 } }
  /// Forgets what was recorded.
  public func reset() { recorded.withLock { $0.removeAll() } }

  private func relative(_ path: String) -> String {
    path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
  }
  private func record(_ operation: Operation) { recorded.withLock { $0.append(operation) } }

  public func createExclusive(_ path: String) throws(FileSystemError) -> Int32 {
    let descriptor = try wrapped.createExclusive(path)
    record(.create(relative(path)))
    return descriptor
  }
  public func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) -> Int {
    let count = try wrapped.write(descriptor, bytes, path: path)
    record(.write(relative(path), Array(bytes.prefix(count))))
    return count
  }
  public func fsync(_ descriptor: Int32, path: String) throws(FileSystemError) {
    try wrapped.fsync(descriptor, path: path)
    record(.fsync(relative(path)))
  }
  public func rename(_ source: String, _ destination: String) throws(FileSystemError) {
    try wrapped.rename(source, destination)
    record(.rename(relative(source), relative(destination)))
  }
  public func unlink(_ path: String) throws(FileSystemError) {
    try wrapped.unlink(path)
    record(.unlink(relative(path)))
  }
  public func fsyncDirectory(_ path: String) throws(FileSystemError) {
    try wrapped.fsyncDirectory(path)
    record(.fsyncDirectory(relative(path)))
  }
}
