import Stasis

/// How a conflict is resolved: both this device and the server moved past the same base.
/// The first five are Google Play's saved-games policies; ``merge(rules:fallback:)`` merges
/// the two saves against the base by the game's declarations. Whatever the policy, the losing side is
/// never deleted: the server keeps its revision, the device keeps its generation.
public indirect enum ConflictPolicy: Sendable {
  /// The game is handed base, ours and theirs and decides (``CloudSyncConfiguration/onConflict``);
  /// without a decision the slot stays in conflict until `stasis cloud resolve` settles it.
  case manual
  /// The save made most recently (its header's creation time) wins.
  case mostRecent
  /// The save with the longer play time wins.
  case longestPlayTime
  /// The save with the higher progress wins.
  case highestProgress
  /// The base — the last revision both sides agreed on — wins over both.
  case lastKnownGood
  /// A three-way merge of the self-describing trees against the base revision (fetched from
  /// the server's history), by the game's declarations (``ThreeWayMerge``): a section only one
  /// side changed comes from it; a section both changed comes whole from `fallback`'s side,
  /// except the paths `rules` declares inside it, and a group of paths always comes from one
  /// side. When the base is no longer on the server, or the merged state does not load, the
  /// whole conflict goes to `fallback`, and the report says so.
  case merge(rules: MergeRules, fallback: ConflictPolicy)

  /// Which policy, without its rules: what a ``ConflictReport`` says decided. Its raw value is
  /// the name `--conflict-policy` takes.
  public enum Kind: String, Sendable, Equatable, CaseIterable {
    /// ``ConflictPolicy/manual``: the game or the player decides.
    case manual
    /// ``ConflictPolicy/mostRecent``.
    case mostRecent = "recent"
    /// ``ConflictPolicy/longestPlayTime``.
    case longestPlayTime = "playtime"
    /// ``ConflictPolicy/highestProgress``.
    case highestProgress = "progress"
    /// ``ConflictPolicy/lastKnownGood``.
    case lastKnownGood = "last-known-good"
    /// ``ConflictPolicy/merge(rules:fallback:)``.
    case merge
  }

  /// Which policy this is.
  public var kind: Kind {
    switch self {
    case .manual: .manual
    case .mostRecent: .mostRecent
    case .longestPlayTime: .longestPlayTime
    case .highestProgress: .highestProgress
    case .lastKnownGood: .lastKnownGood
    case .merge: .merge
    }
  }

  /// The name `--conflict-policy` takes: `manual`, `recent`, `playtime`, `progress`,
  /// `last-known-good`, `merge` (``kind``'s raw value).
  public var name: String { kind.rawValue }

  /// The policy named `name`; `merge` merges with `rules` and falls back to `fallback`.
  public init?(name: String, rules: MergeRules = MergeRules(), fallback: ConflictPolicy = .mostRecent) {
    switch name {
    case "manual": self = .manual
    case "recent": self = .mostRecent
    case "playtime": self = .longestPlayTime
    case "progress": self = .highestProgress
    case "last-known-good": self = .lastKnownGood
    case "merge": self = .merge(rules: rules, fallback: fallback)
    default: return nil
    }
  }

  /// The names, for help texts.
  public static let names = Kind.allCases.map(\.rawValue)

  /// The side this policy takes for two whole saves, from their headers; nil for `manual`
  /// (and for `merge`, which looks inside). Ties go to theirs, so two devices that resolve
  /// the same conflict agree.
  public func side(ours: SaveDocument, theirs: SaveDocument) -> MergeSide? {
    switch self {
    case .manual: return nil
    case .mostRecent: return ours.createdAt > theirs.createdAt ? .ours : .theirs
    case .longestPlayTime: return ours.summary.playTime > theirs.summary.playTime ? .ours : .theirs
    case .highestProgress: return (ours.summary.progress ?? 0) > (theirs.summary.progress ?? 0) ? .ours : .theirs
    case .lastKnownGood: return .base
    case .merge(_, let fallback): return fallback.side(ours: ours, theirs: theirs)
    }
  }
}
