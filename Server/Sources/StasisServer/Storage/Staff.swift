import Foundation

/// What a staff member may do in the studio console and the admin API. Each role may do what
/// the one before it may, and more.
package enum StaffRole: String, Sendable, CaseIterable, Comparable, Codable {
  /// Reads players, slots, revisions, differences, device tokens and the audit log.
  case viewer
  /// And restores a revision, undoes a restore, issues and revokes device tokens.
  case support
  /// And discards a kept loser.
  case admin

  private var rank: Int {
    switch self {
    case .viewer: 0
    case .support: 1
    case .admin: 2
    }
  }

  package static func < (lhs: StaffRole, rhs: StaffRole) -> Bool { lhs.rank < rhs.rank }
}

/// A member of the studio's staff: a console account, apart from the players' device tokens.
package struct StaffMember: Sendable, Equatable {
  /// The database's id.
  package var id: Int64
  /// The name given to `stasis-server staff add`.
  package var name: String
  /// What they may do.
  package var role: StaffRole
  /// When they were added, in milliseconds since the Unix epoch.
  package var createdAt: Int64
  /// True once `staff remove` ran: they can no longer sign in, and their sessions and key end.
  package var disabled: Bool

  /// Creates a staff record.
  package init(id: Int64, name: String, role: StaffRole, createdAt: Int64, disabled: Bool = false) {
    self.id = id
    self.name = name
    self.role = role
    self.createdAt = createdAt
    self.disabled = disabled
  }
}

/// A signed-in console session. The cookie holds a random id; the database keeps its SHA-256.
package struct StaffSession: Sendable, Equatable {
  /// Who is signed in.
  package var staff: StaffMember
  /// The token every form of the session carries (compared in constant time).
  package var csrf: String
  /// When it ends, in milliseconds since the Unix epoch.
  package var expiresAt: Int64
}

/// A player's device token, as the console shows it: never its secret, which the server
/// never kept, only a fingerprint of its hash.
package struct DeviceToken: Sendable, Equatable {
  /// The database's id (what `revoke` names).
  package var id: Int64
  /// The player's id.
  package var playerId: Int64
  /// Who or what it was issued for ("first token", "Alice's phone").
  package var label: String
  /// The first 8 hex digits of the token's SHA-256: enough to tell two apart, nothing to sign in with.
  package var fingerprint: String
  /// When it was issued, in milliseconds since the Unix epoch.
  package var createdAt: Int64
  /// When it was revoked; nil while it opens the player's saves.
  package var revokedAt: Int64?

  /// Creates a token record.
  package init(id: Int64, playerId: Int64, label: String, fingerprint: String, createdAt: Int64, revokedAt: Int64?) {
    self.id = id
    self.playerId = playerId
    self.label = label
    self.fingerprint = fingerprint
    self.createdAt = createdAt
    self.revokedAt = revokedAt
  }
}

/// A device that uploaded revisions the server keeps for a player.
package struct PlayerDevice: Sendable, Equatable {
  /// The device's name, from its saves' headers.
  package var name: String
  /// Revisions of it the server keeps.
  package var revisions: Int64
  /// Its latest upload, in milliseconds since the Unix epoch.
  package var lastUpload: Int64
}

/// What a staff member did, as the audit log records it.
package enum AuditAction: String, Sendable, CaseIterable, Codable {
  /// Signed in to the console.
  case signIn = "sign-in"
  /// Signed out.
  case signOut = "sign-out"
  /// Made a kept revision the head again, as a new revision on top.
  case restore
  /// Undid a restore: the head before it, as a new revision on top.
  case undo
  /// Discarded a kept loser.
  case discard
  /// Downloaded a revision's file.
  case download
  /// Downloaded a player's desync bundle (the entry's revision is the bundle's id).
  case downloadBundle = "download-bundle"
  /// Downloaded a player's replay (the entry's revision is the replay's id).
  case downloadReplay = "download-replay"
  /// Issued a device token to a player.
  case issueToken = "issue-token"
  /// Revoked a player's device token.
  case revokeToken = "revoke-token"
}

