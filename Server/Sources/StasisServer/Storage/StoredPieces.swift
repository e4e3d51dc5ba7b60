@_spi(Plumbing) import Stasis
import StasisDelta

/// A delta that rebuilds an upload's file from a piece the server stores: the device's own
/// delta against the revision it named, or one the server made against the head.
package struct StoredDelta: Sendable, Equatable {
  /// The piece the delta applies to.
  package var basePiece: Int64
  /// The delta (``SaveDelta``), already checked to rebuild the file exactly.
  package var bytes: [UInt8]

  /// Creates a stored delta.
  package init(basePiece: Int64, bytes: [UInt8]) {
    self.basePiece = basePiece
    self.bytes = bytes
  }
}

/// How revisions are stored: each as a piece, either the whole file or a delta against
/// another piece of the same slot. The rules live here, one table for both backends:
///
/// | rule | value |
/// | --- | --- |
/// | a file smaller than this is stored whole | ``smallestDelta`` (64 KiB) |
/// | deltas on a chain before a whole copy | ``longestChain`` (16) |
/// | a chain's deltas, together, before a whole copy | half the file |
/// | a piece is collected | when no revision of the slot, no piece still needed and no upload in progress needs it |
///
/// So reading a revision applies at most 16 deltas, whose bytes are at most half the file's,
/// and a slot stores at most two whole copies beside the deltas it needs.
package enum PieceRules {
  /// Files smaller than this are stored whole (64 KiB).
  package static let smallestDelta = 64 * 1024
  /// Deltas on a chain before a whole copy.
  package static let longestChain = 16

  /// True when a delta of `delta` bytes may go on a chain whose last piece has `depth` deltas
  /// of `chain` bytes, for a file of `size` bytes.
  static func mayChain(depth: Int64, chain: Int64, delta: Int, size: Int, smallest: Int = smallestDelta) -> Bool {
    size >= smallest && depth + 1 <= Int64(longestChain) && chain + Int64(delta) <= Int64(size / 2)
  }

  /// The file a chain rebuilds: `pieces` from the one wanted back to a whole copy, each with
  /// its bytes and whether it is a delta on the next.
  static func rebuild(_ pieces: [(data: [UInt8], isDelta: Bool)], limit: Int) throws -> [UInt8] {
    guard let whole = pieces.last, !whole.isDelta else {
      throw StorageError(.damaged, "a stored revision's chain of deltas does not end in a whole file")
    }
    var file = whole.data
    for piece in pieces.dropLast().reversed() {
      file = try SaveDelta.apply(piece.data, to: file, limit: limit)
    }
    return file
  }
}

/// What the server's storage could not do. Each kind means one thing: a name that is taken is
/// the caller's to fix, a configuration the operator's, and damage the database's.
package struct StorageError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of failure.
  package enum Kind: Sendable, Equatable {
    /// `players add` of a name another player has.
    case nameTaken
    /// The storage's configuration does not parse (a `--postgres` URL).
    case configuration
    /// The storage is damaged or broke its own rule: a chain of deltas without its whole
    /// copy, a piece that is missing, a function that returned no row, a row just stored that
    /// is not there.
    case damaged
  }

  /// What kind of failure.
  package var kind: Kind
  /// One line.
  package var description: String

  /// Creates an error.
  package init(_ kind: Kind, _ description: String) {
    self.kind = kind
    self.description = description
  }
}
