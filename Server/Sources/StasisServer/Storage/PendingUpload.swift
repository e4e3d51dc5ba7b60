import Foundation
import Stasis

/// An upload in progress (`POST /v1/slots/{slot}/uploads`).
package struct PendingUpload: Sendable, Equatable {
  /// Its id: 32 random hex digits, in its URL.
  package var id: String
  /// The slot it uploads to.
  package var slot: String
  /// When it was created, in milliseconds since the Unix epoch.
  package var createdAt: Int64
  /// The bytes it will have when complete (`Upload-Length`).
  package var length: Int64
  /// The bytes received so far (`Upload-Offset`).
  package var received: Int64
  /// The creating request's headers, as JSON: acted on when the upload completes.
  package var headers: String
  /// The piece its delta is built on, pinned while it is in progress.
  package var deltaPiece: Int64?
}

/// What became of creating an upload.
package enum UploadCreation: Sendable, Equatable {
  /// Recorded; the delta's base piece, when it has one, is pinned.
  case created(deltaPiece: Int64?)
  /// The revision the delta is made against is not one the slot has.
  case baseGone
}

/// What became of a part sent to an upload.
package enum UploadAppend: Sendable, Equatable {
  /// Stored: the upload has now received this many bytes.
  case appended(received: Int64)
  /// The part's offset is not what the upload has received: this many bytes.
  case mismatch(received: Int64)
  /// The part would pass the upload's length.
  case tooLong(length: Int64)
  /// No such upload.
  case notFound
}
