import Synchronization

/// Known bugs the simulation's honesty check plants on purpose; off in every build.
/// `stasis-sim` reaches it through `@_spi(Simulation) import StasisMerge`; not part of the public API.
@_spi(Simulation) public enum MergePlantedBugs {
  /// Issue 27, case 3: undeclared sections merge one by one (each from the side that changed
  /// it), so a new map from one side meets the other side's creatures.
  public static let sectionBySection = Atomic<Bool>(false)
}
