import Crypto
import Foundation
@_spi(Plumbing) import Stasis

/// What a slot remembers of its cloud: the revision it last agreed with the server (the base)
/// and the local generation it agreed with, the local saves waiting to go up, and a conflict
/// left for the game or the player. Kept as the slot's `.cloud` record, written atomically
/// like a save (``SaveStore/writeSlotFile(_:named:slot:)``).
@_spi(Plumbing) public struct SyncRecord: Codable, Sendable, Equatable {
  /// The server the base belongs to: a record made against another server starts afresh.
  public var server: String?
  /// Whose it is: the first 16 hex digits of the SHA-256 of the player's token. Another
  /// player on the same server starts afresh.
  public var player: String?
  /// The slot it was made for: a slot renamed or copied with its record starts afresh.
  public var slot: String?
  /// The revision both sides last agreed on (or, after a resolved conflict, the revision the
  /// resolution goes up on); nil before the first sync.
  public var base: Int?
  /// The local generation whose content is the base's; a newer local generation is
  /// unsynced. Nil when no local generation is (nothing synced yet, or a resolution waits to
  /// go up): then every local generation is unsynced.
  public var baseGeneration: Int?
  /// Local generations waiting to be uploaded, oldest first (only the newest goes up: it
  /// holds everything the older ones do).
  public var queued: [Int]
  /// A conflict no policy settled, waiting for the game or `stasis cloud resolve`.
  public var conflict: PendingConflict?
  /// A generation the server refused (damaged, too large): not offered again.
  public var refusedGeneration: Int?
  /// Uploads sent since the base whose answer never came (or has not yet): what they were,
  /// so that a revision the server committed for one of them is recognised as this device's
  /// own, whichever generation it came from. Oldest first, at most ``sentLimit``.
  public var sent: [SentUpload]
  /// While a conflict's resolution waits to go up on ``base``: the revision that lost (the
  /// base itself), named to the server so that it keeps it.
  public var loser: Int?
  /// What the unsynced local state continues: the base (a save played on from it), or another
  /// revision (a conflict's resolution that kept this device's side whole). Sent with the
  /// upload, and the base a conflict merges against; a generation above
  /// ``newHistoryAfter`` continues nothing instead.
  public var parent: UploadParent
  /// A new game or a start-over (``SaveSyncing/beganNewHistory(application:)``) began after
  /// this local generation: the generations above it continue nothing on the server until one
  /// of them is agreed. Nil when none is pending.
  public var newHistoryAfter: Int?
  /// How many times this process's sync wrote the record, counting on from the record it read:
  /// of the flushed record and the one written after it unflushed, the higher is the newer.
  public var sequence: Int = 0

  /// The most uploads ``sent`` remembers: the first (the one most likely to have committed
  /// before the line dropped) and the newest.
  public static let sentLimit = 8

  /// An empty record: nothing synced yet.
  public init(server: String? = nil, player: String? = nil, slot: String? = nil) {
    self.server = server
    self.player = player
    self.slot = slot
    queued = []
    sent = []
    parent = .base
  }

