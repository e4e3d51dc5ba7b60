import Foundation
import Stasis

// The server's storage, as small repositories over one database: each route's controller
// depends on the ones it uses, and a backend (SQLite, PostgreSQL) is all of them at once
// (``SaveBackend``). Everything the server knows is here, so any number of servers can share one
// backend. Each method is one transaction: an upload's `created` is returned only after it
// committed.

/// Players and their device tokens: who may use the API, and what the console shows of them.
package protocol PlayerRepository: Sendable {
  /// Adds a player with the SHA-256 of their token; refuses a name in use.
  func addPlayer(name: String, tokenHash: [UInt8], at time: Int64) async throws -> Player
  /// Every player, by name.
  func players() async throws -> [Player]
  /// Revokes a player's token; false when there is no such player.
  func revokePlayer(name: String) async throws -> Bool
  /// The unrevoked player whose token hashes to `tokenHash`.
  func player(tokenHash: [UInt8]) async throws -> Player?
  /// Players whose name contains `query` (any case), or whose id it is; by name, at most `limit`.
  func findPlayers(query: String, limit: Int) async throws -> [Player]
  /// A player by id.
  func player(id: Int64) async throws -> Player?
  /// The devices that uploaded the player's kept revisions, latest first.
  func devices(player: Player) async throws -> [PlayerDevice]
  /// The player's device tokens, oldest first.
  func tokens(player: Player) async throws -> [DeviceToken]
  /// Issues a device token (its SHA-256 kept) and records it.
  func issueToken(player: Player, label: String, tokenHash: [UInt8], audit: AuditDraft) async throws -> (
    DeviceToken, AuditEntry
  )
  /// Revokes a token of the player's and records it; nil when the player has no such unrevoked token.
  func revokeToken(player: Player, id: Int64, audit: AuditDraft) async throws -> AuditEntry?
}

/// Slots and their revisions: the upload rule (``put(player:precondition:loser:metadata:file:delta:keep:limits:)``),
/// reads, discards and deletes, and the pieces revisions are stored as.
package protocol RevisionRepository: Sendable {
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
  /// Files smaller than this are stored whole (``PieceRules/smallestDelta``, unless the backend
  /// was made with another): a requirement, so a controller holding the repository as an
  /// existential asks the backend, whose upload rule uses the same.
  var smallestDelta: Int { get }
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
  /// The bytes the slot's revisions take in storage: its pieces (whole files and deltas, the
  /// ones kept for a chain included) and the files of revisions stored before pieces.
  func storedBytes(player: Player, slot: String) async throws -> Int64
  /// The file a piece of the slot rebuilds; nil when the slot has no such piece.
  func pieceFile(player: Player, slot: String, piece: Int64) async throws -> [UInt8]?
}

/// Uploads in progress (`POST /v1/slots/{slot}/uploads`): resumable, in parts.
package protocol UploadRepository: Sendable {
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
}

