import Logging

/// The store's rules, one switch each, each written here once: every default is the rule.
///
/// A store holds its rules as a value and reads every branch from it. Outside the simulation's
/// build nothing can hand a store other values: the initialiser that takes them, below, is this
/// module's one seam, and it compiles only under the `SimulationSeams` trait (off by default, on
/// only in `Server/`'s build of `stasis-sim`), as swift-system keeps its mocking in one file.
/// Which variation is a planted bug is the simulation's own catalogue, not the library's.
@_spi(Simulation) public struct StoreRules: Sendable {
  /// Snapshots are written in the order they were handed over, and a waiting one is
  /// superseded by a newer one.
  public var writesInSnapshotOrder = true
  /// Settings and timers are flushed when replaced.
  public var flushesFolderFiles = true
  /// A snapshot is compared with the slot's newest file even before this store loaded it.
  public var comparesWithNewestFile = true
  /// A write keeps what must be kept (generations this build cannot read) before it writes.
  public var keepsBeforeWriting = true
  /// Pruning removes a generation this build cannot read.
  public var prunesUnreadable = false

  /// The store's own rules.
  public init() {}
}

#if SimulationSeams
  extension SaveStore {
    /// The rules the simulation varies a store by: ``StoreRules``, under the name the
    /// simulation's build gives every seam.
    @_spi(Simulation) public typealias Seams = StoreRules

    /// The rules this store writes by.
    @_spi(Simulation) public var seams: Seams { rules }

    /// A store whose rules are varied by `seams`: the simulation's honesty check.
    @_spi(Simulation) public convenience init(
      directory: String,
      generationsToKeep: Int,
      lockTimeout: Duration = .seconds(5),
      signing: SigningPolicy = .none,
      fileSystem: any FileSystem,
      wallClock: any WallClock,
      device: String?,
      logger: Logger,
      seams: Seams
    ) {
      self.init(
        directory: directory, generationsToKeep: generationsToKeep, lockTimeout: lockTimeout, signing: signing,
        fileSystem: fileSystem, wallClock: { wallClock.unixMilliseconds() }, device: device, logger: logger,
        rules: seams)
    }
  }
#endif
