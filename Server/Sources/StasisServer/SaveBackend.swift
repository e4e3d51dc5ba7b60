import Foundation

/// A player: a name, the hash of their bearer token, and whether the token was revoked.
public struct Player: Sendable, Equatable {
  /// The database's id for the player.
  public var id: Int64
  /// The name given to `stasis-server players add`.
  public var name: String
  /// When the player was added, in milliseconds since the Unix epoch.
  public var createdAt: Int64
  /// True once `players revoke` ran: the token no longer opens anything.
  public var revoked: Bool

  /// Creates a player record.
  public init(id: Int64, name: String, createdAt: Int64, revoked: Bool) {
    self.id = id
    self.name = name
    self.createdAt = createdAt
    self.revoked = revoked
  }
}

/// What the server keeps about one revision besides its bytes: what the upload said and what
/// the save's header says. Listing reads these columns only, never the file bytes.
public struct RevisionMetadata: Sendable, Equatable {
  /// The slot.
  public var slot: String
  /// The revision number: 1, 2, 3, … per slot, never reused, even after a delete.
  public var revision: Int64
  /// The revision the upload was based on (`If-Match`), or nil for a creation.
  public var baseRevision: Int64?
  /// The file's size in bytes.
  public var bytes: Int64
  /// The file's SHA-256, lowercase hex.
  public var sha256: String
  /// When the server stored it, in milliseconds since the Unix epoch.
  public var uploadedAt: Int64
  /// The device that wrote the save (from its header; the `X-Stasis-Device` header when empty).
  public var device: String
  /// From the save's header: the game's name, build and schema version.
  public var game: String
  /// The game's build.
  public var build: String
  /// The game's state schema version.
  public var schema: Int64
  /// When the save was made, in milliseconds since the Unix epoch.
  public var createdAt: Int64
  /// Play time in seconds.
  public var playTime: Double
  /// Progress from 0 to 1, when the game records one.
  public var progress: Double?
  /// The game's own summary as JSON text (`null` when none).
  public var summaryJSON: String
  /// The revision uploaded over this one as a conflict's resolution, when this one lost that
  /// conflict: it is kept out of pruning until it is discarded. Nil for every other revision.
  public var lostTo: Int64?

  /// True when the revision is kept out of pruning (it lost a conflict).
  public var isKept: Bool { lostTo != nil }

  /// Why the revision is kept, in one line; nil when it is not.
  public var keptReason: String? {
    lostTo.map { "lost a conflict to r\($0); kept until discarded" }
  }

  /// Creates metadata.
  public init(
    slot: String, revision: Int64, baseRevision: Int64?, bytes: Int64, sha256: String, uploadedAt: Int64,
    device: String, game: String, build: String, schema: Int64, createdAt: Int64, playTime: Double,
    progress: Double?, summaryJSON: String, lostTo: Int64? = nil
  ) {
    self.slot = slot
    self.revision = revision
    self.baseRevision = baseRevision
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

/// The precondition an upload or a delete carries.
public enum WritePrecondition: Sendable, Equatable {
  /// `If-None-Match: *`: the slot must not exist (it may have existed and been deleted).
  case create
  /// `If-Match: "N"`: the slot's head must be revision N.
  case head(Int64)
}

/// Per-player limits, checked inside the transaction that would exceed them.
public struct PlayerLimits: Sendable, Equatable {
  /// Bytes of all the player's stored revisions together.
  public var totalBytes: Int64
  /// Slots the player may have.
  public var slots: Int
  /// The largest upload, in bytes.
  public var bodyBytes: Int

  /// Creates limits; the defaults suit a game whose saves are up to a few MB.
  public init(totalBytes: Int64 = 256 << 20, slots: Int = 100, bodyBytes: Int = 16 << 20) {
    self.totalBytes = totalBytes
    self.slots = slots
    self.bodyBytes = bodyBytes
  }
}

/// What became of an upload.
public enum PutOutcome: Sendable, Equatable {
  /// Stored and committed.
  case created(RevisionMetadata)
  /// The precondition did not hold: the head is this (nil when the slot does not exist).
  case stale(head: RevisionMetadata?)
  /// Storing it would pass the player's bytes limit; the message says by how much.
  case overLimit(String)
  /// It would be a slot past the player's slot limit.
  case tooManySlots(String)
  /// The conflict's loser the upload named is not a revision of the slot.
  case unknownLoser(Int64)
}

/// What became of a delete.
public enum DeleteOutcome: Sendable, Equatable {
  /// The slot and its revisions are gone; its revision numbers are not reused.
  case deleted
  /// The precondition did not hold.
  case stale(head: RevisionMetadata)
  /// No such slot.
  case notFound
}

/// What became of discarding one revision.
public enum DiscardOutcome: Sendable, Equatable {
  /// The revision and its bytes are gone; its number is not reused.
  case discarded
  /// The revision is the slot's head: a head is never discarded (delete the slot instead).
  case head
  /// No such slot or revision.
  case notFound
}

/// A player name that `players add` refuses, or one that does not exist.
public struct PlayerError: Error, Sendable, Equatable, CustomStringConvertible {
  /// One line.
  public var description: String

  /// Creates an error.
  public init(_ description: String) { self.description = description }
}

/// Where the server keeps players, slots and revisions. Everything the server knows is here,
/// so any number of servers can share one backend. Each method is one transaction: an
/// upload's `created` is returned only after it committed.
public protocol SaveBackend: Sendable {
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
  func put(
    player: Player, precondition: WritePrecondition, loser: Int64?, metadata: RevisionMetadata, file: [UInt8],
    keep: Int, limits: PlayerLimits
  ) async throws -> PutOutcome
  /// The head's metadata, or nil for an unknown (or deleted) slot.
  func head(player: Player, slot: String) async throws -> RevisionMetadata?
  /// A revision's metadata and bytes (the head when `revision` is nil).
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
}
