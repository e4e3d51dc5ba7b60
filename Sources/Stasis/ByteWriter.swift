/// Appends little-endian, fixed-width values to a growing byte buffer.
struct ByteWriter {
  private(set) var bytes: [UInt8] = []

  init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

  var count: Int { bytes.count }

  mutating func write<T: FixedWidthInteger>(_ value: T) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  mutating func write(_ value: Float) { write(value.bitPattern) }
  mutating func write(_ value: Double) { write(value.bitPattern) }

  mutating func write(bytes other: UnsafeRawBufferPointer) { bytes.append(contentsOf: other) }
  mutating func write<C: Collection<UInt8>>(bytes other: C) { bytes.append(contentsOf: other) }

  /// A string as a `u16` byte length then its UTF-8 bytes.
  mutating func writeShortString(_ string: String) {
    let utf8 = Array(string.utf8)
    write(UInt16(utf8.count))
    bytes.append(contentsOf: utf8)
  }

  /// Overwrites a `u32` written earlier at `offset`.
  mutating func patch(_ value: UInt32, at offset: Int) {
    withUnsafeBytes(of: value.littleEndian) { raw in
      for index in 0..<4 { bytes[offset + index] = raw[index] }
    }
  }

  /// Overwrites a `u64` written earlier at `offset`.
  mutating func patch(_ value: UInt64, at offset: Int) {
    withUnsafeBytes(of: value.littleEndian) { raw in
      for index in 0..<8 { bytes[offset + index] = raw[index] }
    }
  }
}

extension ByteWriter {
  /// Appends `count` zero bytes, returning where they start (a placeholder to fill later).
  mutating func reserve(_ count: Int) -> Int {
    let start = bytes.count
    bytes.append(contentsOf: repeatElement(0, count: count))
    return start
  }

  /// Overwrites bytes written earlier, starting at `offset`.
  mutating func overwrite(at offset: Int, with other: [UInt8]) {
    bytes.replaceSubrange(offset..<(offset + other.count), with: other)
  }

  /// The CRC32C of the bytes in `range`.
  func checksum(_ range: Range<Int>, continuing crc: UInt32 = 0) -> UInt32 {
    bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[range]), continuing: crc) }
  }
}
