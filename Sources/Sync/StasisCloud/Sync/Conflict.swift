import Stasis
import StasisMerge

/// A conflict as the game's ``CloudSyncConfiguration/onConflict`` sees it: the three saves,
/// whole and verified, and the merge the rules would make.
public struct Conflict: Sendable {
  /// The slot.
  public var slot: SaveSlot
  /// The base revision, when the server still has it.
  public var base: SaveDocument?
  /// The base revision's number, when there was one.
  public var baseRevision: Int?
  /// This device's save, and its generation.
  public var ours: SaveDocument
  /// Its generation.
  public var oursGeneration: Int
  /// The server's head, and its revision.
  public var theirs: SaveDocument
  /// Its revision.
  public var theirsRevision: Int

  /// The two sides as a player chooses between them: each side's summary, device, time and
  /// play time, and the fields that differ most.
  public var comparison: ConflictComparison {
    ConflictComparison(ours: ours, oursGeneration: oursGeneration, theirs: theirs, theirsRevision: theirsRevision)
  }
}

/// What the game decided for a ``Conflict``.
public enum ConflictDecision: Sendable {
  /// Take one side whole. `.side(.ours)` keeps this device's save, uploaded on top of theirs;
  /// `.side(.theirs)` takes the server's save, and ours stays a kept generation;
  /// `.side(.base)` goes back to the base (nothing is decided when there is none).
  case side(MergeSide)
  /// A save the game made (its own merge); written locally and uploaded on top of theirs.
  case document(SaveDocument)

  /// The side taken whole, or nil for the game's own save.
  public var side: MergeSide? {
    if case .side(let side) = self { side } else { nil }
  }

  /// Keep this device's save.
  @available(*, deprecated, message: "use .side(.ours)")
  public static var ours: ConflictDecision { .side(.ours) }
  /// Take the server's save.
  @available(*, deprecated, message: "use .side(.theirs)")
  public static var theirs: ConflictDecision { .side(.theirs) }
  /// Go back to the base.
  @available(*, deprecated, message: "use .side(.base)")
  public static var base: ConflictDecision { .side(.base) }
}
