import Crypto
import Foundation
import HummingbirdBcrypt
import NIOPosix
@_spi(Plumbing) import Stasis
import StasisDelta
import Synchronization

/// What the studio's staff may do, with its rules in one place: the role each action needs,
/// and an audit entry for each change, written in the change's own transaction. The console's
/// pages, the admin API (`/v1/admin/…`) and `stasis-server admin …` all act through it.
package struct Studio: Sendable {
  let backend: any StudioStorage
  let options: ServerOptions
  let clock: @Sendable () -> Int64
  let throttle: SignInThrottle

  /// How long a console session lasts from sign-in.
  package static let sessionLength: Int64 = 8 * 60 * 60 * 1000

  /// A studio over `backend`, with the server's options and clock (milliseconds since the epoch).
  package init(
    backend: any StudioStorage, options: ServerOptions, clock: @escaping @Sendable () -> Int64 = nowMilliseconds
  ) {
    self.backend = backend
    self.options = options
    self.clock = clock
    self.throttle = SignInThrottle()
  }

  /// Refuses unless `staff` has at least `role`.
  func require(_ staff: StaffMember, _ role: StaffRole, to action: String) throws {
    guard staff.role >= role else {
      throw StudioError(
        .forbidden, "\(action) needs the \(role.rawValue) role; \(staff.name) is \(staff.role.rawValue)")
    }
  }

  // MARK: Signing in

  /// Checks a name and password, throttled per address and per account, and starts a session:
  /// its id (for the cookie; only its hash is stored) and its CSRF token.
  package func signIn(name: String, password: String, address: String) async throws -> (
    id: String, session: StaffSession
  ) {
    let now = clock()
    if let wait = throttle.wait(address: address, account: name, at: now) {
      throw StudioError(
        .tooManyRequests, "too many sign-in attempts; try again in \(max(1, (wait + 999) / 1000)) s",
        retryAfter: max(1, (wait + 999) / 1000))
    }
    // No staff name holds a NUL (and PostgreSQL refuses one in text).
    let found = name.utf8.contains(0) ? nil : try await backend.staffCredentials(name: name)
    // A missing name costs a bcrypt check too, so timing does not tell which names exist.
    let hash = found?.passwordHash
    let matches = try await NIOThreadPool.singleton.runIfActive {
      Bcrypt.verify(password, hash: hash ?? Self.decoyHash)
    }
    guard let (member, _) = found, matches, !member.disabled else {
      throw StudioError(.unauthorized, "the name or the password is wrong")
    }
    throttle.succeeded(account: name)
    let id = Self.randomToken()
    let session = StaffSession(staff: member, csrf: Self.randomToken(), expiresAt: now + Self.sessionLength)
    try await backend.createSession(
      idHash: BearerToken.hash(id), staff: member, csrf: session.csrf, at: now, expiresAt: session.expiresAt)
    _ = try await backend.appendAudit(AuditDraft(at: now, staff: member, action: .signIn))
    return (id, session)
  }

  /// The session a cookie's id names, unless it ended.
  package func session(id: String) async throws -> StaffSession? {
    try await backend.session(idHash: BearerToken.hash(id), at: clock())
  }

  /// Ends a session.
  package func signOut(id: String, staff: StaffMember) async throws {
    try await backend.endSession(idHash: BearerToken.hash(id))
    _ = try await backend.appendAudit(AuditDraft(at: clock(), staff: staff, action: .signOut))
  }

  /// The staff member an API key names.
  package func staff(key: String) async throws -> StaffMember? {
    try await backend.staff(keyHash: BearerToken.hash(key))
  }

  // MARK: Reading

  /// Players by name or id.
  package func findPlayers(_ query: String) async throws -> [Player] {
    let trimmed = try Self.text(query, "a search").trimmingCharacters(in: .whitespaces)
    guard !trimmed.isEmpty else { return try await Array(backend.players().prefix(50)) }
    return try await backend.findPlayers(query: trimmed, limit: 50)
  }

  /// A player, or `notFound`.
  package func player(id: Int64) async throws -> Player {
    guard let player = try await backend.player(id: id) else {
      throw StudioError(.notFound, "no player with id \(id)")
    }
    return player
  }

  /// A player's slots (their heads), devices and device tokens.
  package func overview(of player: Player) async throws -> PlayerOverview {
    async let slots = backend.slots(player: player)
    async let devices = backend.devices(player: player)
    async let tokens = backend.tokens(player: player)
    return try await PlayerOverview(player: player, slots: slots, devices: devices, tokens: tokens)
  }

  /// A slot's revisions, newest first, each with what it is: the head, a kept loser (and to
  /// what it lost), a merge's input, a restore's copy.
  package func history(of player: Player, slot: String) async throws -> SlotHistory {
    guard let revisions = try await backend.revisions(player: player, slot: slot),
      let head = try await backend.head(player: player, slot: slot)
    else { throw StudioError(.notFound, "\(player.name) has no slot '\(slot)'") }
    let entries = try await backend.audit(AuditFilter(player: player.name, limit: 1000)).filter {
      $0.slot == slot && $0.playerId == player.id
    }
    return SlotHistory(player: player, slot: slot, head: head.revision, revisions: revisions, audit: entries)
  }

  /// A revision's metadata and bytes.
  package func file(of player: Player, slot: String, revision: Int64) async throws -> (RevisionMetadata, [UInt8]) {
    guard let found = try await backend.file(player: player, slot: slot, revision: revision) else {
      throw StudioError(.notFound, "slot '\(slot)' of \(player.name) has no revision \(revision)")
    }
    return found
  }

  /// A revision's file, for download: recorded in the audit log.
  package func download(_ staff: StaffMember, player: Player, slot: String, revision: Int64) async throws -> (
    RevisionMetadata, [UInt8]
  ) {
    let found = try await file(of: player, slot: slot, revision: revision)
    _ = try await backend.appendAudit(
      AuditDraft(at: clock(), staff: staff, action: .download, player: player, slot: slot, revision: revision))
    return found
  }

  /// The player's desync bundles, newest first.
  package func bundles(of player: Player) async throws -> [StoredBundle] {
    try await backend.bundles(player: player)
  }

  /// One of the player's desync bundles and its bytes.
  package func bundle(of player: Player, id: Int64) async throws -> (StoredBundle, [UInt8]) {
    guard let found = try await backend.bundle(player: player, id: id) else {
      throw StudioError(.notFound, "\(player.name) has no desync bundle \(id)")
    }
    return found
  }

  /// A desync bundle's file, for download: recorded in the audit log (the entry's revision is
  /// the bundle's id).
  package func downloadBundle(_ staff: StaffMember, player: Player, id: Int64) async throws -> (StoredBundle, [UInt8]) {
    let found = try await bundle(of: player, id: id)
    _ = try await backend.appendAudit(
      AuditDraft(at: clock(), staff: staff, action: .downloadBundle, player: player, revision: id))
    return found
  }

  /// The player's replays, most recently sent first.
  package func replays(of player: Player) async throws -> [StoredReplay] {
    try await backend.replays(player: player)
  }

  /// A replay's file, for download: recorded in the audit log (the entry's revision is the
  /// replay's id).
  package func downloadReplay(_ staff: StaffMember, player: Player, id: Int64) async throws -> (StoredReplay, [UInt8]) {
    guard let found = try await backend.replay(player: player, id: id) else {
      throw StudioError(.notFound, "\(player.name) has no replay \(id)")
    }
    _ = try await backend.appendAudit(
      AuditDraft(at: clock(), staff: staff, action: .downloadReplay, player: player, revision: id))
    return found
  }

  /// The audit log.
  package func audit(_ filter: AuditFilter) async throws -> [AuditEntry] {
    _ = try Self.text(filter.player ?? "", "a player's name")
    _ = try Self.text(filter.staff ?? "", "a staff member's name")
    return try await backend.audit(filter)
  }

  // MARK: Restoring

  /// Makes `revision` the slot's head again: a new revision on top with its bytes, written
  /// with the same conditional write as a device's upload (`expectedHead`, the head the staff
  /// member saw; the current one when nil). The head it replaces is kept, as a conflict's loser
  /// is, until an admin discards it. A device's upload that lands first makes this `stale`.
  package func restore(
    _ staff: StaffMember, player: Player, slot: String, revision: Int64, expectedHead: Int64?, reason: String
  ) async throws -> RestoreResult {
    try require(staff, .support, to: "restoring a revision")
    let reason = try Self.reason(reason)
    let (source, bytes) = try await file(of: player, slot: slot, revision: revision)
    guard let head = try await backend.head(player: player, slot: slot) else {
      throw StudioError(.notFound, "\(player.name) has no slot '\(slot)'")
    }
    let expected = expectedHead ?? head.revision
    guard head.revision == expected else { throw Self.moved(head: head.revision, expected: expected) }
    guard revision != head.revision else {
      throw StudioError(.conflict, "revision \(revision) is the head of slot '\(slot)' already")
    }
    return try await put(
      staff, player: player, slot: slot, source: source, bytes: bytes, head: head, keepReplaced: true,
      audit: AuditDraft(
        at: clock(), staff: staff, action: .restore, player: player, slot: slot, revision: revision,
        headBefore: head.revision, reason: reason))
  }

  /// Undoes a restore from its audit entry: the head before it, as a new revision on top,
  /// while the slot's head is still the restore's. Once a device has saved over the restore,
  /// undoing it would hide that save: restore the revision wanted instead.
  package func undo(_ staff: StaffMember, entry id: Int64, reason: String) async throws -> RestoreResult {
    try require(staff, .support, to: "undoing a restore")
    let reason = try Self.reason(reason)
    guard let entry = try await backend.auditEntry(id: id) else {
      throw StudioError(.notFound, "no audit entry #\(id)")
    }
    guard entry.action == .restore || entry.action == .undo, let playerId = entry.playerId, let slot = entry.slot,
      let before = entry.headBefore, let after = entry.headAfter
    else { throw StudioError(.conflict, "entry #\(id) is a \(entry.action.rawValue), not a restore") }
    if let undoneBy = entry.undoneBy {
      throw StudioError(.conflict, "entry #\(id) was undone already, by #\(undoneBy)")
    }
    let player = try await self.player(id: playerId)
    guard let head = try await backend.head(player: player, slot: slot) else {
      throw StudioError(.notFound, "\(player.name) has no slot '\(slot)'")
    }
    guard head.revision == after else {
      throw StudioError(
        .conflict,
        "slot '\(slot)' moved on since #\(id): its head is r\(head.revision), not r\(after); "
          + "restore the revision wanted instead")
    }
    guard let (source, bytes) = try await backend.file(player: player, slot: slot, revision: before) else {
      throw StudioError(.conflict, "r\(before), the head before #\(id), was discarded since; nothing to put back")
    }
    return try await put(
      staff, player: player, slot: slot, source: source, bytes: bytes, head: head, keepReplaced: false,
      audit: AuditDraft(
        at: clock(), staff: staff, action: .undo, player: player, slot: slot, revision: before,
        headBefore: head.revision, reason: reason, undoes: id))
  }

  private func put(
    _ staff: StaffMember, player: Player, slot: String, source: RevisionMetadata, bytes: [UInt8],
    head: RevisionMetadata, keepReplaced: Bool, audit: AuditDraft
  ) async throws -> RestoreResult {
    var metadata = source
    metadata.revision = 0
    metadata.baseRevision = head.revision
    // The restore continues the head it replaces: a device that saved on that head merges
    // its own changes onto the restore, not onto the older state.
    metadata.parent = head.revision
    metadata.uploadedAt = audit.at
    metadata.device = "console (\(staff.name))"
    metadata.lostTo = nil
    metadata.piece = nil
    var delta: StoredDelta?
    if bytes.count >= backend.smallestDelta, let piece = head.piece,
      let (_, headBytes) = try await backend.file(player: player, slot: slot, revision: head.revision)
    {
      delta = StoredDelta(basePiece: piece, bytes: SaveDelta.make(from: headBytes, to: bytes))
    }
    let (outcome, entry) = try await backend.staffPut(
      player: player, precondition: .head(head.revision), loser: keepReplaced ? head.revision : nil,
      metadata: metadata, file: bytes, delta: delta, keep: options.keepRevisions, limits: options.limits,
      audit: audit)
    switch outcome {
    case .created(let stored):
      guard let entry else { throw StudioError(.conflict, "the restore was stored without its audit entry") }
      return RestoreResult(revision: stored, entry: entry)
    case .stale(let now):
      throw Self.moved(head: now?.revision, expected: head.revision)
    case .overLimit(let message), .tooManySlots(let message):
      throw StudioError(.conflict, message)
    case .unknownLoser(let loser):
      throw StudioError(.conflict, "r\(loser) is gone from slot '\(slot)'")
    }
  }

  private static func moved(head: Int64?, expected: Int64) -> StudioError {
    StudioError(
      .preconditionFailed,
      "the slot's head is \(head.map { "r\($0)" } ?? "gone"), not r\(expected): a device saved meanwhile; "
        + "look at the history again")
  }

  // MARK: Discarding

  /// Deletes a kept loser for good, only for an admin, who names it (`confirm` is `SLOT rN`).
  package func discard(
    _ staff: StaffMember, player: Player, slot: String, revision: Int64, confirm: String, reason: String
  ) async throws -> AuditEntry {
    try require(staff, .admin, to: "discarding a kept revision")
    let name = "\(slot) r\(revision)"
    guard confirm.trimmingCharacters(in: .whitespaces) == name else {
      throw StudioError(.badRequest, "to discard it, confirm with its name: \(name)")
    }
    let reason = try Self.reason(reason)
    let head = try await backend.head(player: player, slot: slot)
    let (outcome, entry) = try await backend.staffDiscard(
      player: player, slot: slot, revision: revision,
      audit: AuditDraft(
        at: clock(), staff: staff, action: .discard, player: player, slot: slot, revision: revision,
        headBefore: head?.revision, headAfter: head?.revision, reason: reason))
    switch outcome {
    case .discarded:
      guard let entry else { throw StudioError(.conflict, "the discard was made without its audit entry") }
      return entry
    case .head: throw StudioError(.conflict, "r\(revision) is the head of slot '\(slot)'; a head is never discarded")
    case .notFound: throw StudioError(.notFound, "slot '\(slot)' of \(player.name) has no kept revision \(revision)")
    }
  }

  // MARK: Device tokens

  /// Issues a device token: its secret is returned once and never kept.
  package func issueToken(_ staff: StaffMember, player: Player, label: String, reason: String) async throws -> (
    secret: String, token: DeviceToken, entry: AuditEntry
  ) {
    try require(staff, .support, to: "issuing a device token")
    let label = try Self.text(label, "a label").trimmingCharacters(in: .whitespacesAndNewlines)
    guard !label.isEmpty, label.utf8.count <= 64 else {
      throw StudioError(.badRequest, "a token's label is 1-64 bytes, such as \"Alice's new phone\"")
    }
    let reason = try Self.reason(reason)
    let secret = BearerToken.generate()
    let (token, entry) = try await backend.issueToken(
      player: player, label: label, tokenHash: BearerToken.hash(secret),
      audit: AuditDraft(at: clock(), staff: staff, action: .issueToken, player: player, reason: reason))
    return (secret, token, entry)
  }

  /// Revokes one of the player's device tokens.
  package func revokeToken(_ staff: StaffMember, player: Player, id: Int64, reason: String) async throws -> AuditEntry {
    try require(staff, .support, to: "revoking a device token")
    let reason = try Self.reason(reason)
    guard
      let entry = try await backend.revokeToken(
        player: player, id: id,
        audit: AuditDraft(at: clock(), staff: staff, action: .revokeToken, player: player, reason: reason))
    else { throw StudioError(.notFound, "\(player.name) has no active token \(id)") }
    return entry
  }

  // MARK: Helpers

  /// `text`, unless it holds a NUL, which no name or reason has (and PostgreSQL refuses in text).
  static func text(_ text: String, _ what: String) throws -> String {
    guard !text.utf8.contains(0) else { throw StudioError(.badRequest, "\(what) may not contain NUL") }
    return text
  }

  static func reason(_ text: String) throws -> String {
    let reason = try Self.text(text, "a reason").trimmingCharacters(in: .whitespacesAndNewlines)
    guard !reason.isEmpty, reason.utf8.count <= 500 else {
      throw StudioError(.badRequest, "give a reason (up to 500 bytes), such as the ticket's number")
    }
    return reason
  }

  /// 32 random bytes, base64url: a session id, a CSRF token.
  static func randomToken() -> String { BearerToken.generate() }

  /// What a sign-in with an unknown name is checked against (the hash of a random password),
  /// made on the thread pool the first time it is needed.
  static let decoyHash = Bcrypt.hash(BearerToken.generate(), cost: 12)

  /// Compares two secrets in time that does not depend on where they differ.
  static func same(_ a: String, _ b: String) -> Bool {
    let left = Array(a.utf8)
    let right = Array(b.utf8)
    guard left.count == right.count else { return false }
    var difference: UInt8 = 0
    for index in left.indices { difference |= left[index] ^ right[index] }
    return difference == 0
  }
}

