/// Migrations from older schema versions of a game's state, applied to the decoded tree
/// before it is decoded into the current type. Register one per version whose change is a
/// rename, a removal or a type change; added fields take their defaults (``SaveDefaults``).
/// A stored field that nothing renames, removes or declares removed (``SaveRemovedFields``)
/// makes the load fail with ``SaveFileError/Kind/droppedField`` instead of losing it.
///
/// ```swift
/// var migrations = SchemaMigrations()
/// migrations.register(from: 1) { state in          // v1 → v2: `pos` became `position`
///   state[field: "camera"]?.renameField("pos", to: "position")
///   state[field: "camera"]?.removeField("shake")   // and `shake` is gone
/// }
/// ```
public struct SchemaMigrations: Sendable {
  /// Rewrites a whole state tree (section name → value) from one version to the next.
  public typealias Migration = @Sendable (inout SaveValue) throws -> Void

  private var steps: [(from: UInt32, migrate: Migration)] = []

  /// No migrations.
  public init() {}

  /// Registers the step from schema `version` to `version + 1`.
  public mutating func register(from version: UInt32, _ migrate: @escaping Migration) {
    steps.append((version, migrate))
  }

  /// Runs every step from `stored` up to `current`, in order; returns the steps that ran.
  func migrate(_ tree: inout SaveValue, from stored: UInt32, to current: UInt32) throws(SaveFileError)
    -> [LoadReport.MigrationStep]
  {
    var ran: [LoadReport.MigrationStep] = []
    for version in stored..<current {
      for step in steps where step.from == version {
        do {
          try step.migrate(&tree)
        } catch {
          throw SaveFileError(
            .migrationFailed, "migration from schema \(version) to \(version + 1) failed: \(error)",
            underlyingError: error)
        }
        ran.append(LoadReport.MigrationStep(from: version, to: version + 1))
      }
    }
    return ran
  }
}
