import Dispatch
import Stasis
import Synchronization

/// A disk in memory that knows what was flushed, for the simulation (`stasis-sim`) and crash
/// tests: ``crash(choose:)`` keeps only what a real disk would after a SIGKILL or a power cut.
///
/// - A file's bytes survive a crash only up to its last `fsync`; bytes written since are
///   lost, torn (a prefix) or whole, as `choose` decides.
/// - A new name, a rename or an unlink survives only once its folder was flushed
///   (`fsyncDirectory`); before that, a crash keeps an in-order prefix of the folder's changes.
/// - Folders themselves are durable when made (a simplification: Stasis flushes the parent).
///
/// Faults are armed explicitly (``fail(_:times:with:)``), and a write can be held mid-way
/// (``holdNextWrite(where:notify:)``) so the game goes on while a save is stuck in the disk.
///
/// ```swift
/// let disk = SimulatedDisk()
/// let store = SaveStore(directory: "/saves", fileSystem: disk)
/// let rebooted = disk.crash { _ in 0 }.disk   // every unflushed change is lost
/// ```
public final class SimulatedDisk: FileSystem {
  private struct Inode {
    var data: [UInt8] = []
    var flushed: [UInt8] = []
  }

  private enum NameChange {
    case link(String, Int)
    case unlink(String)
  }

  private struct State {
    var inodes: [Int: Inode] = [:]
    var nextInode = 1
    /// What the running process sees.
    var names: [String: Int] = [:]
    /// What a crash keeps, before the pending changes.
    var durableNames: [String: Int] = [:]
    /// Name changes not yet flushed, oldest first, with their folder.
    var pending: [(folder: String, change: NameChange)] = []
    var folders: Set<String> = ["/"]
    var descriptors: [Int32: (inode: Int, path: String)] = [:]
    var nextDescriptor: Int32 = 3
    var failures: [FileOperation: (count: Int, errno: Errno)] = [:]
    var hold: DispatchSemaphore?
    var holdArmed = false
    var holdNotify: DispatchSemaphore?
    /// Which writes the armed hold stops (by path); the others pass it.
    var holdWhere: @Sendable (String) -> Bool = { _ in true }
    /// Bumped by each crash: a mount of an older boot is a dead process's, and does nothing.
    var boot = 0
    /// Per folder whose flush failed: how many of its pending changes (the oldest) were made
    /// before that failure. A writer was told those failed; a crash may keep them.
    var flushFailed: [String: Int] = [:]
    /// The faults that struck since the last ``takeStruckFaults()``, in order.
    var struck: [StruckFault] = []
  }

  private final class Shared: Sendable {
    let state = Mutex(State())
    let injected = Atomic<Int>(0)
  }

  private let shared: Shared
  private let boot: Int
  /// How many faults were injected so far.
  public var faultsInjected: Int { shared.injected.load(ordering: .relaxed) }

  /// Creates an empty disk with only `/`.
  public init() {
    shared = Shared()
    boot = 0
  }

  private init(shared: Shared, boot: Int) {
    self.shared = shared
    self.boot = boot
  }

  /// Runs `body` on the disk's state, unless this mount belongs to a process a crash ended:
  /// then the call fails with `EIO` and changes nothing.
  private func locked<T: Sendable>(
    _ operation: FileOperation, _ path: String, _ body: (inout State) throws(FileSystemError) -> T
  )
    throws(FileSystemError) -> T
  {
    try shared.state.withLock { state throws(FileSystemError) -> T in
      guard state.boot == boot else { throw FileSystemError(operation, path, .ioError) }
      return try body(&state)
    }
  }

  // MARK: Faults and holds

  /// The next `count` calls of `operation` (`open`, `write`, `fsync`, `rename`, `unlink`,
  /// `fsyncDirectory`, `read`, `mkdir`) fail with `errno`. A failed `fsync` flushes nothing.
  public func fail(_ operation: FileOperation, times count: Int = 1, with errno: Errno) {
    shared.state.withLock { $0.failures[operation] = (count, errno) }
  }

  /// Clears every armed fault.
  public func clearFaults() { shared.state.withLock { $0.failures.removeAll() } }

