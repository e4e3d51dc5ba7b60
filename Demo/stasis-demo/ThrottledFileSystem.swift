import Foundation
import Stasis

/// The real file system with writes slowed to a given rate, to show what an expired budget
/// does (`--io-throttle`). Writes go out in slices of a twentieth of a second, so a
/// cancelled save stops promptly.
struct ThrottledFileSystem: FileSystemWrapper {
  let wrapped: any FileSystem = PosixFileSystem()
  let bytesPerSecond: Int

  func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(FileSystemError) -> Int {
    let slice = max(1, min(bytes.count, bytesPerSecond / 20))
    let written = try wrapped.write(descriptor, UnsafeRawBufferPointer(rebasing: bytes[0..<slice]), path: path)
    // This is the point of the tool: a slow disk. Not synchronisation.
    Thread.sleep(forTimeInterval: Double(written) / Double(bytesPerSecond))
    return written
  }

}
