import Stasis

extension SaveDelta {
  /// Rebuilds the file `delta` was made for from `base`. The delta is untrusted: every length
  /// is checked against the bytes that are there and against `limit` before anything is
  /// allocated, every range against the base, and the result against the CRC32C the delta
  /// promised. `path` names the delta in errors.
  public static func apply(
    _ delta: [UInt8], to base: [UInt8], limit: Int = FormatLimits.maxFileSize, path: String? = nil
  ) throws(SaveDeltaError) -> [UInt8] {
    let result = delta.withUnsafeBytes { delta in
      base.withUnsafeBytes { base in Result { () throws(SaveDeltaError) in try apply(delta, to: base, limit: limit) } }
    }
    return try result.mapError { error in
      var named = error
      named.path = path
      return named
    }.get()
  }

  /// The delta's header, checked: what it was made against and what it builds.
  public struct Header: Sendable, Equatable {
    /// The length of the base it must be applied to.
    public var baseLength: Int
    /// The CRC32C of that base.
    public var baseChecksum: UInt32
    /// The length of the file it builds.
    public var resultLength: Int
    /// The CRC32C of that file.
    public var resultChecksum: UInt32
  }

  /// Reads and checks the header and the delta's own checksum, without the base.
  public static func header(_ delta: [UInt8]) throws(SaveDeltaError) -> Header {
    try delta.withUnsafeBytes { delta in Result { () throws(SaveDeltaError) in try readHeader(delta).header } }.get()
  }