/// An entry to append to the audit log: everything but its id and the staff member's name.
package struct AuditDraft: Sendable, Equatable {
  /// When, in milliseconds since the Unix epoch.
  package var at: Int64
  /// Who.
  package var staff: StaffMember
  /// What.
  package var action: AuditAction
  /// The player acted on.
  package var player: Player?
  /// The slot acted on.
  package var slot: String?
  /// The revision acted on: restored, discarded, downloaded; a token's id for token actions; a
  /// desync bundle's or a replay's id for its download.
  package var revision: Int64?
  /// The slot's head before the action.
  package var headBefore: Int64?
  /// The slot's head after it (filled in by the backend when the action makes a revision).
  package var headAfter: Int64?
  /// Why, in the staff member's words.
  package var reason: String
  /// The entry this one undoes.
  package var undoes: Int64?

  /// Creates a draft.
  package init(
    at: Int64, staff: StaffMember, action: AuditAction, player: Player? = nil, slot: String? = nil,
    revision: Int64? = nil, headBefore: Int64? = nil, headAfter: Int64? = nil, reason: String = "",
    undoes: Int64? = nil
  ) {
    self.at = at
    self.staff = staff
    self.action = action
    self.player = player
    self.slot = slot
    self.revision = revision
    self.headBefore = headBefore
    self.headAfter = headAfter
    self.reason = reason
    self.undoes = undoes
  }
}

/// One entry of the append-only audit log.
package struct AuditEntry: Sendable, Equatable {
  /// Its number: entries are numbered in the order they were appended.
  package var id: Int64
  /// When, in milliseconds since the Unix epoch.
  package var at: Int64
  /// Who (their name when it was recorded).
  package var staff: String
  /// What.
  package var action: AuditAction
  /// The player's id and name, when the action was on a player.
  package var playerId: Int64?
  /// The player's name when it was recorded.
  package var player: String?
  /// The slot.
  package var slot: String?
  /// The revision (or token id) acted on.
  package var revision: Int64?
  /// The head before.
  package var headBefore: Int64?
  /// The head after.
  package var headAfter: Int64?
  /// Why.
  package var reason: String
  /// The entry this one undoes.
  package var undoes: Int64?
  /// The entry that undid this one, when one did.
  package var undoneBy: Int64?

  /// Creates an entry.
  package init(
    id: Int64, at: Int64, staff: String, action: AuditAction, playerId: Int64?, player: String?, slot: String?,
    revision: Int64?, headBefore: Int64?, headAfter: Int64?, reason: String, undoes: Int64?, undoneBy: Int64?
  ) {
    self.id = id
    self.at = at
    self.staff = staff
    self.action = action
    self.playerId = playerId
    self.player = player
    self.slot = slot
    self.revision = revision
    self.headBefore = headBefore
    self.headAfter = headAfter
    self.reason = reason
    self.undoes = undoes
    self.undoneBy = undoneBy
  }
}

/// Which audit entries to list: newest first, at most `limit`.
package struct AuditFilter: Sendable, Equatable {
  /// Only entries about this player (by name).
  package var player: String?
  /// Only entries by this staff member (by name).
  package var staff: String?
  /// Only entries older than this id (the next page).
  package var before: Int64?
  /// At most this many.
  package var limit: Int

  /// Creates a filter.
  package init(player: String? = nil, staff: String? = nil, before: Int64? = nil, limit: Int = 100) {
    self.player = player
    self.staff = staff
    self.before = before
    self.limit = limit
  }
}

/// A staff name that `staff add` refuses, or an action the backend refuses.
package struct StaffError: Error, Sendable, Equatable, CustomStringConvertible {
  /// One line.
  package var description: String

  /// Creates an error.
  package init(_ description: String) { self.description = description }
}

extension DeviceToken {
  /// The fingerprint of a token's stored hash.
  static func fingerprint(_ hash: [UInt8]) -> String {
    hash.prefix(4).map { String(format: "%02x", $0) }.joined()
  }
}