/// A player, their slots' heads, devices and device tokens.
package struct PlayerOverview: Sendable {
  /// The player.
  package var player: Player
  /// Each slot's head, by slot name.
  package var slots: [RevisionMetadata]
  /// The devices that uploaded their kept revisions.
  package var devices: [PlayerDevice]
  /// Their device tokens.
  package var tokens: [DeviceToken]
}

/// A slot's history: its revisions, newest first, and the staff actions on it.
package struct SlotHistory: Sendable {
  /// The player.
  package var player: Player
  /// The slot.
  package var slot: String
  /// The head revision.
  package var head: Int64
  /// Every revision the server keeps, newest first.
  package var revisions: [RevisionMetadata]
  /// The audit entries about the slot, newest first.
  package var audit: [AuditEntry]

  /// What a revision is, in a few words: the head, a kept loser and to what it lost, a
  /// merge's input, a restore's or an undo's copy.
  package func roles(of revision: RevisionMetadata) -> [String] {
    var roles: [String] = []
    if revision.revision == head { roles.append("head") }
    if let entry = audit.first(where: { $0.headAfter == revision.revision && $0.action != .discard }) {
      let verb = entry.action == .undo ? "undo of #\(entry.undoes ?? 0)" : "restore"
      roles.append("\(verb): a copy of r\(entry.revision ?? 0) by \(entry.staff)")
    }
    if let winner = revision.lostTo {
      let replacedBy = audit.first { $0.headAfter == winner && $0.action == .restore }
      roles.append(replacedBy != nil ? "kept: replaced by restore r\(winner)" : "kept loser: lost to r\(winner)")
    }
    // A conflict's loser went into its resolution only when the resolution continues it
    // (`X-Stasis-Parent` names the loser: a merge, or a state the game made from both). A side
    // taken whole continues that side's own history (or none), so the loser only lost to it.
    // An upload that names no parent continues its base, which is the loser for every client
    // since the header: an older client's side taken whole reads as a merge, and cannot be told apart.
    if let winner = revision.lostTo, let resolution = revisions.first(where: { $0.revision == winner }),
      resolution.parent == revision.revision, !audit.contains(where: { $0.headAfter == winner })
    {
      roles.append("input of merge r\(winner)")
    }
    return roles
  }
}

