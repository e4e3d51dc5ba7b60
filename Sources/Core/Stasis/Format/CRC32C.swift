import CStasisChecksum

/// CRC32C (Castagnoli), the integrity checksum of every part of a save file. Runs at memory
/// speed on CPUs with a CRC instruction; see `Sources/Core/CStasisChecksum` for why it is C.
package enum CRC32C {
  /// The checksum of `bytes`, continuing from `crc` (0 to start).
  public static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
    return stasis_crc32c(crc, base, bytes.count)
  }

  /// The checksum of a byte collection, continuing from `crc` (0 to start).
  public static func checksum<Bytes: Collection<UInt8>>(_ bytes: Bytes, continuing crc: UInt32 = 0) -> UInt32 {
    if let result = bytes.withContiguousStorageIfAvailable({ checksum(UnsafeRawBufferPointer($0), continuing: crc) }) {
      return result
    }
    return Array(bytes).withUnsafeBytes { checksum($0, continuing: crc) }
  }

  /// Copies `source` to `destination` (which must not overlap it and must have room) and
  /// returns the checksum of the bytes copied, continuing from `crc`: read once where the CPU
  /// folds (``isFolding``).
  package static func copy(
    _ source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer, continuing crc: UInt32 = 0
  ) -> UInt32 {
    guard let base = source.baseAddress, source.count > 0 else { return crc }
    return stasis_crc32c_copy(crc, destination, base, source.count)
  }

  /// True when the carry-less-multiplication path (VPCLMULQDQ) checksums 256 bytes and more.
  package static var isFolding: Bool { stasis_crc32c_is_folding() != 0 }

  /// ``checksum(_:continuing:)`` on the path `folding` allows (false: the CRC instruction's,
  /// or the table's): for tests, which check each path on the same machine without a
  /// process-wide switch another test could see.
  package static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0, folding: Bool) -> UInt32 {
    guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
    return stasis_crc32c_on(crc, base, bytes.count, folding ? 1 : 0)
  }

  /// ``copy(_:to:continuing:)`` on the path `folding` allows.
  package static func copy(
    _ source: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer, continuing crc: UInt32 = 0,
    folding: Bool
  ) -> UInt32 {
    guard let base = source.baseAddress, source.count > 0 else { return crc }
    return stasis_crc32c_copy_on(crc, destination, base, source.count, folding ? 1 : 0)
  }

  /// True when the CPU's CRC instruction is in use.
  public static var isHardwareAccelerated: Bool { stasis_crc32c_is_hardware() != 0 }
}
