import CStasisXXHash
import Stasis

/// A state's digest for replays: XXH3-64 over bytes the game feeds it, incremental, fast enough
/// to run every frame. The same bytes give the same digest in every process, build and
/// platform (XXH3's output is specified byte for byte); scalars are fed little-endian, so a
/// big-endian machine agrees too. SHA-256 (`StateDigest`) stays for files, where a digest
/// must resist someone choosing the bytes; this one only has to notice a difference.
///
/// ```swift
/// let hasher = StateHasher()
/// hasher.combine(state.tick)
/// hasher.combine(contentsOf: state.bodies)   // raw bytes of a plain array
/// let digest = hasher.finalize()
/// ```
///
/// A hasher is reused: ``finalize()`` returns the digest and starts it again. It is a class
/// holding XXH3's streaming state; one thread uses it at a time.
public final class StateHasher {
  // XXH3's streaming state: 576 bytes, 64-byte aligned, allocated once per hasher.
  private let state: OpaquePointer

  /// A hasher with nothing fed yet.
  public init() {
    guard let state = XXH3_createState() else { fatalError("XXH3_createState: out of memory") }
    self.state = state
    XXH3_64bits_reset(state)
  }

  deinit { XXH3_freeState(state) }

  /// Feeds raw bytes.
  public func combine(bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
    XXH3_64bits_update(state, base, bytes.count)
  }

  /// Feeds a scalar's bytes, little-endian (a `Float` or `Double` by its IEEE 754 bits, so
  /// `-0.0` and `0.0` differ, as do two NaN payloads: a replay compares bits, not values).
  public func combine<T: BulkScalar>(_ value: T) {
    withUnsafeBytes(of: littleEndian(value)) { combine(bytes: $0) }
  }

  /// Feeds an integer in 8 bytes, little-endian: a count or a length, so that the bytes after
  /// it cannot be mistaken for a longer or shorter run.
  public func combine(count: Int) { combine(Int64(count)) }

  /// Feeds a string's UTF-8 bytes, after their count.
  public func combine(_ text: String) {
    var text = text
    text.withUTF8 { utf8 in
      combine(count: utf8.count)
      combine(bytes: UnsafeRawBufferPointer(utf8))
    }
  }

  /// Feeds a plain array's element count, then its elements' bytes as they lie in memory (on
  /// a little-endian machine, which every platform Swift ships on is). For numbers and other
  /// types without references or padding: padding bytes would be hashed as they are. Arrays of
  /// `BulkStorable` structs take the overload that hashes their declared fields only.
  public func combine<T: BitwiseCopyable>(contentsOf array: [T]) {
    combine(count: array.count)
    array.withUnsafeBytes { combine(bytes: $0) }
  }

  /// Feeds an array of `BulkStorable` structs as a save holds it: its count, then its declared
  /// fields' bytes, packed. Padding is never hashed, so equal values give equal digests.
  public func combine<T: BulkStorable>(contentsOf array: [T]) {
    combine(count: array.count)
    // The same bytes as the plain overload's for a struct with no padding: digests stay.
    BulkArray(array).withUnsafeBytes { combine(bytes: $0) }
  }

  /// Feeds a bulk array's declared fields: its count, its packed stride, then the fields'
  /// little-endian bytes of each element, packed (`BulkLayout.packed`): no padding byte.
  public func combine(_ array: BulkArray) {
    let array = array.packed()
    combine(count: array.count)
    combine(count: array.layout.stride)
    array.withUnsafeBytes { combine(bytes: $0) }
  }

  /// Feeds a value tree in its canonical encoding (the save format's, fields by name): the
  /// way to hash a state the game describes as sections. Bulk arrays inside go as raw bytes.
  public func combine(_ value: SaveValue) {
    value.canonicalBytes.withUnsafeBytes { combine(bytes: $0) }
  }

  /// The digest of everything fed since the last call (or since `init`), and a fresh start.
  public func finalize() -> UInt64 {
    let digest = XXH3_64bits_digest(state)
    XXH3_64bits_reset(state)
    return digest
  }

  /// The digest of `bytes` alone.
  public static func digest(of bytes: UnsafeRawBufferPointer) -> UInt64 {
    XXH3_64bits(bytes.baseAddress, bytes.count)
  }

  private func littleEndian<T: BulkScalar>(_ value: T) -> T {
    #if _endian(big)
      var value = value
      withUnsafeMutableBytes(of: &value) { $0.reverse() }
      return value
    #else
      return value
    #endif
  }
}
