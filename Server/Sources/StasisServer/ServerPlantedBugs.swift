import Synchronization

/// Known bugs the simulation's honesty check plants on purpose; off in every build.
package enum ServerPlantedBugs {
  /// Each upload prunes every older revision but one, acknowledged ones included.
  package static let dropAcknowledgedUpload = Atomic<Bool>(false)
}