/// The player's settings (15.6), key by key.
package protocol SettingsRepository: Sendable {
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

/// Desync bundles (issue 45) the player's devices sent, for the studio to read.
package protocol BundleRepository: Sendable {
  /// Stores a bundle, keeping the player's newest `keep` in the same transaction; a bundle the
  /// player sent before (the same bytes: a retry whose answer was lost) is not stored twice.
  /// Returns the stored bundle, and whether this call stored it.
  func addBundle(player: Player, _ draft: BundleDraft, keep: Int) async throws -> (StoredBundle, created: Bool)
  /// The player's bundles, newest first.
  func bundles(player: Player) async throws -> [StoredBundle]
  /// One of the player's bundles and its bytes; nil when the player has none by that id.
  func bundle(player: Player, id: Int64) async throws -> (StoredBundle, [UInt8])?
}

/// Replays (issue 45) the player's devices sent, for the studio to download.
package protocol ReplayRepository: Sendable {
  /// Stores a replay, or replaces the player's replay of that name (the last one sent is kept,
  /// as the device's own file is rewritten as it grows), keeping the player's `keep` most
  /// recently sent in the same transaction. Returns it, and whether its name was new.
  func putReplay(player: Player, _ draft: ReplayDraft, keep: Int) async throws -> (StoredReplay, created: Bool)
  /// The player's replays, most recently sent first.
  func replays(player: Player) async throws -> [StoredReplay]
  /// One of the player's replays and its bytes; nil when the player has none by that id.
  func replay(player: Player, id: Int64) async throws -> (StoredReplay, [UInt8])?
}

/// The studio console's staff, their API keys and sessions.
package protocol StaffRepository: Sendable {
  /// Adds a staff member with a bcrypt hash of their password; refuses a name in use.
  func addStaff(name: String, role: StaffRole, passwordHash: String, at time: Int64) async throws -> StaffMember
  /// Every staff member, by name.
  func staffMembers() async throws -> [StaffMember]
  /// A staff member and their password's bcrypt hash, by name (disabled ones included).
  func staffCredentials(name: String) async throws -> (StaffMember, passwordHash: String)?
  /// Sets a staff member's API key (its SHA-256), replacing the one before; false when there is no such member.
  func setStaffKey(name: String, keyHash: [UInt8]) async throws -> Bool
  /// The enabled staff member whose API key hashes to `keyHash`.
  func staff(keyHash: [UInt8]) async throws -> StaffMember?
  /// Disables a staff member and ends their sessions; false when there is no such member.
  func disableStaff(name: String) async throws -> Bool
  /// Records a session, and removes every session that ended before `time`.
  func createSession(
    idHash: [UInt8], staff: StaffMember, csrf: String, at time: Int64, expiresAt: Int64
  ) async throws
  /// The session whose id hashes to `idHash`, unless it ended by `time` or its member is disabled.
  func session(idHash: [UInt8], at time: Int64) async throws -> StaffSession?
  /// Ends a session.
  func endSession(idHash: [UInt8]) async throws
}

/// Staff actions that change a slot, each one transaction with its audit entry, so no change
/// goes unrecorded; and the audit log.
package protocol AuditRepository: Sendable {
  /// ``RevisionRepository/put(player:precondition:loser:metadata:file:delta:keep:limits:)`` and the
  /// audit entry of the staff action it is, in one transaction (the entry's `headAfter` is the
  /// new revision); no entry unless it was created.
  func staffPut(
    player: Player, precondition: WritePrecondition, loser: Int64?, metadata: RevisionMetadata, file: [UInt8],
    delta: StoredDelta?, keep: Int, limits: PlayerLimits, audit: AuditDraft
  ) async throws -> (PutOutcome, AuditEntry?)
  /// ``RevisionRepository/discard(player:slot:revision:)`` of a kept loser and its audit entry, in
  /// one transaction; a revision that is not a kept loser is `.notFound`.
  func staffDiscard(player: Player, slot: String, revision: Int64, audit: AuditDraft) async throws -> (
    DiscardOutcome, AuditEntry?
  )
  /// Appends an entry to the audit log (for actions that change nothing: sign-in, download).
  func appendAudit(_ draft: AuditDraft) async throws -> AuditEntry
  /// The audit log, newest first.
  func audit(_ filter: AuditFilter) async throws -> [AuditEntry]
  /// One entry.
  func auditEntry(id: Int64) async throws -> AuditEntry?
}

extension RevisionRepository {
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

/// What the studio (the console and the admin API) acts on: players, slots, staff, the audit
/// log and the players' desync bundles and replays.
package typealias StudioStorage = PlayerRepository & RevisionRepository & StaffRepository & AuditRepository
  & BundleRepository & ReplayRepository

/// A whole backend: every repository, over one database.
package protocol SaveBackend: PlayerRepository, RevisionRepository, UploadRepository, SettingsRepository,
  StaffRepository, AuditRepository, BundleRepository, ReplayRepository
{
  /// Checks the backend answers (for `/health`).
  func ping() async throws
}
