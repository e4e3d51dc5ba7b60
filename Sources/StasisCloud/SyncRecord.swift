import Foundation
import Stasis

/// What a slot remembers of its cloud: the revision it last agreed with the server (the base)
/// and the local generation it agreed with, the local saves waiting to go up, and a conflict
/// left for the game or the player. Kept as the slot's `.cloud` record, written atomically
/// like a save (``SaveStore/writeRecord(_:named:slot:)``).
public struct SyncRecord: Codable, Sendable, Equatable {
  /// The server the base belongs to: a record made against another server starts afresh.
  public var server: String?
  /// The revision both sides last agreed on; nil before the first sync.
  public var base: Int?
  /// The local generation that agreed with it; a newer local generation is unsynced.
  public var baseGeneration: Int?
  /// Local generations waiting to be uploaded, oldest first (only the newest goes up: it
  /// holds everything the older ones do).
  public var queued: [Int]
  /// A conflict no policy settled, waiting for the game or `stasis cloud resolve`.
  public var conflict: PendingConflict?
  /// A generation the server refused (damaged, too large): not offered again.
  public var refusedGeneration: Int?

  /// An empty record: nothing synced yet.
  public init(server: String? = nil) {
    self.server = server
    queued = []
  }

  /// The record's name in the slot's folder.
  public static let recordName = "cloud"

  /// The slot's record, or an empty one; a record of another server starts afresh.
  public static func load(store: SaveStore, slot: SaveSlot, server: String) -> SyncRecord {
    guard let bytes = try? store.readRecord(named: recordName, slot: slot),
      let record = try? JSONDecoder().decode(SyncRecord.self, from: Data(bytes)), record.server == server
    else { return SyncRecord(server: server) }
    return record
  }

  /// Writes the record atomically into the slot's folder.
  public func save(store: SaveStore, slot: SaveSlot) throws(SaveFileError) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    guard let data = try? encoder.encode(self) else {
      throw SaveFileError(.io, "the sync record could not be encoded")
    }
    try store.writeRecord([UInt8](data), named: Self.recordName, slot: slot)
  }
}

/// A conflict left unsettled: both sides moved past `base`.
public struct PendingConflict: Codable, Sendable, Equatable {
  /// The common base revision, nil when the two never agreed.
  public var base: Int?
  /// The local generation.
  public var ours: Int
  /// The server's head when it was found.
  public var theirs: Int
  /// The policy that left it unsettled.
  public var policy: String
}

/// How a slot stands with the server, as `stasis cloud status` prints it.
public enum SyncState: String, Sendable, Equatable {
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
  public static func classify(record: SyncRecord, newestLocal: Int?, head: Int?) -> SyncState {
    let ahead = (newestLocal ?? 0) > (record.baseGeneration ?? 0)
    let moved = head != record.base
    if record.conflict != nil || (ahead && moved && head != nil) { return .conflict }
    if ahead { return .ahead }
    if moved { return record.base == nil && newestLocal == nil ? .remoteOnly : .behind }
    return .synced
  }
}