  /// Reads a record, including one written before ``sent`` and ``loser`` existed.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    server = try container.decodeIfPresent(String.self, forKey: .server)
    player = try container.decodeIfPresent(String.self, forKey: .player)
    slot = try container.decodeIfPresent(String.self, forKey: .slot)
    base = try container.decodeIfPresent(Int.self, forKey: .base)
    baseGeneration = try container.decodeIfPresent(Int.self, forKey: .baseGeneration)
    queued = try container.decodeIfPresent([Int].self, forKey: .queued) ?? []
    conflict = try container.decodeIfPresent(PendingConflict.self, forKey: .conflict)
    refusedGeneration = try container.decodeIfPresent(Int.self, forKey: .refusedGeneration)
    sent = try container.decodeIfPresent([SentUpload].self, forKey: .sent) ?? []
    loser = try container.decodeIfPresent(Int.self, forKey: .loser)
    parent = try container.decodeIfPresent(UploadParent.self, forKey: .parent) ?? .base
    newHistoryAfter = try container.decodeIfPresent(Int.self, forKey: .newHistoryAfter)
    sequence = try container.decodeIfPresent(Int.self, forKey: .sequence) ?? 0
  }

  /// What local `generation` continues: ``parent``, or nothing when it came after a new game.
  public func parent(of generation: Int) -> UploadParent {
    if let newHistoryAfter, generation > newHistoryAfter { return .newHistory }
    return parent
  }

  /// The revision local `generation` continues; nil when it continues none on the server.
  public func parentRevision(of generation: Int) -> Int? {
    switch parent(of: generation) {
    case .base: base
    case .revision(let revision): revision
    case .newHistory: nil
    }
  }

  /// Both sides hold `revision`, which is local `generation`: what waited up to it is synced,
  /// and what was sent before it is settled.
  mutating func agree(revision: Int, generation: Int) {
    base = revision
    baseGeneration = generation
    queued.removeAll { $0 <= generation }
    sent.removeAll { $0.generation <= generation || $0.base != revision }
    conflict = nil
    loser = nil
    parent = .base
    // A new game agreed is the base's history now; one still unsynced stays a history of its own.
    if let newHistoryAfter, generation > newHistoryAfter { self.newHistoryAfter = nil }
  }

  /// A resolution of a conflict goes up on `theirs`, which lost: no local generation is the
  /// base until it has, so `flush` uploads the newest one (the result) with `If-Match` on
  /// theirs, naming theirs as the loser, and `parent` as what it continues.
  mutating func resolving(onto theirs: Int, upload generation: Int, loser: Int?, parent: UploadParent) {
    self.parent = parent
    // What `parent` says is the result's own; a new history waiting after it stays.
    if let newHistoryAfter, generation > newHistoryAfter { self.newHistoryAfter = nil }
    base = theirs
    baseGeneration = nil
    queued = [generation]
    conflict = nil
    sent.removeAll { $0.base != theirs }
    self.loser = loser
  }

  /// `generation`, whose file hashes to `sha256`, is about to go up on ``base``: remembered
  /// until the base moves, in case the answer is lost. False when it was already (a retry).
  @discardableResult
  mutating func sending(generation: Int, sha256: String) -> Bool {
    let upload = SentUpload(generation: generation, sha256: sha256, base: base)
    guard !sent.contains(upload) else { return false }
    sent.append(upload)
    if sent.count > Self.sentLimit { sent.remove(at: 1) }
    return true
  }

  /// True when local `generation` is not on the server yet.
  func isUnsynced(_ generation: Int?) -> Bool { (generation ?? 0) > (baseGeneration ?? 0) }

  /// The name of the one record every server shared before each server had its own: read
  /// once, when a server's own record does not exist yet.
  public static let recordName = "cloud"

  /// The record's name in the slot's folder for one server and player: `cloud-` and 16 hex
  /// digits of their hash. A device keeps one record per server, so talking to another server
  /// (a staging one, a studio's own) never makes it forget what it sent to this one.
  static func recordName(server: String?, player: String?) -> String {
    let key = "\(server ?? "")\n\(player ?? "")"
    return "cloud-" + String(hexEncoded(SHA256.hash(data: Data(key.utf8))).prefix(16))
  }

  /// The slot's record for `server` and its player, or an empty one. The record written after
  /// the flushed one without a flush (``save(store:slot:durable:)``) is read when it is whole
  /// and newer; a crash of the machine may have left it empty or torn, and then the flushed
  /// one stands.
  public static func load(store: SaveStore, slot: SaveSlot, server: CloudCredentials) -> SyncRecord {
    let player = playerTag(server.token)
    func read(_ name: String) -> SyncRecord? {
      guard let bytes = try? store.readSlotFile(named: name, slot: slot),
        let record = try? JSONDecoder().decode(SyncRecord.self, from: Data(bytes)), record.server == server.url,
        record.player == player, record.slot == slot.name
      else { return nil }
      return record
    }
    let name = recordName(server: server.url, player: player)
    if let flushed = read(name) {
      if let unflushed = read(name + unflushedSuffix), unflushed.sequence > flushed.sequence { return unflushed }
      return flushed
    }
    return read(recordName) ?? SyncRecord(server: server.url, player: player, slot: slot.name)
  }

  /// The unflushed record's name is the record's and this.
  static let unflushedSuffix = "-next"

  /// A token's tag in a record: enough to tell players apart, never enough to use.
  static func playerTag(_ token: String) -> String {
    String(hexEncoded(SHA256.hash(data: Data(token.utf8))).prefix(16))
  }

  /// Writes the record atomically into the slot's folder; durably unless `durable` is false
  /// (then beside the durable record, unflushed: the next process reads it, and a crash of the
  /// machine may leave the durable record alone).
  public func save(store: SaveStore, slot: SaveSlot, durable: Bool = true) throws(SaveFileError) {
    let data = try SaveStore.slotFileJSON(self, what: "the sync record")
    // Unflushed, it goes beside the flushed record, never over it: a crash of the machine may
    // leave an unflushed file empty, and the flushed record must stand then.
    let name = Self.recordName(server: server, player: player) + (durable ? "" : Self.unflushedSuffix)
    try store.writeSlotFile([UInt8](data), named: name, slot: slot, durable: durable)
  }
}

/// An upload this device sent: which generation, its file's SHA-256, and the base it went up
/// on (`If-Match`; nil for `If-None-Match: *`). A revision with the same SHA-256 and base is
/// this device's own.
@_spi(Plumbing) public struct SentUpload: Codable, Sendable, Equatable {
  /// The local generation.
  public var generation: Int
  /// The file's SHA-256, lowercase hex.
  public var sha256: String
  /// The revision it went up on.
  public var base: Int?
}

/// A conflict left unsettled: both sides moved past `base`.
@_spi(Plumbing) public struct PendingConflict: Codable, Sendable, Equatable {
  /// The common base revision, nil when the two never agreed.
  public var base: Int?
  /// The local generation.
  public var ours: Int
  /// The server's head when it was found.
  public var theirs: Int
  /// The policy that left it unsettled.
  public var policy: String
}

/// How a slot stands with the server: the one status vocabulary of the cloud side, in
/// ``CloudStatus/state`` (what a HUD shows), ``SyncReport/state`` (what a sync came to) and
/// `stasis cloud status`.
public enum SyncState: String, Sendable, Equatable {
  /// Not synced yet in this run.
  case idle
  /// Talking to the server.
  case syncing
  /// The server is unreachable; uploads wait.
  case offline
  /// The server refused the token: nothing syncs until it is fixed.
  case unauthorized
  /// Both sides hold the base.
  case synced
  /// Local saves the server does not have yet.
  case ahead
  /// The server moved past the base; nothing local is unsynced.
  case behind
  /// Both moved past the same base.
  case conflict
  /// The slot exists on one side only and nothing was ever synced (local-only is `ahead`).
  case remoteOnly = "remote only"

  /// How a slot stands, from its record, its newest local generation and the server's head.
  package static func classify(record: SyncRecord, newestLocal: Int?, head: Int?) -> SyncState {
    let ahead = record.isUnsynced(newestLocal)
    let moved = head != record.base
    if record.conflict != nil || (ahead && moved && head != nil) { return .conflict }
    if ahead { return .ahead }
    if moved { return record.base == nil && newestLocal == nil ? .remoteOnly : .behind }
    return .synced
  }
}