  /// The armed faults that struck since the last call, in the order they struck, and the paths
  /// they struck: which writer met a fault is part of a run (the simulation traces it, so two
  /// runs of a seed whose threads met a fault in another order do not look the same).
  public func takeStruckFaults() -> [StruckFault] {
    shared.state.withLock { state in
      defer { state.struck.removeAll() }
      return state.struck
    }
  }

  /// The next `write` to a path `isHeld` accepts blocks until ``releaseHold()``; `notify` is
  /// signalled when it does. Writes to other paths pass: a hold meant for a save's write on the
  /// store's worker must not stop a folder file written on the game's thread, which would then
  /// wait for a release only that thread can give.
  public func holdNextWrite(
    where isHeld: @escaping @Sendable (String) -> Bool = { _ in true }, notify: DispatchSemaphore
  ) {
    shared.state.withLock {
      $0.hold = DispatchSemaphore(value: 0)
      $0.holdArmed = true
      $0.holdNotify = notify
      $0.holdWhere = isHeld
    }
  }

  /// True while a write waits at the hold.
  public var isHolding: Bool { shared.state.withLock { $0.hold != nil && !$0.holdArmed } }

  /// Lets a held write go on.
  public func releaseHold() {
    let hold = shared.state.withLock { state -> DispatchSemaphore? in
      defer {
        state.hold = nil
        state.holdArmed = false
        state.holdNotify = nil
      }
      return state.hold
    }
    hold?.signal()
  }

  private func check(_ operation: FileOperation, _ path: String) throws(FileSystemError) {
    let errno = try locked(operation, path) { state throws(FileSystemError) -> Errno? in
      guard let entry = state.failures[operation], entry.count > 0 else { return nil }
      state.failures[operation] = entry.count > 1 ? (entry.count - 1, entry.errno) : nil
      state.struck.append(StruckFault(operation: operation, path: path, errno: entry.errno))
      return entry.errno
    }
    if let errno {
      shared.injected.add(1, ordering: .relaxed)
      throw FileSystemError(operation, path, errno)
    }
  }

  // MARK: Crashes

  /// What a crash must decide, one question at a time; the answer is in `0..<choices`.
  public typealias Chooser = (_ choices: Int) -> Int

  /// A SIGKILL with a power cut: descriptors are gone, each folder keeps an in-order prefix of
  /// its unflushed name changes, and each file's unflushed bytes are lost (0), torn at a
  /// chosen length (1) or kept whole (2). Returns the disk as the next process mounts it, and
  /// how many unflushed changes were lost; every call through an older mount fails with `EIO`.
  public func crash(choose: Chooser) -> (disk: SimulatedDisk, lost: Int) {
    shared.state.withLock { state in
      state.boot += 1
      var lost = 0
      // Per folder, in the order they were made: a prefix of the changes survives.
      var byFolder: [String: [NameChange]] = [:]
      var order: [String] = []
      for entry in state.pending {
        if byFolder[entry.folder] == nil { order.append(entry.folder) }
        byFolder[entry.folder, default: []].append(entry.change)
      }
      for folder in order {
        let changes = byFolder[folder]!
        let kept = choose(changes.count + 1)
        lost += changes.count - kept
        for change in changes.prefix(kept) { Self.apply(change, to: &state.durableNames) }
      }
      state.pending.removeAll()
      state.flushFailed.removeAll()
      state.names = state.durableNames
      state.descriptors.removeAll()
      state.hold?.signal()
      state.hold = nil
      state.holdArmed = false
      state.holdNotify = nil
      let live = Set(state.names.values)
      for id in state.inodes.keys.sorted() {
        guard live.contains(id) else {
          state.inodes[id] = nil
          continue
        }
        var inode = state.inodes[id]!
        if inode.data != inode.flushed {
          lost += 1
          switch choose(3) {
          case 0: inode.data = inode.flushed
          case 1: inode.data = Array(inode.data.prefix(choose(inode.data.count + 1)))
          default: break
          }
        }
        inode.flushed = inode.data
        state.inodes[id] = inode
      }
      return (SimulatedDisk(shared: shared, boot: state.boot), lost)
    }
  }

  private static func apply(_ change: NameChange, to names: inout [String: Int]) {
    switch change {
    case .link(let path, let inode): names[path] = inode
    case .unlink(let path): names[path] = nil
    }
  }

