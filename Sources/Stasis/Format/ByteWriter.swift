/// Appends little-endian, fixed-width values to a growing byte buffer.
struct ByteWriter {
  private(set) var bytes: [UInt8] = []

  init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

  /// Writes into `buffer`'s storage, emptied but with its capacity kept: a reused buffer
  /// costs no page faults, which on a virtual machine dominate a large save's encoding.
  init(reusing buffer: [UInt8], capacity: Int) {
    bytes = buffer
    bytes.removeAll(keepingCapacity: true)
    bytes.reserveCapacity(capacity)
  }

  var count: Int { bytes.count }

  mutating func write<T: FixedWidthInteger>(_ value: T) {
    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
  }

  mutating func write(_ value: Float) { write(value.bitPattern) }
  mutating func write(_ value: Double) { write(value.bitPattern) }

  /// Appends raw bytes with one `memcpy` (the bulk-array path).
  mutating func write(bytes other: UnsafeRawBufferPointer) {
    guard let base = other.baseAddress, other.count > 0 else { return }
    // Viewed as UInt8 for the copy only; Array's append of a buffer pointer is a memcpy.
    bytes.append(contentsOf: UnsafeBufferPointer(start: base.assumingMemoryBound(to: UInt8.self), count: other.count))
  }
  mutating func write<C: Collection<UInt8>>(bytes other: C) { bytes.append(contentsOf: other) }

  /// A string as a `u16` byte length then its UTF-8 bytes.
  mutating func writeShortString(_ string: String) {
    let utf8 = Array(string.utf8)
    write(UInt16(utf8.count))
    bytes.append(contentsOf: utf8)
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
    other.withUnsafeBytes { source in
      bytes.withUnsafeMutableBytes {
        UnsafeMutableRawBufferPointer(rebasing: $0[offset..<(offset + source.count)]).copyMemory(from: source)
      }
    }
  }

  /// The CRC32C of the bytes in `range`.
  func checksum(_ range: Range<Int>, continuing crc: UInt32 = 0) -> UInt32 {
    bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[range]), continuing: crc) }
  }
}
