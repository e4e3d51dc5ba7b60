#if canImport(Glibc)
  import Glibc

  // The C calls whose names the file system's methods shadow, for Glibc and Darwin alike.
  private let systemWrite = Glibc.write
  private let systemRead = Glibc.read
  private let systemFsync = Glibc.fsync
  private let systemClose = Glibc.close
  private let systemRename = Glibc.rename
  private let systemUnlink = Glibc.unlink
#elseif canImport(Darwin)
  import Darwin

  private let systemWrite = Darwin.write
  private let systemRead = Darwin.read
  private let systemFsync = Darwin.fsync
  private let systemClose = Darwin.close
  private let systemRename = Darwin.rename
  private let systemUnlink = Darwin.unlink
#endif

/// An `errno` value with its C name, e.g. `ENOSPC`.
public struct Errno: Error, Hashable, Sendable, CustomStringConvertible {
  /// The C value.
  public let rawValue: Int32
  /// Wraps a C value.
  public init(rawValue: Int32) { self.rawValue = rawValue }

  /// `ENOSPC`: the disk is full.
  public static let noSpace = Errno(rawValue: ENOSPC)
  /// `EIO`: the device failed.
  public static let ioError = Errno(rawValue: EIO)
  /// `EROFS`: the file system is read-only.
  public static let readOnlyFileSystem = Errno(rawValue: EROFS)
  /// `EACCES`: not allowed for this user.
  public static let permissionDenied = Errno(rawValue: EACCES)
  /// `ENOENT`: nothing at that path.
  public static let noSuchFile = Errno(rawValue: ENOENT)
  /// `EEXIST`: something is already at that path.
  public static let fileExists = Errno(rawValue: EEXIST)
  /// `EINTR`: a signal interrupted the call (retried in one place).
  public static let interrupted = Errno(rawValue: EINTR)
  /// `ELOOP`: the path is a symbolic link, and the store opens its files without following
  /// one (`O_NOFOLLOW`), so a link planted in a save folder is refused, never written through.
  public static let symbolicLink = Errno(rawValue: ELOOP)
  /// `EWOULDBLOCK`: a lock is held by another process.
  public static let wouldBlock = Errno(rawValue: EWOULDBLOCK)
  /// `EDQUOT`: the user's disk quota is used up.
  public static let quotaExceeded = Errno(rawValue: EDQUOT)
  /// `EPERM`: the operation is not permitted.
  public static let notPermitted = Errno(rawValue: EPERM)
  /// `ENOTEMPTY`: the folder still holds entries.
  public static let directoryNotEmpty = Errno(rawValue: ENOTEMPTY)

  /// The C constant's name where known, then the system's message.
  public var description: String {
    let names: [Int32: String] = [
      ENOSPC: "ENOSPC", EIO: "EIO", EROFS: "EROFS", EACCES: "EACCES", ENOENT: "ENOENT", EEXIST: "EEXIST",
      EINTR: "EINTR", ELOOP: "ELOOP", EWOULDBLOCK: "EWOULDBLOCK", ENOTDIR: "ENOTDIR", EISDIR: "EISDIR",
      EPERM: "EPERM", EBADF: "EBADF", EDQUOT: "EDQUOT", ENAMETOOLONG: "ENAMETOOLONG",
    ]
    return "\(names[rawValue] ?? "errno \(rawValue)") (\(String(cString: strerror(rawValue))))"
  }
}

/// A file-system call by name, e.g. `fsync`: what a ``FileSystemError`` says failed, and what
/// decisions such as "redo a failed fsync into a new file" read.
public struct FileOperation: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral,
  CustomStringConvertible
{
  /// The call's name.
  public let rawValue: String
  /// Names a call.
  public init(rawValue: String) { self.rawValue = rawValue }
  /// Names a call: `"fsync"`.
  public init(stringLiteral value: String) { rawValue = value }
  /// The call's name.
  public var description: String { rawValue }

  /// `open` (and `open` of a folder to flush it).
  public static let open: FileOperation = "open"
  /// `write`.
  public static let write: FileOperation = "write"
  /// `fsync`: a failure may have lost the data, so the store redoes the write.
  public static let fsync: FileOperation = "fsync"
  /// `close` (never retried).
  public static let close: FileOperation = "close"
  /// `rename`.
  public static let rename: FileOperation = "rename"
  /// `unlink`.
  public static let unlink: FileOperation = "unlink"
  /// Opening a folder and flushing its entries.
  public static let fsyncDirectory: FileOperation = "fsyncDirectory"
  /// `mkdir`.
  public static let mkdir: FileOperation = "mkdir"
  /// `read`.
  public static let read: FileOperation = "read"
  /// `fstat`.
  public static let fstat: FileOperation = "fstat"
  /// `opendir`.
  public static let opendir: FileOperation = "opendir"
  /// `flock`.
  public static let flock: FileOperation = "flock"
}

