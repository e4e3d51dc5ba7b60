import Stasis

/// What the server keeps about one revision (`GET /v1/slots/{slot}/revisions`, a `412`'s head).
public struct RemoteRevision: Sendable, Equatable {
  /// The slot.
  public var slot: String
  /// The revision number (1, 2, 3, … per slot, never reused).
  public var revision: Int
  /// The revision it was based on, or nil for a creation.
  public var baseRevision: Int?
  /// The revision whose state it continues; nil when it continues none (a history begun on its
  /// own), or when the history's start was pruned. It may name a revision the server no longer
  /// has (pruned before parents were recorded, or named by a client after it was pruned).
  public var parent: Int?
  /// False for a server from before parents were recorded (its JSON has no `parent`): its
  /// history cannot tell a new game from a continuation, so no three-way merge relies on it.
  public var parentIsRecorded: Bool
  /// The file's size.
  public var bytes: Int
  /// The file's SHA-256, lowercase hex.
  public var sha256: String
  /// When the server stored it (ISO 8601).
  public var uploadedAt: String
  /// The device that wrote it.
  public var device: String
  /// Play time in seconds, from the save's header.
  public var playTime: Double
  /// Progress 0–1, from the save's header, when the game records one.
  public var progress: Double?
  /// The revision uploaded over this one as a conflict's resolution, when this one lost: the
  /// server keeps it out of pruning until it is discarded (``CloudClient/discard(slot:revision:)``).
  public var lostTo: Int?
  /// Why the server keeps it, when it does.
  public var keptReason: String?

  /// True when the server keeps this revision out of pruning.
  public var isKept: Bool { lostTo != nil || keptReason != nil }

  /// Reads the API's JSON object; nil when a required key is missing.
  init?(json: [String: Any]) {
    guard let revision = json["revision"] as? Int else { return nil }
    slot = json["slot"] as? String ?? ""
    self.revision = revision
    baseRevision = json["baseRevision"] as? Int
    parentIsRecorded = json.keys.contains("parent")
    parent = json["parent"] as? Int
    bytes = json["bytes"] as? Int ?? 0
    sha256 = json["sha256"] as? String ?? ""
    uploadedAt = json["uploadedAt"] as? String ?? ""
    device = json["device"] as? String ?? ""
    playTime = json["playTime"] as? Double ?? Double(json["playTime"] as? Int ?? 0)
    progress = json["progress"] as? Double
    lostTo = json["lostTo"] as? Int
    keptReason = json["keptReason"] as? String
  }
}

/// What an upload continues, which the server records as the new revision's
/// ``RemoteRevision/parent`` (`X-Stasis-Parent`). A client merges three ways only against a
/// revision that both sides continue, so a history begun elsewhere is never merged as if it
/// had come from this one.
public enum UploadParent: Codable, Sendable, Equatable {
  /// The revision the upload goes up on (`If-Match`): a save played on from it.
  case base
  /// Another revision: a conflict's resolution that took this device's side whole continues
  /// this device's own base, not the head it goes up on.
  case revision(Int)
  /// None on this server: a history begun on its own (a new game, a start-over).
  case newHistory
}

/// What a conditional `GET` of a slot's head found.
public enum HeadFetch: Sendable, Equatable {
  /// The head is still the revision asked about (`304`).
  case unchanged
  /// The slot does not exist on the server (never made, or deleted).
  case missing
  /// The head is `revision`, with its file's bytes.
  case changed(revision: Int, bytes: [UInt8])
}
