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
  /// Issue 27, case 1: a write keeps nothing before it writes beside a generation its build
  /// cannot read, so only the relative rule protects a newer build's save, and it lapses.
  public static let keepNothingBeforeWriting = Atomic<Bool>(false)
  /// Issue 27, case 9: a store that has not loaded the slot never compares a snapshot with the
  /// newest file, so a new process writes the state it found again.
  public static let sameStateTwice = Atomic<Bool>(false)
}
