import Dispatch
import Stasis
import Synchronization

/// The real file system with fault injection, for tests of a save path: fail the next N calls
/// of an operation with an errno (as swift-system's mocking does), and hold writes at a gate
/// until the test opens it. Operations are named `open`, `write`, `fsync`, `rename`,
/// `fsyncDirectory` and `read`.
///
/// ```swift
/// let disk = FaultInjectingFileSystem()
/// disk.fail("fsync", times: 2, with: .ioError)
/// let store = SaveStore(directory: folder, fileSystem: disk)
/// ```
public final class FaultInjectingFileSystem: FileSystemWrapper {
  /// The real file system underneath.
  public let wrapped: any FileSystem = PosixFileSystem()
  private let failures = Mutex<[FileOperation: (count: Int, errno: Errno)]>([:])
  private let gate = Mutex<DispatchSemaphore?>(nil)
  /// Signalled each time a write reaches a closed gate.
  public let reachedGate = DispatchSemaphore(value: 0)
  /// Every checked operation, as `"write PATH"`, in order.
  public let log = Mutex<[String]>([])

  /// Creates a file system that fails nothing until told to.
  public init() {}

  /// The next `count` calls of `operation` fail with `errno`.
  public func fail(_ operation: FileOperation, times count: Int = 1, with errno: Errno) {
    failures.withLock { $0[operation] = (count, errno) }
  }

  /// Writes wait until ``openGate()``.
  public func closeGate() { gate.withLock { $0 = DispatchSemaphore(value: 0) } }
  public func openGate() { gate.withLock { $0 }?.signal() }

  private func check(_ operation: FileOperation, _ path: String) throws(FileSystemError) {
    log.withLock { $0.append("\(operation) \(path)") }
    let injected = failures.withLock { failures -> Errno? in
      guard let entry = failures[operation], entry.count > 0 else { return nil }
      failures[operation] = (entry.count - 1, entry.errno)
      return entry.errno
    }
    if let injected { throw FileSystemError(operation, path, injected) }
  }

  public func createExclusive(_ path: String) throws(FileSystemError) -> Int32 {
    try check("open", path)
    return try wrapped.createExclusive(path)
  }
  public func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) -> Int {
    if let waiting = gate.withLock({ $0 }) {
      reachedGate.signal()
      waiting.wait()
      waiting.signal()
    }
    try check("write", path)
    return try wrapped.write(descriptor, bytes, path: path)
  }
  public func fsync(_ descriptor: Int32, path: String) throws(FileSystemError) {
    try check("fsync", path)
    try wrapped.fsync(descriptor, path: path)
  }
  public func rename(_ source: String, _ destination: String) throws(FileSystemError) {
    try check("rename", destination)
    try wrapped.rename(source, destination)
  }
  public func fsyncDirectory(_ path: String) throws(FileSystemError) {
    try check("fsyncDirectory", path)
    try wrapped.fsyncDirectory(path)
  }
  public func read(_ path: String, limit: Int) throws(FileSystemError) -> [UInt8] {
    try check("read", path)
    return try wrapped.read(path, limit: limit)
  }
}
