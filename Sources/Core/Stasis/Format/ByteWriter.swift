/// Appends little-endian, fixed-width values to a growing byte buffer.
///
/// A reused buffer is overwritten in place, through a cursor: its pages are touched already,
/// and a bulk array is copied and checksummed in one pass. Past its old bytes (or in a new
/// buffer) the writer appends. Storage beyond ``count`` is spare, and ``bytes`` trims it.
struct ByteWriter {
  /// The first `count` bytes are written; the rest is spare, the old bytes of a reused buffer.
  private var storage: [UInt8] = []
  /// Bytes written so far.
  private(set) var count = 0
  /// With `leavesBulkOut`, the bulk arrays written, and where in the storage each goes: they
  /// are checksummed where they are, not copied (``SaveFileBytes``).
  private(set) var inserts: [(at: Int, bulk: BulkArray)] = []
  private var insertedBytes = 0
  /// True when bulk arrays stay out of the storage, as ``inserts``.
  var leavesBulkOut = false
  /// Bytes written so far, the bulk arrays left out included: a position in the file.
  var fileCount: Int { count + insertedBytes }
  /// While a checksum runs (``beginChecksum()``): the CRC of the bytes from its start to `checkedUpTo`.
  private var runningCRC: UInt32 = 0
  private var checkedUpTo: Int?

  init(capacity: Int = 0) { storage.reserveCapacity(capacity) }

  /// Writes into `buffer`'s storage, overwriting its old bytes in place: a reused buffer costs
  /// no page faults, which on a virtual machine dominate a large save's encoding.
  init(reusing buffer: [UInt8], capacity: Int) {
    storage = buffer
    if storage.capacity < capacity { storage.reserveCapacity(capacity) }
  }

  /// The written bytes: the storage, trimmed to ``count``.
  var bytes: [UInt8] {
    mutating get {
      if storage.count > count { storage.removeLast(storage.count - count) }
      return storage
    }
  }

  /// True when `extra` more bytes fit in the spare storage, to be written in place. Else the
  /// spare storage is dropped, and the write appends.
  private mutating func fitsInPlace(_ extra: Int) -> Bool {
    if storage.count - count >= extra { return true }
    if storage.count > count { storage.removeLast(storage.count - count) }
    return false
  }

  mutating func write<T: FixedWidthInteger>(_ value: T) {
    let size = MemoryLayout<T>.size
    if fitsInPlace(size) {
      let at = count
      storage.withUnsafeMutableBytes { $0.storeBytes(of: value.littleEndian, toByteOffset: at, as: T.self) }
    } else {
      Swift.withUnsafeBytes(of: value.littleEndian) { storage.append(contentsOf: $0) }
    }
    count += size
  }

  mutating func write(_ value: Float) { write(value.bitPattern) }
  mutating func write(_ value: Double) { write(value.bitPattern) }

  /// Appends raw bytes with one `memcpy`.
  mutating func write(bytes other: UnsafeRawBufferPointer) {
    guard let source = other.baseAddress, other.count > 0 else { return }
    if fitsInPlace(other.count) {
      let at = count
      storage.withUnsafeMutableBytes { ($0.baseAddress! + at).copyMemory(from: source, byteCount: other.count) }
    } else {
      // Viewed as UInt8 for the copy only; Array's append of a buffer pointer is a memcpy.
      storage.append(
        contentsOf: UnsafeBufferPointer(start: source.assumingMemoryBound(to: UInt8.self), count: other.count))
    }
    count += other.count
  }

  mutating func write<C: Collection<UInt8>>(bytes other: C) {
    if other.withContiguousStorageIfAvailable({ write(bytes: UnsafeRawBufferPointer($0)) }) != nil { return }
    if fitsInPlace(other.count) {
      let at = count
      storage.withUnsafeMutableBufferPointer {
        _ = UnsafeMutableBufferPointer(rebasing: $0[at..<(at + other.count)]).initialize(from: other)
      }
    } else {
      storage.append(contentsOf: other)
    }
    count += other.count
  }

  /// A string as a `u16` byte length then its UTF-8 bytes.
  mutating func writeShortString(_ string: String) {
    write(UInt16(string.utf8.count))
    write(bytes: string.utf8)
  }

  /// A string as a `u32` byte length then its UTF-8 bytes.
  mutating func writeString(_ string: String) {
    write(UInt32(string.utf8.count))
    write(bytes: string.utf8)
  }
}

extension ByteWriter {
  /// Appends `count` zero bytes, returning where they start (a placeholder to fill later).
  mutating func reserve(_ zeros: Int) -> Int {
    let start = count
    if fitsInPlace(zeros) {
      storage.withUnsafeMutableBytes {
        ($0.baseAddress! + start).initializeMemory(as: UInt8.self, repeating: 0, count: zeros)
      }
      count += zeros
    } else {
      write(bytes: [UInt8](repeating: 0, count: zeros))
    }
    return start
  }

  /// Overwrites bytes written earlier, starting at `offset`.
  mutating func overwrite(at offset: Int, with other: [UInt8]) {
    precondition(offset + other.count <= count, "overwrite past the written bytes")
    other.withUnsafeBytes { source in
      storage.withUnsafeMutableBytes {
        UnsafeMutableRawBufferPointer(rebasing: $0[offset..<(offset + source.count)]).copyMemory(from: source)
      }
    }
  }

  /// The CRC32C of the bytes in `range`.
  func checksum(_ range: Range<Int>, continuing crc: UInt32 = 0) -> UInt32 {
    precondition(range.upperBound <= count, "checksum past the written bytes")
    return storage.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[range]), continuing: crc) }
  }

  /// Calls `body` with the written bytes.
  func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try storage.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
  }

  // MARK: A running checksum

  /// Starts the CRC32C of the bytes written from here to ``endChecksum()``: a section's.
  mutating func beginChecksum() {
    runningCRC = 0
    checkedUpTo = count
  }

  /// The CRC32C of the bytes written since ``beginChecksum()``.
  mutating func endChecksum() -> UInt32 {
    catchUpChecksum()
    checkedUpTo = nil
    return runningCRC
  }

  private mutating func catchUpChecksum() {
    guard let start = checkedUpTo, start < count else { return }
    runningCRC = checksum(start..<count, continuing: runningCRC)
    checkedUpTo = count
  }

  /// Writes a bulk array: left out and checksummed where it is (``leavesBulkOut``), else copied.
  mutating func write(bulk: BulkArray) {
    guard leavesBulkOut else { return bulk.withUnsafeBytes { write(bulk: $0) } }
    catchUpChecksum()
    if checkedUpTo != nil {
      let crc = runningCRC
      runningCRC = bulk.withUnsafeBytes {
        precondition($0.count == bulk.byteCount, "a bulk array's bytes are its count times its stride")
        return CRC32C.checksum($0, continuing: crc)
      }
    }
    inserts.append((count, bulk))
    insertedBytes += bulk.byteCount
  }

  /// Appends a bulk array's bytes. While a checksum runs and a reused buffer has room, they
  /// are checksummed as they are copied, so a 16 MB array is read once, not twice.
  mutating func write(bulk other: UnsafeRawBufferPointer) {
    guard checkedUpTo != nil, let source = other.baseAddress, other.count > 0, fitsInPlace(other.count) else {
      return write(bytes: other)
    }
    catchUpChecksum()
    let at = count
    let crc = runningCRC
    runningCRC = storage.withUnsafeMutableBytes {
      CRC32C.copy(UnsafeRawBufferPointer(start: source, count: other.count), to: $0.baseAddress! + at, continuing: crc)
    }
    count += other.count
    checkedUpTo = count
  }
}