  private static func folder(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let folder = String(path[..<slash])
    return folder.isEmpty ? "/" : folder
  }

  /// The bytes at `path` as the running process sees them (nil: nothing there).
  public func contents(of path: String) -> [UInt8]? {
    shared.state.withLock { state in state.names[path].flatMap { state.inodes[$0]?.data } }
  }

  /// Replaces the bytes at `path` as a player or a bad sector would, durably.
  public func overwrite(_ path: String, with bytes: [UInt8]) {
    shared.state.withLock { state in
      guard let id = state.names[path] else { return }
      state.inodes[id]?.data = bytes
      state.inodes[id]?.flushed = bytes
    }
  }

  // MARK: FileSystem

  /// The boot this mount belongs to (`boot0`, then one more for each ``crash(choose:)``): a
  /// process of the simulated machine, never the host's process id, so a seed names the same
  /// temporary files in every run, and a process after a crash never reuses a dead one's names.
  public var temporaryTag: String { "boot\(boot)" }

  public func createExclusive(_ path: String) throws(FileSystemError) -> Int32 {
    try check("open", path)
    return try locked("open", path) { state throws(FileSystemError) -> Int32 in
      let folder = Self.folder(of: path)
      guard state.folders.contains(folder) else { throw FileSystemError("open", path, .noSuchFile) }
      guard state.names[path] == nil, !state.folders.contains(path) else {
        throw FileSystemError("open", path, .fileExists)
      }
      let id = state.nextInode
      state.nextInode += 1
      state.inodes[id] = Inode()
      state.names[path] = id
      state.pending.append((folder, .link(path, id)))
      let descriptor = state.nextDescriptor
      state.nextDescriptor += 1
      state.descriptors[descriptor] = (id, path)
      return descriptor
    }
  }

