import Stasis

/// A save file written as its difference from another one the receiver holds: what a cloud
/// upload or download sends, and how the server stores a revision next to its base.
///
/// The difference follows the file's own structure (docs/DELTA.md says why, with the
/// measurements). Each part of the new file (the header, each section by name, the trailer)
/// is one operation against the same part of the base:
/// - unchanged: a copy of the base's bytes (a reference, no bytes);
/// - the same length (a bulk array edited in place): the runs of bytes that differ;
/// - another length (a log that grew, entities that died): zstd against the base's part as
///   a prefix, as `zstd --patch-from` does, which finds what moved;
/// - new: its bytes.
///
/// The operations are then compressed with zstd. The delta names its base and its result by
/// length and CRC32C (of a save file's header and trailer, which hold every section's
/// checksum; of every byte otherwise), and the file it builds is checked, every section of it,
/// so applying it to another base, or a damaged delta, is a ``SaveDeltaError`` and never a
/// wrong file.
///
/// ```swift
/// let delta = SaveDelta.make(from: acknowledged, to: newest)
/// let rebuilt = try SaveDelta.apply(delta, to: acknowledged)  // == newest, byte for byte
/// ```
public enum SaveDelta {
  /// `89 53 54 44 0D 0A 1A 0A` (`\x89STD\r\n\x1A\n`), as the save file's own magic.
  public static let magic: [UInt8] = [0x89, 0x53, 0x54, 0x44, 0x0D, 0x0A, 0x1A, 0x0A]
  /// The delta version this build writes and the newest it reads.
  public static let version: UInt16 = 1
  /// The media type of a delta on the wire.
  public static let mediaType = "application/vnd.stasis.delta"
  /// Magic, version, flags, base length and CRC, result length and CRC, operation bytes,
  /// frame bytes: then the frame, then the delta's own CRC32C.
  static let headerSize = 52
  /// Header flag: the operations are stored as they are, not as a zstd frame.
  static let flagStored: UInt16 = 1
  /// Header flag: the base and the result are save files, named by the CRC32C of their header
  /// and trailer (``DeltaPlan/framing(_:_:)``), not of every byte: making a delta then reads
  /// only what differs, and applying one checks every section of the file it builds.
  static let flagFramed: UInt16 = 2

  enum Operation: UInt8 {
    /// Base offset, length: the base's bytes.
    case copy = 1
    /// Length, bytes.
    case literal = 2
    /// Base offset, length, run count, runs (gap, length, bytes): the base's bytes with runs replaced.
    case sparse = 3
    /// Base offset, base length, result length, frame length, frame: zstd against the base's bytes.
    case prefixed = 4
  }

  /// The delta that rebuilds `target` from `base`. Any two byte strings work; two Stasis
  /// save files give the smallest delta, part by part.
  public static func make(from base: [UInt8], to target: [UInt8]) -> [UInt8] {
    base.withUnsafeBytes { base in target.withUnsafeBytes { target in make(from: base, to: target) } }
  }

  /// The delta that rebuilds `target` from `base`.
  public static func make(from base: UnsafeRawBufferPointer, to target: UnsafeRawBufferPointer) -> [UInt8] {
    let old = DeltaPlan.layout(base)
    let new = DeltaPlan.layout(target)
    var operations: [UInt8] = []
    operations.reserveCapacity(4096)
    for part in DeltaPlan.parts(base: base, target: target, old: old, new: new) {
      encode(part, base: base, target: target, into: &operations)
    }
    var delta: [UInt8] = []
    delta.reserveCapacity(headerSize + operations.count / 2 + 64)
    let frame = operations.withUnsafeBytes { Zstd.compress($0, level: 1) }
    let stored = frame == nil || frame!.count >= operations.count
    var flags: UInt16 = stored ? flagStored : 0
    let baseName: UInt32
    let targetName: UInt32
    if let old, let new {
      flags |= flagFramed
      baseName = DeltaPlan.framing(base, old)
      targetName = DeltaPlan.framing(target, new)
    } else {
      baseName = CRC32C.checksum(base)
      targetName = CRC32C.checksum(target)
    }
    delta.append(contentsOf: magic)
    append(version, to: &delta)
    append(flags, to: &delta)
    append(UInt64(base.count), to: &delta)
    append(baseName, to: &delta)
    append(UInt64(target.count), to: &delta)
    append(targetName, to: &delta)
    append(UInt64(operations.count), to: &delta)
    let body = stored ? operations : frame!
    append(UInt64(body.count), to: &delta)
    delta.append(contentsOf: body)
    append(CRC32C.checksum(delta), to: &delta)
    return delta
  }

  /// One part of the target, as the operation that costs least.
  private static func encode(
    _ part: DeltaPlan.Part, base: UnsafeRawBufferPointer, target: UnsafeRawBufferPointer, into out: inout [UInt8]
  ) {
    let new = UnsafeRawBufferPointer(rebasing: target[part.target])
    guard let from = part.base, !from.isEmpty, !new.isEmpty else {
      literal(new, into: &out)
      return
    }
    let old = UnsafeRawBufferPointer(rebasing: base[from])
    if old.count == new.count {
      if memcmp(old.baseAddress!, new.baseAddress!, new.count) == 0 {
        out.append(Operation.copy.rawValue)
        Varint.append(from.lowerBound, to: &out)
        Varint.append(from.count, to: &out)
        return
      }
      var runs: [UInt8] = []
      runs.reserveCapacity(min(new.count, 1 << 16))
      let count = SparseDiff.encode(base: old, target: new, into: &runs)
      // Edits in place that touch most of the part (a shift that kept the length) are what the
      // prefix finds better; a few edits are cheaper as runs, and found far faster.
      if runs.count <= new.count / 4 || new.count < 4096 {
        out.append(Operation.sparse.rawValue)
        Varint.append(from.lowerBound, to: &out)
        Varint.append(from.count, to: &out)
        Varint.append(count, to: &out)
        out.append(contentsOf: runs)
        return
      }
    }
    guard new.count >= 64, let frame = Zstd.compress(new, level: 3, prefix: old), frame.count < new.count else {
      literal(new, into: &out)
      return
    }
    out.append(Operation.prefixed.rawValue)
    Varint.append(from.lowerBound, to: &out)
    Varint.append(from.count, to: &out)
    Varint.append(new.count, to: &out)
    Varint.append(frame.count, to: &out)
    out.append(contentsOf: frame)
  }

  private static func literal(_ bytes: UnsafeRawBufferPointer, into out: inout [UInt8]) {
    out.append(Operation.literal.rawValue)
    Varint.append(bytes.count, to: &out)
    out.append(contentsOf: bytes)
  }

  static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
    withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif
