import Foundation

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
