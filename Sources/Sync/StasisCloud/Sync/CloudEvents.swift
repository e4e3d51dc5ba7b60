import Stasis
import StasisMerge

/// A conflict and what became of it: both sides moved past `base`; `ours` is the local
/// generation, `theirs` the server's revision. The losing side is kept (``keptGeneration``
/// locally, or `theirs` in the server's history).
public struct ConflictReport: Sendable, Equatable {
  /// The common base revision, nil when the two never agreed.
  public var base: Int?
  /// The local generation.
  public var ours: Int
  /// The server's revision.
  public var theirs: Int
  /// What a conflict came to. Its ``rawValue`` is what ``summary``, the log and
  /// `stasis cloud status --json` print: `merged`, `ours`, `theirs`, `base`, `game's`, `pending`.
  public enum Outcome: Sendable, Equatable, RawRepresentable {
    /// A three-way merge of the two against the base.
    case merged
    /// One side won whole: ours, theirs, or the base over both (`ConflictPolicy.lastKnownGood`).
    case side(MergeSide)
    /// The game's own save (``ConflictDecision/document(_:)``).
    case game
    /// Not settled: left for the game or the player (`stasis cloud resolve`).
    case pending

    /// This device's save won.
    @available(*, deprecated, message: "use .side(.ours)")
    public static var ours: Outcome { .side(.ours) }
    /// The server's save won.
    @available(*, deprecated, message: "use .side(.theirs)")
    public static var theirs: Outcome { .side(.theirs) }
    /// The base won over both.
    @available(*, deprecated, message: "use .side(.base)")
    public static var base: Outcome { .side(.base) }

    /// The side that won whole, or nil.
    public var side: MergeSide? {
      if case .side(let side) = self { side } else { nil }
    }

    /// The name a report prints.
    public var rawValue: String {
      switch self {
      case .merged: "merged"
      case .side(let side): side.rawValue
      case .game: "game's"
      case .pending: "pending"
      }
    }

    /// The outcome a report's name stands for.
    public init?(rawValue: String) {
      switch rawValue {
      case "merged": self = .merged
      case "game's": self = .game
      case "pending": self = .pending
      default:
        guard let side = MergeSide(rawValue: rawValue) else { return nil }
        self = .side(side)
      }
    }
  }

  /// How the two saves' histories meet: what decides whether a three-way merge may run. Only
  /// ``History/shared`` histories are merged; the others fall back to the policy's side.
  public enum History: String, Sendable, Equatable {
    /// Both continue ``ConflictReport/base``: a three-way merge may run, if the server still has it.
    case shared
    /// The server's head does not continue the revision this device's save continues: another
    /// device began the slot anew (unrelated histories).
    case unrelated
    /// This device's save begins a history of its own (a new game, or a play from before the
    /// device ever synced) where the device had agreed on a revision.
    case newGame = "new game"
    /// This device's save continues nothing on the server, and the device never agreed on one.
    case neverAgreed = "never agreed"
    /// The server cannot say: it records no parents (a `stasis-server` from before them), or it
    /// no longer lists the slot's revisions.
    case unrecorded
  }

  /// How the histories meet; the ``note`` says it in words.
  public var history: History = .shared
  /// The policy that decided: `ConflictPolicy.Kind.manual` when the game or the player did.
  public var decidedBy: ConflictPolicy.Kind
  /// What it came to.
  public var outcome: Outcome
  /// The revision the result was uploaded as, once it was.
  public var revision: Int?
  /// The local generation kept out of pruning because it lost, if one did.
  public var keptGeneration: Int?
  /// Values both sides changed and how each was settled (`score.highScore: rule max (score.highScore)`).
  public var fields: [String]
  /// Each section of the result and where it came from, or how it merged.
  public var sections: [SectionMerge] = []
  /// Fields taken from one side because only it changed them.
  public var takenFromOurs: Int
  /// As ``takenFromOurs``, from the server.
  public var takenFromTheirs: Int
  /// A fallback the policy took, and why ("base revision 1 is no longer on the server").
  public var note: String?
  /// For a conflict left to the player (``Outcome/pending``): the two sides as the player
  /// chooses between them, each side's summary and the fields that differ most.
  public var comparison: ConflictComparison?

  /// One line: `conflict: base r1, ours generation 4, theirs r2: merge → merged (score merged,
  /// camera theirs, physics theirs; 3 both changed, 1 from ours only, 0 from theirs only), uploaded as r3; …`.
  public var summary: String {
    var line =
      "conflict: base \(base.map { "r\($0)" } ?? "none"), ours generation \(ours), theirs r\(theirs): \(decidedBy.rawValue) → \(outcome.rawValue)"
    if outcome == .merged {
      let parts = sections.filter { $0.source != .unchanged }.map { "\($0.name) \($0.source.rawValue)" }
      line +=
        " (\(parts.isEmpty ? "" : parts.joined(separator: ", ") + "; ")\(fields.count) both changed, \(takenFromOurs) from ours only, \(takenFromTheirs) from theirs only)"
    }
    if let revision { line += ", uploaded as r\(revision)" }
    if let keptGeneration { line += "; kept generation \(keptGeneration)" }
    if outcome != .side(.theirs) && outcome != .pending { line += "; r\(theirs) stays in the server's history" }
    if let note { line += "; \(note)" }
    return line
  }
}