/// A failed file-system call: which call, on which path, with which errno.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The call, e.g. `fsync`.
  public var operation: FileOperation
  /// The path it was called on.
  public var path: String
  /// What the system said.
  public var errno: Errno

  /// Creates an error.
  public init(_ operation: FileOperation, _ path: String, _ errno: Errno) {
    self.operation = operation
    self.path = path
    self.errno = errno
  }

  /// `'fsync' failed on PATH with EIO (Input/output error)`.
  public var description: String { "'\(operation)' failed on \(path) with \(errno)" }
}

/// What is at a path, without following a final symbolic link.
public enum FileKind: Sendable, Equatable {
  /// Nothing is there.
  case missing
  /// A regular file of `size` bytes.
  case file(size: Int)
  /// A folder.
  case directory
  /// A symbolic link, a device, a socket: never read or written by the store.
  case other
}

/// The file operations the save store uses, and nothing more: a real POSIX one in the game,
/// fault-injecting ones in tests. Paths are absolute or relative to the working folder.
/// `write` may write less than asked; the store loops.
public protocol FileSystem: Sendable {
  /// Creates a new file for writing; fails if anything (even a link) is already there.
  func createExclusive(_ path: String) throws(FileSystemError) -> Int32
  /// Writes some of `bytes`; returns how many.
  func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) -> Int
  /// Flushes a file's data and metadata to the disk.
  func fsync(_ descriptor: Int32, path: String) throws(FileSystemError)
  /// Closes a descriptor (never retried, as POSIX advises).
  func close(_ descriptor: Int32, path: String) throws(FileSystemError)
  /// Atomically replaces `destination` with `source`.
  func rename(_ source: String, _ destination: String) throws(FileSystemError)
  /// Removes a file.
  func unlink(_ path: String) throws(FileSystemError)
  /// Flushes a folder's entries (a rename or a new file in it) to the disk.
  func fsyncDirectory(_ path: String) throws(FileSystemError)
  /// Creates a folder; returns false when it already existed.
  func makeDirectory(_ path: String) throws(FileSystemError) -> Bool
  /// Removes an empty folder (`rmdir`).
  func removeDirectory(_ path: String) throws(FileSystemError)
  /// Reads at most `limit` bytes from the start of a regular file (never through a link).
  func read(_ path: String, limit: Int) throws(FileSystemError) -> [UInt8]
  /// The names in a folder, sorted.
  func contents(ofDirectory path: String) throws(FileSystemError) -> [String]
  /// What is at `path`.
  func kind(of path: String) -> FileKind
  /// Takes an exclusive advisory lock (`flock`) on `path`, waiting up to `timeout`.
  func lock(_ path: String, timeout: Duration) throws(FileSystemError) -> Int32
  /// Releases a lock taken with `lock`.
  func unlock(_ descriptor: Int32)
  /// What names this process's temporary files (`.7.tmp-TAG-1`), so that two processes writing
  /// one folder at once never share one: the process id on a real disk (the default). A
  /// simulated disk names them from what it simulates (its boot), never from the host, so a
  /// seed replays to the same names in every run.
  var temporaryTag: String { get }
}

extension FileSystem {
  /// The process id.
  public var temporaryTag: String { String(getpid()) }

  /// `rmdir` on the real disk: what a file system of your own written before this requirement
  /// did when a slot was deleted (a simulated one overrides it).
  public func removeDirectory(_ path: String) throws(FileSystemError) {
    if rmdir(path) != 0 { throw FileSystemError("rmdir", path, Errno(rawValue: errno)) }
  }
}

/// The real file system, through POSIX calls. `EINTR` is retried in one place; `close` is not.
public struct PosixFileSystem: FileSystem {
  /// Creates the real file system.
  public init() {}

  /// How a call reports failure: a negative result (`open`, `write`) or a nonzero one (`fsync`).
  private enum Failure { case negative, nonzero }

  /// Makes `call`, retrying on `EINTR`; any other failure throws with its errno.
  private func retrying<T: BinaryInteger>(
    _ operation: FileOperation, _ path: String, _ failure: Failure, _ call: () -> T
  )
    throws(FileSystemError) -> T
  {
    while true {
      let result = call()
      if failure == .negative ? result >= 0 : result == 0 { return result }
      let code = errno
      if code != EINTR { throw FileSystemError(operation, path, Errno(rawValue: code)) }
    }
  }

  public func createExclusive(_ path: String) throws(FileSystemError) -> Int32 {
    try retrying("open", path, .negative) { open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
  }

  public func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) -> Int {
    try retrying("write", path, .negative) { systemWrite(descriptor, bytes.baseAddress, bytes.count) }
  }

  public func fsync(_ descriptor: Int32, path: String) throws(FileSystemError) {
    _ = try retrying("fsync", path, .nonzero) { systemFsync(descriptor) }
  }

  public func close(_ descriptor: Int32, path: String) throws(FileSystemError) {
    if systemClose(descriptor) != 0 && errno != EINTR {
      throw FileSystemError("close", path, Errno(rawValue: errno))
    }
  }

  public func rename(_ source: String, _ destination: String) throws(FileSystemError) {
    _ = try retrying("rename", "\(source) -> \(destination)", .nonzero) { systemRename(source, destination) }
  }

