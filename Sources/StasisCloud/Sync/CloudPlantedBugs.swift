import Synchronization

/// Known bugs the simulation's honesty check plants on purpose; off in every build.
/// `stasis-sim` reaches it through `@_spi(Simulation) import StasisCloud`; not part of the public API.
@_spi(Simulation) public enum CloudPlantedBugs {
  /// After a lost `201`, only the newest local generation is compared with the head.
  public static let newestOnlyAfterLostAnswer = Atomic<Bool>(false)
}
