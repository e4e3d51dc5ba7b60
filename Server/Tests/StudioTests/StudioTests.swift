import Foundation
import GRDB
import HummingbirdBcrypt
import StasisTesting
import Synchronization
import Testing

@testable import StasisServer

/// A clock the test moves, in milliseconds.
final class TestClock: Sendable {
  private let value = Mutex<Int64>(1_800_000_000_000)
  var now: Int64 { value.withLock { $0 } }
  func advance(milliseconds: Int64) { value.withLock { $0 += milliseconds } }
}

@Suite("The studio's rules, in-process with an injected clock")
struct StudioTests {
  let clock = TestClock()
  let backend: SQLiteBackend
  let studio: Studio
  let password = "a long password"

  init() async throws {
    let folder = URL(fileURLWithPath: try TemporaryFolder.untilExit(prefix: "studio"))
    backend = try SQLiteBackend(path: folder.appendingPathComponent("server.sqlite").path)
    let clock = self.clock
    studio = Studio(backend: backend, options: ServerOptions(), clock: { clock.now })
    _ = try await backend.addStaff(
      name: "sam", role: .support, passwordHash: "$2b$04$" + String(repeating: "a", count: 53), at: clock.now)
  }

  /// Adds `name` with this suite's password, hashed at bcrypt's lowest cost (4) for speed.
  func addStaff(_ name: String, role: StaffRole = .support) async throws {
    _ = try await backend.addStaff(
      name: name, role: role, passwordHash: HummingbirdBcryptHash.hash(password), at: clock.now)
  }

  @Test("a session opens the console until it ends, 8 hours after sign-in, and not after sign-out")
  func sessionsEnd() async throws {
    try await addStaff("ana")
    let (id, session) = try await studio.signIn(name: "ana", password: password, address: "10.0.0.1")
    #expect(session.expiresAt == clock.now + Studio.sessionLength)
    clock.advance(milliseconds: Studio.sessionLength - 1)
    #expect(try await studio.session(id: id)?.staff.name == "ana")
    clock.advance(milliseconds: 1)
    #expect(try await studio.session(id: id) == nil, "an expired session opens nothing")
    let (second, _) = try await studio.signIn(name: "ana", password: password, address: "10.0.0.1")
    try await studio.signOut(id: second, staff: session.staff)
    #expect(try await studio.session(id: second) == nil, "a signed-out session opens nothing")
    #expect(try await studio.session(id: "made-up") == nil)
  }

  @Test("five failures lock an account for 15 minutes; an address gets 10 attempts, one more every 6 s")
  func throttle() async throws {
    try await addStaff("bo")
    for attempt in 0..<5 {
      await #expect(throws: StudioError.self, "attempt \(attempt)") {
        try await studio.signIn(name: "bo", password: "wrong", address: "10.0.0.\(attempt)")
      }
    }
    // Locked: even the right password, from a new address, waits.
    let locked = await #expect(throws: StudioError.self) {
      try await studio.signIn(name: "bo", password: password, address: "10.0.1.1")
    }
    #expect(locked?.kind == .tooManyRequests && locked?.retryAfter == 15 * 60)
    clock.advance(milliseconds: 15 * 60 * 1000)
    _ = try await studio.signIn(name: "bo", password: password, address: "10.0.1.1")

    // One address: 10 attempts (on names that do not exist), then 429, then one more after 6 s.
    for _ in 0..<10 {
      let error = await #expect(throws: StudioError.self) {
        try await studio.signIn(name: "nobody-\(UUID().uuidString)", password: "x", address: "10.9.9.9")
      }
      #expect(error?.kind == .unauthorized)
    }
    let flood = await #expect(throws: StudioError.self) {
      try await studio.signIn(name: "bo", password: password, address: "10.9.9.9")
    }
    #expect(flood?.kind == .tooManyRequests && flood?.retryAfter == 6)
    clock.advance(milliseconds: 6_000)
    _ = try await studio.signIn(name: "bo", password: password, address: "10.9.9.9")
  }

  @Test("the audit log refuses an update and a delete")
  func auditIsAppendOnly() async throws {
    let staff = try #require(try await backend.staffMembers().first)
    let entry = try await backend.appendAudit(AuditDraft(at: clock.now, staff: staff, action: .signIn))
    #expect(throws: DatabaseError.self) {
      try backend.pool.write { db in
        try db.execute(sql: "UPDATE audit SET reason = 'edited' WHERE id = ?", arguments: [entry.id])
      }
    }
    #expect(throws: DatabaseError.self) {
      try backend.pool.write { db in try db.execute(sql: "DELETE FROM audit") }
    }
    #expect(try await backend.auditEntry(id: entry.id)?.reason == "")
  }

  /// A revision of slot `autosave` with what the roles read: its parent, and what it lost to.
  func revision(_ number: Int64, base: Int64?, parent: Int64?, lostTo: Int64? = nil) -> RevisionMetadata {
    var metadata = RevisionMetadata(
      slot: "autosave", revision: number, baseRevision: base, bytes: 1, sha256: "", uploadedAt: 0, device: "",
      game: "", build: "", schema: 1, createdAt: 0, playTime: 0, progress: nil, summaryJSON: "null", lostTo: lostTo)
    metadata.parent = parent
    return metadata
  }

  @Test("a conflict's loser is a merge's input only when the resolution continues it, not when a side won whole")
  func loserRoles() {
    let player = Player(id: 1, name: "alice", createdAt: 0, revoked: false)
    // The walkthrough: the phone's new game (no parent) beat the laptop's r6 with `recent`.
    let taken = SlotHistory(
      player: player, slot: "autosave", head: 8,
      revisions: [
        revision(8, base: 7, parent: 7), revision(7, base: 6, parent: nil),
        revision(6, base: 5, parent: 5, lostTo: 7), revision(5, base: 4, parent: 4),
      ], audit: [])
    #expect(taken.roles(of: taken.revisions[2]) == ["kept loser: lost to r7"])
    #expect(taken.roles(of: taken.revisions[3]) == [], "the revision before the loser is nobody's input")
    // Ours taken whole, continuing the revision both sides last agreed on (r4): still not a merge.
    let ours = SlotHistory(
      player: player, slot: "autosave", head: 7,
      revisions: [revision(7, base: 6, parent: 4), revision(6, base: 5, parent: 5, lostTo: 7)], audit: [])
    #expect(ours.roles(of: ours.revisions[1]) == ["kept loser: lost to r7"])
    // A merge continues the side it lost against (X-Stasis-Parent names the loser).
    let merged = SlotHistory(
      player: player, slot: "autosave", head: 7,
      revisions: [revision(7, base: 6, parent: 6), revision(6, base: 5, parent: 5, lostTo: 7)], audit: [])
    #expect(merged.roles(of: merged.revisions[1]) == ["kept loser: lost to r7", "input of merge r7"])
    #expect(merged.roles(of: merged.revisions[0]) == ["head"])
  }

  @Test("progress reads as a whole percentage, rounded down, and at least 1% once started")
  func progressText() {
    #expect(percent(0.333_333) == "33%")
    #expect(percent(0) == "0%")
    #expect(percent(0.004) == "1%")
    #expect(percent(0.999) == "99%")
    #expect(percent(1) == "100%")
    #expect(percent(1.5) == "100%" && percent(-1) == "0%")
  }
}

/// Bcrypt at its lowest cost: the tests check the rules, not the hash's strength.
enum HummingbirdBcryptHash {
  static func hash(_ password: String) -> String { Bcrypt.hash(password, cost: 4) }
}
