import StasisMerge

/// The sync's rules, one switch each, each written here once: every default is the rule.
///
/// A configuration holds them as a value and the engine reads every branch from it. Outside the
/// simulation's build nothing can set them: the accessors below are this module's one seam, and
/// they compile only under the `SimulationSeams` trait. Which variation is a planted bug is the
/// simulation's own catalogue, not the library's.
@_spi(Simulation) public struct SyncRules: Sendable {
  /// A conflict merges against the revision this device continues, shared with the server's
  /// head or not.
  public var mergesAcrossUnrelatedHistories = false
  /// After a lost `201`, only the newest local generation is compared with the head.
  public var recognisesOnlyNewest = false
  /// A conflict's merge takes undeclared values one by one (``MergeRules``' rule of that name).
  public var mergesRestValueByValue = false

  /// The sync's own rules.
  public init() {}
}

#if SimulationSeams
  extension CloudSyncConfiguration {
    /// The rules the simulation varies this configuration's sync by.
    @_spi(Simulation) public var seams: SyncRules {
      get { rules }
      set { rules = newValue }
    }
  }
#endif
