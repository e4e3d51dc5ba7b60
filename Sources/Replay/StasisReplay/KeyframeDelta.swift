import Stasis
import StasisDelta

/// A keyframe as a delta on the keyframe before it. Two keyframes of one run are usually files
/// of one length whose bytes differ here and there (agents that moved, a score): for those, the
/// bytes that differ, as a mask of their places and their XOR with the base, each compressed
/// with zstd. For the city (1% of a million agents moving a tick, a keyframe every 10 ticks) that
/// is 1.18× the bytes that differ, where `SaveDelta`'s runs of copies and literals, made for
/// uploads of any change, took 1.30× (each scattered run pays its framing; zstd of the XOR alone
/// comes to about 1.3× too). The mask is compressed hard (level 15: about 0.4 s for a 16 MB
/// state's, on the recorder's worker); the differing bytes are what changed, which rarely
/// compress. Files of different lengths (entities born or gone) are `SaveDelta`s.
///
/// Written by hand: no library encodes a sparse byte difference this way; zstd does the coding.
///
/// Layout of the masked form: `SKX1`, the file's length (8 bytes, little-endian), the mask's
/// frame length (8), the mask's zstd frame (one bit a byte of the file, set where it differs),
/// then the differing bytes' XOR with the base, in order: a zstd frame of them when that is
/// smaller (the frame's first byte is zstd's magic), else the bytes themselves.
enum KeyframeDelta {
  static let magic: [UInt8] = Array("SKX1".utf8)

  /// `file` as a delta on `base`.
  static func make(from base: [UInt8], to file: [UInt8]) -> [UInt8] {
    guard base.count == file.count, !file.isEmpty, let masked = masked(from: base, to: file) else {
      return SaveDelta.make(from: base, to: file)
    }
    return masked
  }

  /// The file `delta` builds on `base`, at most `limit` bytes (a `SaveDelta` is refused before it
  /// allocates more; the masked form builds a file of the base's length); `SaveDelta`'s own
  /// errors for its form.
  static func apply(
    _ delta: [UInt8], to base: [UInt8], limit: Int = FormatLimits.maxFileSize, path: String?
  ) throws(SaveDeltaError) -> [UInt8] {
    guard delta.starts(with: magic) else { return try SaveDelta.apply(delta, to: base, limit: limit, path: path) }
    func refuse(_ message: String) -> SaveDeltaError {
      SaveDeltaError(.malformed, "a masked keyframe \(message)", offset: 0, path: path)
    }
    guard delta.count >= 20 else { throw refuse("is cut short") }
    let length = Int(truncatingIfNeeded: number(delta, at: 4))
    let maskFrame = number(delta, at: 12)
    guard length == base.count, maskFrame <= UInt64(delta.count - 20) else {
      throw refuse("does not fit its base (\(length) bytes for a base of \(base.count))")
    }
    let maskEnd = 20 + Int(maskFrame)
    let maskResult = delta[20..<maskEnd].withUnsafeBytes { raw in
      Result { () throws(Zstd.Failure) in try Zstd.decompress(raw, size: (length + 7) / 8) }
    }
    guard case .success(let mask) = maskResult else {
      throw refuse("has a mask that does not decompress: \(message(maskResult))")
    }
    // No bit past the file's end: each set bit is a byte of the file.
    if length % 8 != 0, let last = mask.last, last >> UInt8(length % 8) != 0 {
      throw refuse("marks bytes past the file's end")
    }
    let differing = mask.reduce(0) { $0 + $1.nonzeroBitCount }
    let stored = Array(delta[maskEnd...])
    var values = stored
    if stored.count != differing {
      let valuesResult = stored.withUnsafeBytes { raw in
        Result { () throws(Zstd.Failure) in try Zstd.decompress(raw, size: differing) }
      }
      guard case .success(let decompressed) = valuesResult else {
        throw refuse(
          "has \(stored.count) bytes for \(differing) differing ones, not a frame of them: \(message(valuesResult))")
      }
      values = decompressed
    }
    var file = base
    var next = 0
    file.withUnsafeMutableBufferPointer { out in
      for (index, bits) in mask.enumerated() where bits != 0 {
        var bits = bits
        while bits != 0 {
          let bit = bits.trailingZeroBitCount
          out[index * 8 + bit] ^= values[next]
          next += 1
          bits &= bits - 1
        }
      }
    }
    return file
  }

  /// The masked form, or nil when zstd fails (it fails only when it cannot allocate).
  private static func masked(from base: [UInt8], to file: [UInt8]) -> [UInt8]? {
    var mask = [UInt8](repeating: 0, count: (file.count + 7) / 8)
    var values: [UInt8] = []
    base.withUnsafeBufferPointer { old in
      file.withUnsafeBufferPointer { new in
        mask.withUnsafeMutableBufferPointer { mask in
          var index = 0
          let count = new.count
          while index < count {
            // Eight equal bytes at a time, where a keyframe is mostly the same.
            if index & 7 == 0, index + 8 <= count,
              UnsafeRawPointer(old.baseAddress! + index).loadUnaligned(as: UInt64.self)
                == UnsafeRawPointer(new.baseAddress! + index).loadUnaligned(as: UInt64.self)
            {
              index += 8
              continue
            }
            let difference = old[index] ^ new[index]
            if difference != 0 {
              mask[index >> 3] |= 1 << UInt8(index & 7)
              values.append(difference)
            }
            index += 1
          }
        }
      }
    }
    guard let maskFrame = mask.withUnsafeBytes({ Zstd.compress($0, level: 15) }) else { return nil }
    let valueFrame = values.withUnsafeBytes { Zstd.compress($0, level: 3) }
    // A frame the same length as the bytes would read as the bytes themselves: kept only when smaller.
    let stored = valueFrame.flatMap { $0.count < values.count ? $0 : nil } ?? values
    var delta = magic
    delta.reserveCapacity(20 + maskFrame.count + stored.count)
    append(UInt64(file.count), to: &delta)
    append(UInt64(maskFrame.count), to: &delta)
    delta += maskFrame
    delta += stored
    return delta
  }

  /// A zstd failure's words (empty for a success).
  static func message(_ result: Result<[UInt8], Zstd.Failure>) -> String {
    if case .failure(let failure) = result { return failure.message }
    return ""
  }

  private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
    for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
  }

  private static func number(_ bytes: [UInt8], at offset: Int) -> UInt64 {
    (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[offset + $1]) << UInt64($1 * 8) }
  }
}
