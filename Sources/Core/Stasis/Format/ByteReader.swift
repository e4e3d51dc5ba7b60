/// A bounds-checked cursor over untrusted bytes. Every read checks the bytes that remain;
/// a count is checked against what remains before anything is allocated. A failed read
/// throws a `SaveFileError` with the absolute offset where it happened.
struct ByteReader {
  let bytes: UnsafeRawBufferPointer
  /// Offset of `bytes[0]` in the file, so errors name file offsets.
  let base: Int
  private(set) var position: Int = 0
  /// Names the part being read, for errors.
  var context: SaveFileError.Context
  /// The array `bytes` points into, when there is one: bulk arrays then share its storage.
  var owner: [UInt8]?

  init(_ bytes: UnsafeRawBufferPointer, base: Int = 0, context: SaveFileError.Context) {
    self.bytes = bytes
    self.base = base
    self.context = context
  }

  var remaining: Int { bytes.count - position }
  var isAtEnd: Bool { position == bytes.count }
  var fileOffset: Int { base + position }

  func failure(_ kind: SaveFileError.Kind, _ message: String, at offset: Int? = nil) -> SaveFileError {
    SaveFileError(kind, message, context: context, offset: offset ?? fileOffset)
  }

  mutating func require(_ count: Int, for what: String) throws(SaveFileError) {
    guard count >= 0, count <= remaining else {
      throw failure(.truncated, "\(what) needs \(count) bytes but only \(remaining) remain")
    }
  }

  mutating func read<T: FixedWidthInteger>(_: T.Type, _ what: String) throws(SaveFileError) -> T {
    let size = MemoryLayout<T>.size
    try require(size, for: what)
    let value = T(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: T.self))
    position += size
    return value
  }

  mutating func readFloat(_ what: String) throws(SaveFileError) -> Float {
    Float(bitPattern: try read(UInt32.self, what))
  }

  mutating func readDouble(_ what: String) throws(SaveFileError) -> Double {
    Double(bitPattern: try read(UInt64.self, what))
  }

  /// `count` raw bytes, without copying.
  mutating func readBytes(_ count: Int, _ what: String) throws(SaveFileError) -> UnsafeRawBufferPointer {
    try require(count, for: what)
    let slice = UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
    position += count
    return slice
  }

  /// `count` bytes as an array: a slice sharing the owner's storage when there is an owner.
  mutating func readByteArray(_ count: Int, _ what: String) throws(SaveFileError) -> ArraySlice<UInt8> {
    let start = position
    let raw = try readBytes(count, what)
    if let owner { return owner[(base + start)..<(base + start + count)] }
    return ArraySlice(raw)
  }

  /// UTF-8 text of `count` bytes; invalid UTF-8 is an error, never repaired silently.
  mutating func readString(_ count: Int, _ what: String) throws(SaveFileError) -> String {
    let start = fileOffset
    let raw = try readBytes(count, what)
    guard let string = String(validating: raw, as: UTF8.self) else {
      throw failure(.malformed, "\(what) is not valid UTF-8", at: start)
    }
    return string
  }

  /// A `u16`-length string, at most `limit` bytes.
  mutating func readShortString(_ what: String, limit: Int) throws(SaveFileError) -> String {
    let start = fileOffset
    let length = Int(try read(UInt16.self, "\(what) length"))
    guard length <= limit else {
      throw failure(.limitExceeded, "\(what) is \(length) bytes; the limit is \(limit)", at: start)
    }
    return try readString(length, what)
  }

  mutating func skip(_ count: Int, _ what: String) throws(SaveFileError) {
    try require(count, for: what)
    position += count
  }
}
