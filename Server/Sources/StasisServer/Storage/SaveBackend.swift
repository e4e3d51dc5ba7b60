import Foundation
import Stasis

/// Where the server keeps players, slots and revisions. Everything the server knows is here,
/// so any number of servers can share one backend. Each method is one transaction: an
/// upload's `created` is returned only after it committed.
package protocol SaveBackend: StudioBackend {
  /// Adds a player with the SHA-256 of their token; refuses a name in use.
  func addPlayer(name: String, tokenHash: [UInt8], at time: Int64) async throws -> Player
  /// Every player, by name.
  func players() async throws -> [Player]
  /// Revokes a player's token; false when there is no such player.
  func revokePlayer(name: String) async throws -> Bool
  /// The unrevoked player whose token hashes to `tokenHash`.
  func player(tokenHash: [UInt8]) async throws -> Player?

  /// Stores a new revision when `precondition` holds and the limits allow, pruning the slot to
  /// its newest `keep` revisions in the same transaction. `loser`, when given, is a revision of
  /// the slot that lost the conflict this upload resolves: it is marked as lost to the new
  /// revision, and no pruning removes it until ``discard(player:slot:revision:)``.
  /// `delta`, when given, rebuilds `file` from a piece of the slot: it is stored instead of
  /// the whole file when ``PieceRules`` allow and the piece is still there.
  func put(
    player: Player, precondition: WritePrecondition, loser: Int64?, metadata: RevisionMetadata, file: [UInt8],
    delta: StoredDelta?, keep: Int, limits: PlayerLimits
  ) async throws -> PutOutcome
  /// The head's metadata, or nil for an unknown (or deleted) slot.
  func head(player: Player, slot: String) async throws -> RevisionMetadata?
  /// A revision's metadata and bytes (the head when `revision` is nil), rebuilt from its piece.
  func file(player: Player, slot: String, revision: Int64?) async throws -> (RevisionMetadata, [UInt8])?
  /// The slot's revisions, newest first; nil for an unknown slot.
  func revisions(player: Player, slot: String) async throws -> [RevisionMetadata]?
  /// Every slot's head, by slot name, from metadata alone.
  func slots(player: Player) async throws -> [RevisionMetadata]
  /// Deletes one revision of a slot, kept or not, unless it is the head.
  func discard(player: Player, slot: String, revision: Int64) async throws -> DiscardOutcome
  /// Deletes a slot whose head is `head`.
  func delete(player: Player, slot: String, head: Int64) async throws -> DeleteOutcome
  /// Checks the backend answers (for `/health`).
  func ping() async throws

  // MARK: Resumable uploads

  /// Records an upload in progress of `length` bytes, with the request's `headers` (JSON) to
  /// act on when it completes. When `deltaRevision` is given, the piece that revision is stored
  /// as is pinned: no collection removes it until the upload is finished or removed.
  func createUpload(
    player: Player, slot: String, id: String, at time: Int64, length: Int64, headers: String, deltaRevision: Int64?
  ) async throws -> UploadCreation
  /// An upload in progress of the player's; nil when there is none by that id.
  func upload(player: Player, id: String) async throws -> PendingUpload?
  /// Stores `bytes` at `offset` of the upload, only if `offset` is what it has received so far.
  func appendToUpload(player: Player, id: String, offset: Int64, bytes: [UInt8]) async throws -> UploadAppend
  /// Everything the upload received, in order.
  func uploadBody(player: Player, id: String) async throws -> [UInt8]?
  /// Removes an upload and its parts; false when there was none.
  func removeUpload(player: Player, id: String) async throws -> Bool
  /// Removes every upload created before `time` (abandoned).
  func expireUploads(before time: Int64) async throws
  /// The bytes the slot's revisions take in storage: its pieces (whole files and deltas, the
  /// ones kept for a chain included) and the files of revisions stored before pieces.
  func storedBytes(player: Player, slot: String) async throws -> Int64
  /// The file a piece of the slot rebuilds; nil when the slot has no such piece.
  func pieceFile(player: Player, slot: String, piece: Int64) async throws -> [UInt8]?

  // MARK: Settings (15.6)

  /// Merges a device's settings into the player's, key by key, in one transaction: a key is
  /// taken when the player has none by its name, or when its stamp is later than the stored one
  /// (the last writer wins; an equal or older stamp changes nothing). Each key is one
  /// conditional upsert, so two merges at once, on any number of servers, never lose a key.
  /// Nothing is written when the player's settings would take more than
  /// ``PlayerLimits/settingsBytes``.
  func mergeSettings(player: Player, _ settings: SettingsFile, limits: PlayerLimits) async throws -> SettingsMerge
  /// The player's settings, every key at its latest stamp; empty when they have none yet.
  func settings(player: Player) async throws -> SettingsFile
}

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

extension SaveBackend {
  /// Files smaller than this are stored whole (``PieceRules/smallestDelta``).
  package var smallestDelta: Int { PieceRules.smallestDelta }

  /// Stores a whole file (no delta to store instead).
  package func put(
    player: Player, precondition: WritePrecondition, loser: Int64?, metadata: RevisionMetadata, file: [UInt8],
    keep: Int, limits: PlayerLimits
  ) async throws -> PutOutcome {
    try await put(
      player: player, precondition: precondition, loser: loser, metadata: metadata, file: file, delta: nil, keep: keep,
      limits: limits)
  }
}
