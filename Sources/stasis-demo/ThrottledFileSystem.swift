import Foundation
import Stasis

/// The real file system with writes slowed to a given rate, to show what an expired budget
/// does (`--io-throttle`). Writes go out in slices of a twentieth of a second, so a
/// cancelled save stops promptly.
struct ThrottledFileSystem: FileSystem {
  let real = PosixFileSystem()
  let bytesPerSecond: Int

  func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) -> Int {
    let slice = max(1, min(bytes.count, bytesPerSecond / 20))
    let written = try real.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[0..<slice]), path: path)
    // This is the point of the tool: a slow disk. Not synchronisation.
    Thread.sleep(forTimeInterval: Double(written) / Double(bytesPerSecond))
    return written
  }

  func createExclusive(_ path: String) throws(FileSystemError) -> Int32 { try real.createExclusive(path) }
  func fsync(_ descriptor: Int32, path: String) throws(FileSystemError) { try real.fsync(descriptor, path: path) }
  func close(_ descriptor: Int32, path: String) throws(FileSystemError) { try real.close(descriptor, path: path) }
  func rename(_ source: String, _ destination: String) throws(FileSystemError) { try real.rename(source, destination) }
  func unlink(_ path: String) throws(FileSystemError) { try real.unlink(path) }
  func fsyncDirectory(_ path: String) throws(FileSystemError) { try real.fsyncDirectory(path) }
  func makeDirectory(_ path: String) throws(FileSystemError) -> Bool { try real.makeDirectory(path) }
  func read(_ path: String, limit: Int) throws(FileSystemError) -> [UInt8] { try real.read(path, limit: limit) }
  func contents(ofDirectory path: String) throws(FileSystemError) -> [String] { try real.contents(ofDirectory: path) }
  func kind(of path: String) -> FileKind { real.kind(of: path) }
  func lock(_ path: String, timeout: Duration) throws(FileSystemError) -> Int32 {
    try real.lock(path, timeout: timeout)
  }
  func unlock(_ descriptor: Int32) { real.unlock(descriptor) }
}
