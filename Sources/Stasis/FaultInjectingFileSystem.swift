import Dispatch
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
public final class FaultInjectingFileSystem: FileSystem {
  private let real = PosixFileSystem()
  private let failures = Mutex<[String: (count: Int, errno: Errno)]>([:])
  private let gate = Mutex<DispatchSemaphore?>(nil)
  /// Signalled each time a write reaches a closed gate.
  public let reachedGate = DispatchSemaphore(value: 0)
  /// Every checked operation, as `"write PATH"`, in order.
  public let log = Mutex<[String]>([])

  /// Creates a file system that fails nothing until told to.
  public init() {}

  /// The next `count` calls of `operation` fail with `errno`.
  public func fail(_ operation: String, times count: Int = 1, with errno: Errno) {
    failures.withLock { $0[operation] = (count, errno) }
  }

  /// Writes wait until ``openGate()``.
  public func closeGate() { gate.withLock { $0 = DispatchSemaphore(value: 0) } }
  public func openGate() { gate.withLock { $0 }?.signal() }

  private func check(_ operation: String, _ path: String) throws(FileSystemError) {
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
    return try real.createExclusive(path)
  }
  public func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) -> Int {
    if let waiting = gate.withLock({ $0 }) {
      reachedGate.signal()
      waiting.wait()
      waiting.signal()
    }
    try check("write", path)
    return try real.write(descriptor, bytes, path: path)
  }
  public func fsync(_ descriptor: Int32, path: String) throws(FileSystemError) {
    try check("fsync", path)
    try real.fsync(descriptor, path: path)
  }
  public func close(_ descriptor: Int32, path: String) throws(FileSystemError) {
    try real.close(descriptor, path: path)
  }
  public func rename(_ source: String, _ destination: String) throws(FileSystemError) {
    try check("rename", destination)
    try real.rename(source, destination)
  }
  public func unlink(_ path: String) throws(FileSystemError) { try real.unlink(path) }
  public func fsyncDirectory(_ path: String) throws(FileSystemError) {
    try check("fsyncDirectory", path)
    try real.fsyncDirectory(path)
  }
  public func makeDirectory(_ path: String) throws(FileSystemError) -> Bool { try real.makeDirectory(path) }
  public func read(_ path: String, limit: Int) throws(FileSystemError) -> [UInt8] {
    try check("read", path)
    return try real.read(path, limit: limit)
  }
  public func contents(ofDirectory path: String) throws(FileSystemError) -> [String] {
    try real.contents(ofDirectory: path)
  }
  public func kind(of path: String) -> FileKind { real.kind(of: path) }
  public func lock(_ path: String, timeout: Duration) throws(FileSystemError) -> Int32 {
    try real.lock(path, timeout: timeout)
  }
  public func unlock(_ descriptor: Int32) { real.unlock(descriptor) }
}
