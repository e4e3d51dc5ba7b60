/// Why a delta could not be applied: it is damaged or hostile, it was made against another
/// base, or what it would build passes the limit. Nothing is built half-way.
public struct SaveDeltaError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of failure, stable for scripts and the server's answers.
  public enum Kind: String, Sendable, Equatable {
    /// The delta ends before a part it announces.
    case truncated
    /// Not a Stasis delta: the magic number is wrong.
    case badMagic
    /// A newer delta version than this reader knows.
    case newerVersion
    /// The delta's own checksum does not match its bytes.
    case checksumMismatch
    /// The delta was made against a base with other bytes than the one it is applied to.
    case wrongBase
    /// A structure is inconsistent: an unknown operation, a range outside the base, a frame
    /// that does not hold what it says.
    case malformed
    /// What the delta builds would be larger than the limit it is applied under.
    case limitExceeded
    /// The bytes the delta built do not have the checksum it promised.
    case resultMismatch
  }

  /// What kind of failure.
  public var kind: Kind
  /// What failed, in words.
  public var message: String
  /// The byte of the delta (before decompression: of its header; after: of its operations)
  /// where the failure was found.
  public var offset: Int
  /// The delta's name (a file or an upload), when known.
  public var path: String?

  /// Creates an error.
  public init(_ kind: Kind, _ message: String, offset: Int, path: String? = nil) {
    self.kind = kind
    self.message = message
    self.offset = offset
    self.path = path
  }

  /// One line: the delta, the offset, what failed.
  public var description: String {
    (path.map { "\($0): " } ?? "") + "delta, at byte \(offset): \(kind.rawValue): \(message)"
  }
}