  public func unlink(_ path: String) throws(FileSystemError) {
    _ = try retrying("unlink", path, .nonzero) { systemUnlink(path) }
  }

  public func fsyncDirectory(_ path: String) throws(FileSystemError) {
    let descriptor = try retrying("open", path, .negative) { open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
    defer { systemClose(descriptor) }
    _ = try retrying("fsync", path, .nonzero) { systemFsync(descriptor) }
  }

  public func makeDirectory(_ path: String) throws(FileSystemError) -> Bool {
    if mkdir(path, 0o755) == 0 { return true }
    let code = errno
    if code == EEXIST, kind(of: path) == .directory { return false }
    throw FileSystemError("mkdir", path, Errno(rawValue: code))
  }

  public func read(_ path: String, limit: Int) throws(FileSystemError) -> [UInt8] {
    let descriptor = try retrying("open", path, .negative) { open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
    defer { systemClose(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { throw FileSystemError("fstat", path, Errno(rawValue: errno)) }
    guard (info.st_mode & S_IFMT) == S_IFREG else { throw FileSystemError("read", path, Errno(rawValue: EISDIR)) }
    let size = min(Int(info.st_size), limit)
    var bytes = [UInt8](repeating: 0, count: size)
    var done = 0
    while done < size {
      let offset = done
      let count = try retrying("read", path, .negative) {
        bytes.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress! + offset, size - offset) }
      }
      if count == 0 { break }  // the file shrank while being read
      done += count
    }
    return done == size ? bytes : Array(bytes[0..<done])
  }

  public func contents(ofDirectory path: String) throws(FileSystemError) -> [String] {
    guard let directory = opendir(path) else { throw FileSystemError("opendir", path, Errno(rawValue: errno)) }
    defer { closedir(directory) }
    var names: [String] = []
    while let entry = readdir(directory) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      if name != "." && name != ".." { names.append(name) }
    }
    return names.sorted()
  }

  public func kind(of path: String) -> FileKind {
    var info = stat()
    guard lstat(path, &info) == 0 else { return .missing }
    switch info.st_mode & S_IFMT {
    case S_IFREG: return .file(size: Int(info.st_size))
    case S_IFDIR: return .directory
    default: return .other
    }
  }

  public func lock(_ path: String, timeout: Duration) throws(FileSystemError) -> Int32 {
    let descriptor = try retrying("open", path, .negative) {
      open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644)
    }
    let clock = SystemClock()
    let deadline = clock.now() + timeout
    // flock has no timed wait: try without blocking, and back off briefly between tries.
    while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
      let code = errno
      guard code == EWOULDBLOCK || code == EINTR, clock.now() < deadline else {
        systemClose(descriptor)
        throw FileSystemError("flock", path, Errno(rawValue: code))
      }
      usleep(1000)
    }
    return descriptor
  }

  public func unlock(_ descriptor: Int32) {
    flock(descriptor, LOCK_UN)
    systemClose(descriptor)
  }
}

/// A file system that passes every call on to another: a wrapper implements only the calls it
/// changes (slowing writes, injecting faults, recording operations).
package protocol FileSystemWrapper: FileSystem {
  /// Where the calls go.
  var wrapped: any FileSystem { get }
}

extension FileSystemWrapper {
  public func createExclusive(_ path: String) throws(FileSystemError) -> Int32 { try wrapped.createExclusive(path) }
  public func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) -> Int {
    try wrapped.write(descriptor, bytes, path: path)
  }
  public func fsync(_ descriptor: Int32, path: String) throws(FileSystemError) {
    try wrapped.fsync(descriptor, path: path)
  }
  public func close(_ descriptor: Int32, path: String) throws(FileSystemError) {
    try wrapped.close(descriptor, path: path)
  }
  public func rename(_ source: String, _ destination: String) throws(FileSystemError) {
    try wrapped.rename(source, destination)
  }
  public func unlink(_ path: String) throws(FileSystemError) { try wrapped.unlink(path) }
  public func fsyncDirectory(_ path: String) throws(FileSystemError) { try wrapped.fsyncDirectory(path) }
  public func makeDirectory(_ path: String) throws(FileSystemError) -> Bool { try wrapped.makeDirectory(path) }
  public func removeDirectory(_ path: String) throws(FileSystemError) { try wrapped.removeDirectory(path) }
  public func read(_ path: String, limit: Int) throws(FileSystemError) -> [UInt8] {
    try wrapped.read(path, limit: limit)
  }
  public func contents(ofDirectory path: String) throws(FileSystemError) -> [String] {
    try wrapped.contents(ofDirectory: path)
  }
  public func kind(of path: String) -> FileKind { wrapped.kind(of: path) }
  public func lock(_ path: String, timeout: Duration) throws(FileSystemError) -> Int32 {
    try wrapped.lock(path, timeout: timeout)
  }
  public func unlock(_ descriptor: Int32) { wrapped.unlock(descriptor) }
  public var temporaryTag: String { wrapped.temporaryTag }
}
