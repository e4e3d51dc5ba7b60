/// What the server keeps about one revision besides its bytes: what the upload said and what
/// the save's header says. Listing reads these columns only, never the file bytes.
package struct RevisionMetadata: Sendable, Equatable {
  /// The slot.
  package var slot: String
  /// The revision number: 1, 2, 3, … per slot, never reused, even after a delete.
  package var revision: Int64
  /// The revision the upload was based on (`If-Match`), or nil for a creation.
  package var baseRevision: Int64?
  /// The revision whose state this one continues (`X-Stasis-Parent`), or nil when it continues
  /// none on this server (a history begun on its own: a new game, a device that played
  /// offline before it ever synced). By default the base: an upload that names no parent
  /// continues the head it was written on. When a revision is pruned or discarded, the
  /// revisions it was the parent of take its parent, so the chain among the revisions the
  /// server still has stays exact. A client merges three ways only against an ancestor of both sides.
  package var parent: Int64?
  /// The file's size in bytes.
  package var bytes: Int64
  /// The file's SHA-256, lowercase hex.
  package var sha256: String
  /// When the server stored it, in milliseconds since the Unix epoch.
  package var uploadedAt: Int64
  /// The device that wrote the save (from its header; the `X-Stasis-Device` header when empty).
  package var device: String
  /// From the save's header: the game's name, build and schema version.
  package var game: String
  /// The game's build.
  package var build: String
  /// The game's state schema version.
  package var schema: Int64
  /// When the save was made, in milliseconds since the Unix epoch.
  package var createdAt: Int64
  /// Play time in seconds.
  package var playTime: Double
  /// Progress from 0 to 1, when the game records one.
  package var progress: Double?
  /// The game's own summary as JSON text (`null` when none).
  package var summaryJSON: String
  /// The revision uploaded over this one as a conflict's resolution, when this one lost that
  /// conflict: it is kept out of pruning until it is discarded. Nil for every other revision.
  package var lostTo: Int64?

  /// The stored piece that rebuilds the file (``PieceRules``); nil for a revision stored before
  /// pieces, whose bytes are whole in its own row.
  var piece: Int64?

  /// True when the revision is kept out of pruning (it lost a conflict).
  package var isKept: Bool { lostTo != nil }

  /// Why the revision is kept, in one line; nil when it is not.
  package var keptReason: String? {
    lostTo.map { "lost a conflict to r\($0); kept until discarded" }
  }

  /// Creates metadata.
  package init(
    slot: String, revision: Int64, baseRevision: Int64?, bytes: Int64, sha256: String, uploadedAt: Int64,
    device: String, game: String, build: String, schema: Int64, createdAt: Int64, playTime: Double,
    progress: Double?, summaryJSON: String, lostTo: Int64? = nil
  ) {
    self.slot = slot
    self.revision = revision
    self.baseRevision = baseRevision
    self.parent = baseRevision
    self.bytes = bytes
    self.sha256 = sha256
    self.uploadedAt = uploadedAt
    self.device = device
    self.game = game
    self.build = build
    self.schema = schema
    self.createdAt = createdAt
    self.playTime = playTime
    self.progress = progress
    self.summaryJSON = summaryJSON
    self.lostTo = lostTo
  }
}
