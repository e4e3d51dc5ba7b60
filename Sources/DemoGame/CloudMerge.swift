import Stasis
import StasisCloud

extension DemoSaveFormat {
  /// How the demo merges two devices' saves of one slot field by field: the high score is the
  /// higher of the two, and every other field both devices changed — the simulation's state
  /// is one coupled whole — follows the slot's fallback policy. Fields only one device
  /// changed (a checkpoint, a collectible's flag) come from it, and the merged state must
  /// still pass the demo's validation, or the whole conflict goes to the fallback.
  public static let mergeRules: MergeRules = [
    "score.highScore": .max,
    "level.levelsFinished": .max,
  ]

  /// The conflict policy named `name` (`--conflict-policy`), merging with ``mergeRules`` and
  /// falling back to the longest play time.
  public static func conflictPolicy(named name: String) -> ConflictPolicy? {
    ConflictPolicy(name: name, rules: mergeRules, fallback: .longestPlayTime)
  }
}
