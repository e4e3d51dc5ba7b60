#if PlantedBugs
  /// Known bugs the simulation's honesty check plants on purpose (`stasis-sim` and its tests), to
  /// prove the simulator finds them. Compiled only under the package's `PlantedBugs` trait, which
  /// is off by default and which only the simulation's build turns on (`Server/`, `--traits
  /// PlantedBugs`): a game's or a server's build has no such type, no such field and no branch
  /// that tests for one (`scripts/test.sh` checks a release binary's symbols).
  ///
  /// Planted per instance, never process-wide: a store, a sync configuration, a merge's rules or
  /// a server backend does what its own set says, and every set outside the simulation is empty,
  /// so runs and tests that plant nothing can run beside one that does.
  @_spi(Simulation) public struct PlantedBugs: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Issue 14's race: waiting snapshots are not superseded and the newest is written first,
    /// so a generation's number follows the order writes reached the slot, not snapshot order.
    /// Planted in a ``SaveStore``.
    public static let generationAtLockTime = PlantedBugs(rawValue: 1 << 0)
    /// Pruning removes generations this build cannot read. Planted in a ``SaveStore``.
    public static let pruneUnreadable = PlantedBugs(rawValue: 1 << 1)
    /// Issue 27, case 1: a write keeps nothing before it writes beside a generation its build
    /// cannot read, so only the relative rule protects a newer build's save, and it lapses.
    /// Planted in a ``SaveStore``.
    public static let keepNothingBeforeWriting = PlantedBugs(rawValue: 1 << 2)
    /// Issue 27, case 9: a store that has not loaded the slot never compares a snapshot with the
    /// newest file, so a new process writes the state it found again. Planted in a ``SaveStore``.
    public static let sameStateTwice = PlantedBugs(rawValue: 1 << 3)
    /// Issue 27, case 3: undeclared sections merge one by one (each from the side that changed
    /// it), so a new map from one side meets the other side's creatures. Planted in a merge's rules.
    public static let sectionBySection = PlantedBugs(rawValue: 1 << 4)
    /// After a lost `201`, only the newest local generation is compared with the head. Planted
    /// in a cloud sync's configuration.
    public static let newestOnlyAfterLostAnswer = PlantedBugs(rawValue: 1 << 5)
    /// Issue 27, case 4: a conflict merges three ways against the revision this device
    /// continues, whether or not the server's head continues it too. Planted in a cloud sync's
    /// configuration.
    public static let mergeAcrossUnrelatedHistories = PlantedBugs(rawValue: 1 << 6)
    /// Each upload prunes every older revision but one, acknowledged ones included. Planted in
    /// the server's SQLite backend.
    public static let dropAcknowledgedUpload = PlantedBugs(rawValue: 1 << 7)
    /// Issue 28: collecting the server's pieces keeps those revisions and uploads name, but not
    /// the pieces their deltas are built on. Planted in the server's SQLite backend.
    public static let collectionIgnoresChains = PlantedBugs(rawValue: 1 << 8)
    /// Issue 31: settings and timers are replaced atomically but never flushed, so a crash may
    /// take back an acknowledged setting or timer. Planted in a ``SaveStore``.
    public static let unflushedFolderFiles = PlantedBugs(rawValue: 1 << 9)
    /// Issue 31: the server's settings merge takes every key a device sends, whatever its stamp
    /// (an unconditional upsert), so a stale device overwrites a newer value. Planted in the
    /// server's SQLite backend.
    public static let settingsOverwriteNewer = PlantedBugs(rawValue: 1 << 10)
  }
#endif