/// What the cloud side of a slot did, in order.
public enum CloudEvent: Sendable, Equatable, CustomStringConvertible {
  /// A local generation went up as a new revision.
  case uploaded(generation: Int, revision: Int, base: Int?)
  /// The server was ahead and nothing local was unsynced: its head became a local generation.
  case fastForwarded(revision: Int, generation: Int)
  /// Both sides moved past the same base.
  case conflict(ConflictReport)
  /// The server could not be reached, or could not store now (``CloudError/Kind/offline``,
  /// `.server`, `.unavailable`); the `waiting` uploads wait and are retried with backoff.
  case offline(CloudError, waiting: Int)
  /// An upload was cancelled (the background budget ran out); retried on the next return.
  case uploadCancelled(generation: Int)
  /// Something was refused, and the error says which side and why: the server refused an
  /// upload (``CloudError/Kind/refused``, dropped from the queue), or a download failed this
  /// device's checks or could not be written and was refused before anything local changed
  /// (``CloudError/Kind/refusedLocally``, its ``CloudError/fileError`` the store's error); or
  /// the server answered with a kind a request here never expects (`.notFound`).
  case refused(CloudError)
  /// The server refused the token (``CloudError/Kind/unauthorized``): nothing syncs until it is
  /// fixed; the game plays on.
  case unauthorized(CloudError)
  /// The save about to go up is `bytes` long, 90% or more of the largest file the server takes
  /// (`limit`, its `Upload-Limit`): past it, uploads are refused. Said once when a save first
  /// comes near, and again only after one has gone below.
  case nearUploadLimit(bytes: Int, limit: Int)

  /// What happened, in one line without a category prefix (a trace adds its own, as the
  /// demo's `cloud: `); the same as ``description``.
  public var message: String {
    switch self {
    case .uploaded(let generation, let revision, let base):
      return "uploaded generation \(generation) as r\(revision) (base \(base.map { "r\($0)" } ?? "none"))"
    case .fastForwarded(let revision, let generation):
      return "fast-forwarded to r\(revision) as generation \(generation)"
    case .conflict(let report): return report.summary
    case .offline(let error, let waiting): return "offline, \(waiting) waiting: \(error.message)"
    case .uploadCancelled(let generation): return "upload of generation \(generation) cancelled; it stays queued"
    case .refused(let error): return "refused: \(error.message)"
    case .unauthorized(let error): return error.message
    case .nearUploadLimit(let bytes, let limit):
      return
        "the save is \(bytes) bytes, \(bytes * 100 / max(1, limit)) % of the server's upload limit of \(limit) bytes: "
        + "past it, uploads are refused (the server's --max-body-bytes)"
    }
  }

  /// What happened, in one line without a category prefix: `print("cloud: \(event)")` says
  /// `cloud: ` once.
  public var description: String { message }
}

/// The cloud side of a slot at a glance: what a HUD shows and a run's summary prints. Read it
/// from any thread (``CloudSync/status``).
public struct CloudStatus: Sendable, Equatable {
  /// What the slot is doing or waiting for: ``SyncState/idle``, ``SyncState/syncing``,
  /// ``SyncState/synced``, ``SyncState/offline``, ``SyncState/conflict`` or
  /// ``SyncState/unauthorized``, in the vocabulary of ``SyncReport/state`` and
  /// `stasis cloud status`.
  public var state: SyncState = .idle

  /// The revision last agreed with the server.
  public var base: Int?
  /// Revisions this run uploaded, in order (the newest ``historyLimit``).
  public var uploaded: [Int] = []
  /// Revisions this run fast-forwarded to (the newest ``historyLimit``).
  public var downloaded: [Int] = []
  /// Conflicts this run met (the newest ``historyLimit``).
  public var conflicts: [ConflictReport] = []
  /// Local saves waiting to go up.
  public var pending: Int = 0
  /// What happened, oldest first: the newest ``historyLimit`` events (a game that syncs for
  /// hours keeps a bounded history; ``CloudSync/onEvent(_:)`` sees every one).
  public var events: [CloudEvent] = []
  /// How many entries ``events``, ``uploaded``, ``downloaded`` and ``conflicts`` each keep.
  public static let historyLimit = 1_000

  /// What the HUD shows: `synced r12`, `offline, 2 waiting`, `conflict`.
  public var hud: String {
    switch state {
    case .idle: return pending > 0 ? "\(pending) waiting" : base.map { "r\($0)" } ?? "cloud"
    case .synced: return pending > 0 ? "r\(base ?? 0), \(pending) waiting" : "synced r\(base ?? 0)"
    case .syncing: return "syncing"
    case .offline: return "offline, \(pending) waiting"
    case .conflict: return "conflict"
    case .unauthorized: return "token refused"
    case .ahead: return "\(pending) waiting"
    case .behind: return "behind r\(base ?? 0)"
    case .remoteOnly: return "on the server only"
    }
  }
}