  private static func readHeader(_ delta: UnsafeRawBufferPointer) throws(SaveDeltaError) -> (
    header: Header, flags: UInt16, operations: Int, body: UnsafeRawBufferPointer
  ) {
    guard delta.count >= magic.count, delta.prefix(magic.count).elementsEqual(magic) else {
      throw SaveDeltaError(.badMagic, "not a Stasis delta", offset: 0)
    }
    guard delta.count >= headerSize + 4 else {
      throw SaveDeltaError(
        .truncated, "the header needs \(headerSize + 4) bytes, the delta has \(delta.count)", offset: 0)
    }
    func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: delta.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
    func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: delta.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
    let version = UInt16(littleEndian: delta.loadUnaligned(fromByteOffset: 8, as: UInt16.self))
    guard version <= self.version else {
      throw SaveDeltaError(.newerVersion, "delta version \(version); this build reads up to \(self.version)", offset: 8)
    }
    guard version >= 1 else { throw SaveDeltaError(.malformed, "delta version 0", offset: 8) }
    let flags = UInt16(littleEndian: delta.loadUnaligned(fromByteOffset: 10, as: UInt16.self))
    guard flags & ~(flagStored | flagFramed) == 0 else {
      throw SaveDeltaError(.malformed, "unknown flags \(flags)", offset: 10)
    }
    let bodyLength = u64(44)
    guard bodyLength == UInt64(delta.count - headerSize - 4) else {
      let kind: SaveDeltaError.Kind = bodyLength > UInt64(delta.count - headerSize - 4) ? .truncated : .malformed
      throw SaveDeltaError(
        kind, "the header announces \(bodyLength) bytes of operations; \(delta.count - headerSize - 4) are there",
        offset: 44)
    }
    let stored = u32(delta.count - 4)
    let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: delta[0..<(delta.count - 4)]))
    guard stored == computed else {
      throw SaveDeltaError(
        .checksumMismatch, "the delta's checksum is \(hex(stored)), its bytes give \(hex(computed))",
        offset: delta.count - 4)
    }
    // Lengths are bounded before they are used: nothing here is larger than the format allows.
    let baseLength = u64(12)
    let resultLength = u64(24)
    let operations = u64(36)
    let largest = UInt64(FormatLimits.maxFileSize)
    guard baseLength <= largest, resultLength <= largest, operations <= 4 * largest else {
      throw SaveDeltaError(.limitExceeded, "a length passes the format's limit of \(largest) bytes", offset: 12)
    }
    let header = Header(
      baseLength: Int(baseLength), baseChecksum: u32(20), resultLength: Int(resultLength), resultChecksum: u32(32))
    return (
      header, flags, Int(operations),
      UnsafeRawBufferPointer(rebasing: delta[headerSize..<(delta.count - 4)])
    )
  }

  static func apply(_ delta: UnsafeRawBufferPointer, to base: UnsafeRawBufferPointer, limit: Int) throws(SaveDeltaError)
    -> [UInt8]
  {
    let (header, flags, operationBytes, body) = try readHeader(delta)
    let framed = flags & flagFramed != 0
    let baseName: UInt32? =
      if framed { DeltaPlan.layout(base).map { DeltaPlan.framing(base, $0) } } else { CRC32C.checksum(base) }
    guard header.baseLength == base.count, header.baseChecksum == baseName else {
      throw SaveDeltaError(
        .wrongBase,
        "made against a base of \(header.baseLength) bytes (CRC32C \(hex(header.baseChecksum))), "
          + "applied to one of \(base.count) bytes (CRC32C \(baseName.map(hex) ?? "none: not a save file"))", offset: 12
      )
    }
    guard header.resultLength <= limit else {
      throw SaveDeltaError(
        .limitExceeded, "it builds a file of \(header.resultLength) bytes; the limit is \(limit)", offset: 24)
    }
    // The operations cost at most a few bytes of header per run or part on top of the result's
    // own bytes: more than that is a bomb, refused before it is inflated.
    guard operationBytes <= 4 * header.resultLength + (1 << 16) else {
      throw SaveDeltaError(
        .malformed, "\(operationBytes) bytes of operations for a file of \(header.resultLength)", offset: 36)
    }
    let operations: [UInt8]
    if flags & flagStored != 0 {
      guard body.count == operationBytes else {
        throw SaveDeltaError(.malformed, "stored operations of \(body.count) bytes, not \(operationBytes)", offset: 36)
      }
      operations = [UInt8](body)
    } else {
      do {
        operations = try Zstd.decompress(body, size: operationBytes)
      } catch {
        throw SaveDeltaError(.malformed, "the operations do not decompress: \(error.message)", offset: headerSize)
      }
    }
    var failure: SaveDeltaError?
    let result = [UInt8](unsafeUninitializedCapacity: header.resultLength) { buffer, count in
      let built = operations.withUnsafeBytes { operations in
        Result { () throws(SaveDeltaError) in
          var builder = ResultBuilder(
            base: base, result: UnsafeMutableRawBufferPointer(buffer), operations: DeltaCursor(operations))
          try builder.run()
        }
      }
      switch built {
      case .success: count = header.resultLength
      case .failure(let error):
        failure = error
        count = 0
      }
    }
    if let failure { throw failure }
    if framed {
      // Named by its framing: every section of the file built is checked against it.
      let layout = result.withUnsafeBytes { DeltaPlan.layout($0) }
      let built = layout.map { layout in result.withUnsafeBytes { DeltaPlan.framing($0, layout) } }
      guard built == header.resultChecksum else {
        throw SaveDeltaError(
          .resultMismatch,
          "the file built is named \(built.map(hex) ?? "nothing: not a save file"); the delta promised "
            + hex(header.resultChecksum), offset: 32)
      }
      if let error = result.withUnsafeBytes({ SaveFileFormat.verify($0).error }) {
        throw SaveDeltaError(.resultMismatch, "the file built fails its own checks: \(error)", offset: 32)
      }
      return result
    }
    let built = CRC32C.checksum(result)
    guard built == header.resultChecksum else {
      throw SaveDeltaError(
        .resultMismatch, "the file built has CRC32C \(hex(built)); the delta promised \(hex(header.resultChecksum))",
        offset: 32)
    }
    return result
  }
}

/// Runs the operations into the result, each range checked before a byte moves.
private struct ResultBuilder {
  let base: UnsafeRawBufferPointer
  let result: UnsafeMutableRawBufferPointer
  var operations: DeltaCursor
  var written = 0

