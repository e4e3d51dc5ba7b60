import Crypto

/// A stable fingerprint of a value: SHA-256 of its canonical encoding (the format's tree
/// encoding, fields sorted by name), so it never depends on `Dictionary` order or addresses.
/// Two states with the same digest are bit-for-bit the same, floats included.
public enum StateDigest {
  /// The digest of `value` as 64 lowercase hex digits.
  public static func sha256<T: Encodable>(_ value: T) throws -> String {
    var writer = ByteWriter()
    SectionCoding.encode(try SaveValueEncoder().encode(value), into: &writer)
    return SHA256.hash(data: writer.bytes).map { byte in
      let digits = String(byte, radix: 16)
      return digits.count == 1 ? "0" + digits : digits
    }.joined()
  }
}

extension SaveValue {
  /// The value's canonical encoding (the format's tree encoding, fields sorted by name), the
  /// bytes ``StateDigest`` hashes: for another digest over the same bytes (StasisReplay's).
  package var canonicalBytes: [UInt8] {
    var writer = ByteWriter()
    SectionCoding.encode(self, into: &writer)
    return writer.bytes
  }
}
