/// The bytes that differ between two regions of the same length, as runs: what a bulk array
/// edited in place (the city's agents moving) costs. Found at memory speed: 32 bytes compared
/// per step while they match, byte by byte only around a difference.
enum SparseDiff {
  /// Two differences closer than this make one run: a run's header costs about this much.
  static let mergeGap = 8

  /// Appends, for each run: the gap since the previous run's end (a varint), the run's length
  /// (a varint) and the target's bytes. Returns the number of runs.
  static func encode(
    base: UnsafeRawBufferPointer, target: UnsafeRawBufferPointer, into out: inout [UInt8]
  ) -> Int {
    precondition(base.count == target.count)
    let count = target.count
    guard count > 0, let a = base.baseAddress, let b = target.baseAddress else { return 0 }
    var runs = 0
    var position = 0
    var previousEnd = 0
    while position < count {
      // Skip what matches, 32 bytes a step.
      while position + 32 <= count {
        let differs =
          (a.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            ^ b.loadUnaligned(fromByteOffset: position, as: UInt64.self))
          | (a.loadUnaligned(fromByteOffset: position + 8, as: UInt64.self)
            ^ b.loadUnaligned(fromByteOffset: position + 8, as: UInt64.self))
          | (a.loadUnaligned(fromByteOffset: position + 16, as: UInt64.self)
            ^ b.loadUnaligned(fromByteOffset: position + 16, as: UInt64.self))
          | (a.loadUnaligned(fromByteOffset: position + 24, as: UInt64.self)
            ^ b.loadUnaligned(fromByteOffset: position + 24, as: UInt64.self))
        if differs != 0 { break }
        position += 32
      }
      // A difference lies in the next 32 bytes (or fewer remain): find it byte by byte.
      while position < count,
        a.load(fromByteOffset: position, as: UInt8.self) == b.load(fromByteOffset: position, as: UInt8.self)
      {
        position += 1
      }
      guard position < count else { break }
      // A run starts here; it ends after the last difference followed by `mergeGap` matches.
      let start = position
      var last = position
      position += 1
      while position < count, position - last <= mergeGap {
        if a.load(fromByteOffset: position, as: UInt8.self) != b.load(fromByteOffset: position, as: UInt8.self) {
          last = position
        }
        position += 1
      }
      let end = last + 1
      Varint.append(start - previousEnd, to: &out)
      Varint.append(end - start, to: &out)
      out.append(contentsOf: UnsafeRawBufferPointer(start: b + start, count: end - start))
      previousEnd = end
      position = end
      runs += 1
    }
    return runs
  }
}

/// Unsigned LEB128: seven bits a byte, low first; a continuation bit on all but the last.
enum Varint {
  static func append(_ value: Int, to out: inout [UInt8]) {
    var rest = UInt64(value)
    while rest >= 0x80 {
      out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
      rest >>= 7
    }
    out.append(UInt8(rest))
  }
}