/// A restore's (or an undo's) new head and its audit entry.
package struct RestoreResult: Sendable {
  /// The new head.
  package var revision: RevisionMetadata
  /// The audit entry recording it.
  package var entry: AuditEntry
}

/// Why a staff action was refused, with the HTTP status the API and the console answer.
package struct StudioError: Error, Sendable, CustomStringConvertible {
  /// The kinds, by their HTTP status.
  package enum Kind: Int, Sendable {
    /// 400.
    case badRequest = 400
    /// 401.
    case unauthorized = 401
    /// 403.
    case forbidden = 403
    /// 404.
    case notFound = 404
    /// 409.
    case conflict = 409
    /// 412.
    case preconditionFailed = 412
    /// 429.
    case tooManyRequests = 429
  }

  /// What kind.
  package var kind: Kind
  /// One line.
  package var description: String
  /// Seconds to wait (a throttled sign-in).
  package var retryAfter: Int64?

  /// Creates an error.
  package init(_ kind: Kind, _ description: String, retryAfter: Int64? = nil) {
    self.kind = kind
    self.description = description
    self.retryAfter = retryAfter
  }
}

/// Throttles signing in, in memory: per address, a bucket of 10 attempts that refills one
/// every 6 s; per account, 5 failed attempts lock it for 15 minutes from the first. (Each
/// server process keeps its own: with N servers, N times as many attempts get through.)
final class SignInThrottle: Sendable {
  static let addressBurst = 10.0
  static let addressRefillMilliseconds = 6_000.0
  static let accountFailures = 5
  static let accountWindow: Int64 = 15 * 60 * 1000