  mutating func run() throws(SaveDeltaError) {
    while !operations.isAtEnd {
      let at = operations.position
      let code = try operations.byte()
      guard let operation = SaveDelta.Operation(rawValue: code) else {
        throw operations.failure(.malformed, "unknown operation \(code)", at: at)
      }
      switch operation {
      case .copy:
        let from = try baseRange()
        let target = try claim(from.count, at: at)
        target.copyMemory(from: UnsafeRawBufferPointer(rebasing: base[from]))
      case .literal:
        let length = try operations.varint()
        let bytes = try operations.bytes(length)
        try claim(length, at: at).copyMemory(from: bytes)
      case .sparse:
        let from = try baseRange()
        let target = try claim(from.count, at: at)
        target.copyMemory(from: UnsafeRawBufferPointer(rebasing: base[from]))
        let runs = try operations.varint()
        var position = 0
        for _ in 0..<runs {
          let runAt = operations.position
          let gap = try operations.varint()
          let length = try operations.varint()
          guard gap <= target.count - position, length <= target.count - position - gap else {
            throw operations.failure(.malformed, "a run passes the end of its part", at: runAt)
          }
          position += gap
          let bytes = try operations.bytes(length)
          UnsafeMutableRawBufferPointer(rebasing: target[position..<(position + length)]).copyMemory(from: bytes)
          position += length
        }
      case .prefixed:
        let from = try baseRange()
        let length = try operations.varint()
        let frameLength = try operations.varint()
        let frame = try operations.bytes(frameLength)
        let target = try claim(length, at: at)
        do {
          try Zstd.decompress(frame, into: target, prefix: UnsafeRawBufferPointer(rebasing: base[from]))
        } catch {
          throw operations.failure(.malformed, "a part does not decompress against its base: \(error.message)", at: at)
        }
      }
    }
    guard written == result.count else {
      throw operations.failure(
        .malformed, "the operations build \(written) bytes; the header announces \(result.count)",
        at: operations.position)
    }
  }

  /// An offset and a length (varints) that lie inside the base.
  private mutating func baseRange() throws(SaveDeltaError) -> Range<Int> {
    let at = operations.position
    let offset = try operations.varint()
    let length = try operations.varint()
    guard offset <= base.count, length <= base.count - offset else {
      throw operations.failure(.malformed, "bytes \(offset)..+\(length) lie outside the base of \(base.count)", at: at)
    }
    return offset..<(offset + length)
  }

  /// The next `count` bytes of the result, which must fit in what the header announced.
  private mutating func claim(_ count: Int, at: Int) throws(SaveDeltaError) -> UnsafeMutableRawBufferPointer {
    guard count <= result.count - written else {
      throw operations.failure(.malformed, "the operations build more than the \(result.count) bytes announced", at: at)
    }
    defer { written += count }
    return UnsafeMutableRawBufferPointer(rebasing: result[written..<(written + count)])
  }
}

/// A bounds-checked reader of the operations: every length is checked against what remains.
struct DeltaCursor {
  let bytes: UnsafeRawBufferPointer
  private(set) var position = 0

  init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

  var isAtEnd: Bool { position == bytes.count }

  func failure(_ kind: SaveDeltaError.Kind, _ message: String, at: Int) -> SaveDeltaError {
    SaveDeltaError(kind, message + " (in the operations)", offset: at)
  }

  mutating func byte() throws(SaveDeltaError) -> UInt8 {
    guard position < bytes.count else { throw failure(.truncated, "the operations end early", at: position) }
    defer { position += 1 }
    return bytes[position]
  }

  /// An unsigned LEB128 of at most 9 bytes, which must fit in an `Int` below 2^62.
  mutating func varint() throws(SaveDeltaError) -> Int {
    let start = position
    var value: UInt64 = 0
    for shift in stride(from: UInt64(0), to: 63, by: 7) {
      let next = try byte()
      value |= UInt64(next & 0x7F) << shift
      if next & 0x80 == 0 {
        guard value < 1 << 62 else { break }
        return Int(value)
      }
    }
    throw failure(.malformed, "a number is too large", at: start)
  }

  mutating func bytes(_ count: Int) throws(SaveDeltaError) -> UnsafeRawBufferPointer {
    guard count <= bytes.count - position else {
      throw failure(.truncated, "\(count) bytes announced, \(bytes.count - position) remain", at: position)
    }
    defer { position += count }
    return UnsafeRawBufferPointer(rebasing: bytes[position..<(position + count)])
  }
}

func hex(_ value: UInt32) -> String {
  let digits = String(value, radix: 16)
  return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
}
