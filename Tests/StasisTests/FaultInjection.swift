import Dispatch
import Stasis
import Synchronization

/// The real file system with two test hooks: fail the next N calls of an operation with an
/// errno (as swift-system's mocking does), and hold writes at a gate until the test opens it.
final class FaultyFileSystem: FileSystem {
  let real = PosixFileSystem()
  private let failures = Mutex<[String: (count: Int, errno: Errno)]>([:])
  private let gate = Mutex<DispatchSemaphore?>(nil)
  /// Signalled each time a write reaches a closed gate.
  let reachedGate = DispatchSemaphore(value: 0)
  let log = Mutex<[String]>([])

  /// The next `count` calls of `operation` fail with `errno`.
  func fail(_ operation: String, times count: Int = 1, with errno: Errno) {
    failures.withLock { $0[operation] = (count, errno) }
  }

  /// Writes wait until `openGate()`.
  func closeGate() { gate.withLock { $0 = DispatchSemaphore(value: 0) } }
  func openGate() { gate.withLock { $0 }?.signal() }

  private func check(_ operation: String, _ path: String) throws(FileSystemError) {
    log.withLock { $0.append("\(operation) \(path)") }
    let injected = failures.withLock { failures -> Errno? in
      guard let entry = failures[operation], entry.count > 0 else { return nil }
      failures[operation] = (entry.count - 1, entry.errno)
      return entry.errno
    }
    if let injected { throw FileSystemError(operation, path, injected) }
  }

  func createExclusive(_ path: String) throws(FileSystemError) -> Int32 {
    try check("open", path)
    return try real.createExclusive(path)
  }
  func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) -> Int {
    if let waiting = gate.withLock({ $0 }) {
      reachedGate.signal()
      waiting.wait()
      waiting.signal()
    }
    try check("write", path)
    return try real.write(descriptor, bytes, path: path)
  }
  func fsync(_ descriptor: Int32, path: String) throws(FileSystemError) {
    try check("fsync", path)
    try real.fsync(descriptor, path: path)
  }
  func close(_ descriptor: Int32, path: String) throws(FileSystemError) { try real.close(descriptor, path: path) }
  func rename(_ source: String, _ destination: String) throws(FileSystemError) {
    try check("rename", destination)
    try real.rename(source, destination)
  }
  func unlink(_ path: String) throws(FileSystemError) { try real.unlink(path) }
  func fsyncDirectory(_ path: String) throws(FileSystemError) {
    try check("fsyncDirectory", path)
    try real.fsyncDirectory(path)
  }
  func makeDirectory(_ path: String) throws(FileSystemError) -> Bool { try real.makeDirectory(path) }
  func read(_ path: String, limit: Int) throws(FileSystemError) -> [UInt8] {
    try check("read", path)
    return try real.read(path, limit: limit)
  }
  func contents(ofDirectory path: String) throws(FileSystemError) -> [String] { try real.contents(ofDirectory: path) }
  func kind(of path: String) -> FileKind { real.kind(of: path) }
  func lock(_ path: String, timeout: Duration) throws(FileSystemError) -> Int32 {
    try real.lock(path, timeout: timeout)
  }
  func unlock(_ descriptor: Int32) { real.unlock(descriptor) }
}