  private struct State {
    var addresses: [String: (tokens: Double, at: Int64)] = [:]
    var accounts: [String: (failures: Int, since: Int64)] = [:]
  }
  private let state = Mutex(State())

  /// Milliseconds to wait before this attempt may be made; nil when it may be made now: then
  /// the address's bucket pays for it, and it counts as a failure of the account's until
  /// ``succeeded(account:)`` says otherwise. Counted before the password is checked, so
  /// attempts sent in parallel cannot all pass the check while the first ones are hashed.
  func wait(address: String, account: String, at now: Int64) -> Int64? {
    state.withLock { state in
      if let locked = state.accounts[account], locked.failures >= Self.accountFailures {
        let end = locked.since + Self.accountWindow
        if now < end { return end - now }
        state.accounts[account] = nil
      }
      var bucket = state.addresses[address] ?? (Self.addressBurst, now)
      bucket.tokens = min(Self.addressBurst, bucket.tokens + Double(now - bucket.at) / Self.addressRefillMilliseconds)
      bucket.at = now
      guard bucket.tokens >= 1 else {
        state.addresses[address] = bucket
        return Int64(((1 - bucket.tokens) * Self.addressRefillMilliseconds).rounded(.up))
      }
      bucket.tokens -= 1
      state.addresses[address] = bucket
      var record = state.accounts[account] ?? (0, now)
      if now - record.since >= Self.accountWindow { record = (0, now) }
      record.failures += 1
      state.accounts[account] = record
      // Bounded: past 100,000 entries, those that no longer hold anything back go.
      if state.addresses.count > 100_000 {
        state.addresses = state.addresses.filter {
          min(Self.addressBurst, $0.value.tokens + Double(now - $0.value.at) / Self.addressRefillMilliseconds) < 1
        }
      }
      if state.accounts.count > 100_000 {
        state.accounts = state.accounts.filter {
          $0.value.failures >= Self.accountFailures && now - $0.value.since < Self.accountWindow
        }
      }
      return nil
    }
  }

  func succeeded(account: String) { state.withLock { $0.accounts[account] = nil } }
}
