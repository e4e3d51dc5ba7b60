import Stasis
import StasisMerge

extension DemoSaveFormat {
  /// What the demo means when two devices' saves of one slot merge: the high score and the
  /// levels finished are the higher of the two; the physics world and the camera that follows
  /// it are one group, always from one side; every other section (the rest of the score and
  /// of the level's progress, the autopilot) comes whole from the side that changed it, or
  /// the fallback's when both did. The merged state must still pass the demo's validation,
  /// or the whole conflict goes to the fallback.
  public static let mergeRules = MergeRules(
    ["score.highScore": .max, "level.levelsFinished": .max],
    groups: [["physics", "camera"]])

  /// The conflict policy named `name` (`--conflict-policy`), merging with ``mergeRules`` and
  /// falling back to the longest play time.
  public static func conflictPolicy(named name: String) -> ConflictPolicy? {
    ConflictPolicy(name: name, rules: mergeRules, fallback: .longestPlayTime)
  }
}
