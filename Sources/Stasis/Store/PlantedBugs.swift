import Synchronization

/// Known bugs the simulation's honesty check plants on purpose (`stasis-sim`'s tests), to
/// prove the simulator finds them. Off in every build; only `stasis-sim` (in `Server/`, through
/// `@_spi(Simulation) import`) turns them on. Not part of the public API.
@_spi(Simulation) public enum PlantedBugs {
  /// Issue 14's race: waiting snapshots are not superseded and the newest is written first,
  /// so a generation's number follows the order writes reached the slot, not snapshot order.
  public static let generationAtLockTime = Atomic<Bool>(false)
  /// Pruning removes generations this build cannot read.
  public static let pruneUnreadable = Atomic<Bool>(false)
}