  public func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) -> Int {
    let hold = shared.state.withLock { state -> (DispatchSemaphore, DispatchSemaphore?)? in
      guard state.holdArmed, state.boot == boot, let hold = state.hold, state.holdWhere(path) else { return nil }
      state.holdArmed = false
      return (hold, state.holdNotify)
    }
    if let (hold, notify) = hold {
      notify?.signal()
      hold.wait()
    }
    try check("write", path)
    return try locked("write", path) { state throws(FileSystemError) -> Int in
      guard let open = state.descriptors[descriptor] else { throw FileSystemError("write", path, Errno(rawValue: 9)) }
      state.inodes[open.inode]?.data.append(contentsOf: bytes)
      return bytes.count
    }
  }

  public func fsync(_ descriptor: Int32, path: String) throws(FileSystemError) {
    try check("fsync", path)
    try locked("fsync", path) { state throws(FileSystemError) in
      guard let open = state.descriptors[descriptor], var inode = state.inodes[open.inode] else { return }
      inode.flushed = inode.data
      state.inodes[open.inode] = inode
    }
  }

  public func close(_ descriptor: Int32, path: String) throws(FileSystemError) {
    _ = try locked("close", path) { state throws(FileSystemError) in state.descriptors.removeValue(forKey: descriptor) }
  }

  public func rename(_ source: String, _ destination: String) throws(FileSystemError) {
    try check("rename", destination)
    try locked("rename", source) { state throws(FileSystemError) in
      guard let id = state.names[source] else { throw FileSystemError("rename", source, .noSuchFile) }
      state.names[source] = nil
      state.names[destination] = id
      state.pending.append((Self.folder(of: destination), .link(destination, id)))
      state.pending.append((Self.folder(of: source), .unlink(source)))
    }
  }

  public func unlink(_ path: String) throws(FileSystemError) {
    try check("unlink", path)
    try locked("unlink", path) { state throws(FileSystemError) in
      guard state.names[path] != nil else { throw FileSystemError("unlink", path, .noSuchFile) }
      state.names[path] = nil
      state.pending.append((Self.folder(of: path), .unlink(path)))
    }
  }

  public func fsyncDirectory(_ path: String) throws(FileSystemError) {
    do {
      try check("fsyncDirectory", path)
    } catch {
      _ = try? locked("fsyncDirectory", path) { state throws(FileSystemError) in
        state.flushFailed[path] = state.pending.filter { $0.folder == path }.count
      }
      throw error
    }
    try locked("fsyncDirectory", path) { state throws(FileSystemError) in
      state.flushFailed[path] = nil
      var rest: [(folder: String, change: NameChange)] = []
      for entry in state.pending {
        if entry.folder == path {
          Self.apply(entry.change, to: &state.durableNames)
        } else {
          rest.append(entry)
        }
      }
      state.pending = rest
    }
  }

  public func makeDirectory(_ path: String) throws(FileSystemError) -> Bool {
    try check("mkdir", path)
    return try locked("mkdir", path) { state throws(FileSystemError) -> Bool in
      if state.folders.contains(path) { return false }
      guard state.names[path] == nil else { throw FileSystemError("mkdir", path, .fileExists) }
      guard state.folders.contains(Self.folder(of: path)) else { throw FileSystemError("mkdir", path, .noSuchFile) }
      state.folders.insert(path)
      return true
    }
  }

  /// The paths put in place (created or renamed into their folder) whose folder's flush then
  /// failed, and that no flush has made durable since, sorted: the changes a writer was told
  /// failed that a crash now may keep or lose. (A timers file whose firing write failed this way
  /// may come back after a crash without the timer, and without its firing.)
  public var unflushedAfterFailedFlush: [String] {
    shared.state.withLock { state in
      var paths: [String] = []
      for (folder, count) in state.flushFailed {
        for entry in state.pending.filter({ $0.folder == folder }).prefix(count) {
          if case .link(let path, _) = entry.change, state.names[path] != nil, !paths.contains(path) {
            paths.append(path)
          }
        }
      }
      return paths.sorted()
    }
  }

  public func removeDirectory(_ path: String) throws(FileSystemError) {
    try check("rmdir", path)
    try locked("rmdir", path) { state throws(FileSystemError) in
      guard state.folders.contains(path) else { throw FileSystemError("rmdir", path, .noSuchFile) }
      let holds =
        state.names.keys.contains { Self.folder(of: $0) == path }
        || state.folders.contains { Self.folder(of: $0) == path }
      guard !holds else { throw FileSystemError("rmdir", path, .directoryNotEmpty) }
      state.folders.remove(path)
    }
  }

  public func read(_ path: String, limit: Int) throws(FileSystemError) -> [UInt8] {
    try check("read", path)
    return try locked("read", path) { state throws(FileSystemError) -> [UInt8] in
      guard let id = state.names[path], let inode = state.inodes[id] else {
        throw FileSystemError("open", path, .noSuchFile)
      }
      return Array(inode.data.prefix(limit))
    }
  }

  public func contents(ofDirectory path: String) throws(FileSystemError) -> [String] {
    try locked("opendir", path) { state throws(FileSystemError) -> [String] in
      guard state.folders.contains(path) else { throw FileSystemError("opendir", path, .noSuchFile) }
      let prefix = path == "/" ? "/" : path + "/"
      var names: [String] = []
      for name in state.names.keys where name.hasPrefix(prefix) {
        let rest = name.dropFirst(prefix.count)
        if !rest.contains("/") { names.append(String(rest)) }
      }
      for name in state.folders where name.hasPrefix(prefix) && name != path {
        let rest = name.dropFirst(prefix.count)
        if !rest.contains("/") { names.append(String(rest)) }
      }
      return names.sorted()
    }
  }

  public func kind(of path: String) -> FileKind {
    shared.state.withLock { state in
      guard state.boot == boot else { return .missing }
      if state.folders.contains(path) { return .directory }
      guard let id = state.names[path], let inode = state.inodes[id] else { return .missing }
      return .file(size: inode.data.count)
    }
  }

  /// One process per disk in the simulation: the lock is always free.
  public func lock(_ path: String, timeout: Duration) throws(FileSystemError) -> Int32 { -1 }

  public func unlock(_ descriptor: Int32) {}
}

/// An armed fault of a ``SimulatedDisk`` that failed a call: the operation, the path and the error.
public struct StruckFault: Sendable, Equatable, CustomStringConvertible {
  /// The file-system call that failed.
  public var operation: FileOperation
  /// The path it was called on.
  public var path: String
  /// The error it failed with.
  public var errno: Errno

  /// `fsyncDirectory on /saves failed with EIO (Input/output error)`.
  public var description: String { "\(operation) on \(path) failed with \(errno)" }
}
