import Synchronization

/// Known bugs the simulation's honesty check plants on purpose; off in every build.
package enum CloudPlantedBugs {
  /// After a lost `201`, only the newest local generation is compared with the head.
  package static let newestOnlyAfterLostAnswer = Atomic<Bool>(false)
}
