import Logging

/// The storage rules, one switch each, the same for both backends and each written here once:
/// every default is the rule. A backend holds them as a value and reads every branch from it.
/// Outside the simulation's build nothing can hand a backend other values: the initialisers at
/// the end of this file are this module's one seam, compiled only under the `SimulationSeams`
/// trait; which variation is a planted bug is the simulation's own catalogue, and it plants
/// each on SQLite and on PostgreSQL.
package struct StorageRules: Sendable {
  /// An upload prunes every older revision but one, whatever the slot keeps.
  package var prunesAllButOne = false
  /// Collection keeps the pieces that needed pieces are deltas on, not only those named.
  package var followsChains = true
  /// The settings merge keeps a stored value with a newer stamp.
  package var settingsUpsertIsConditional = true

  /// The rules.
  package init() {}
}

/// A backend whose storage rules the simulation's build can vary: both read each rule here.
protocol VariedStorageRules {
  /// The storage rules this backend stores by.
  var rules: StorageRules { get }
  /// Files smaller than this are stored whole (``PieceRules/smallestDelta``).
  var smallestDelta: Int { get }
}

extension VariedStorageRules {
  /// The upload rule for one upload, made here for both backends: the one place the
  /// simulation's `prunesAllButOne` varies it.
  func uploadRule(
    _ precondition: WritePrecondition, loser: Int64?, metadata: RevisionMetadata, delta: StoredDelta?,
    keep: Int, limits: PlayerLimits
  ) -> UploadRule {
    UploadRule(
      expected: precondition.expected, loser: loser, size: metadata.bytes, deltaSize: delta?.bytes.count,
      parent: metadata.parent, limits: limits, keep: prunesAllButOne ? 1 : keep, smallestDelta: smallestDelta)
  }
}

extension VariedStorageRules {
  var prunesAllButOne: Bool { rules.prunesAllButOne }
  var followsChains: Bool { rules.followsChains }
  var settingsUpsertIsConditional: Bool { rules.settingsUpsertIsConditional }
}

extension SQLiteBackend: VariedStorageRules {}
extension PostgresBackend: VariedStorageRules {}

extension ServerSchema {
  /// The statement that deletes a slot's pieces nothing needs: no revision of the slot, no
  /// upload in progress, and no piece still needed that is a delta on them. One text for both
  /// backends (SQLite runs it after each upload and discard; PostgreSQL inside `stasis_upload_store_v1`
  /// and after a discard), under the slot's write lock, as every writer of its pieces is.
  /// `player` and `slot` are the placeholders or names that hold them. `followsChains: false`
  /// is a seam only the simulation's build sets: the pieces that needed pieces are built on
  /// are not kept.
  static func collectPieces(_ player: String, _ slot: String, followsChains: Bool = true) -> String {
    let chains =
      followsChains
      ? "\n    UNION SELECT p.base FROM pieces p JOIN needed n ON p.id = n.id WHERE p.base IS NOT NULL" : ""
    return """
      WITH RECURSIVE needed(id) AS (
          SELECT r.piece FROM revisions r WHERE r.player_id = \(player) AND r.slot = \(slot) AND r.piece IS NOT NULL
          UNION SELECT u.delta_piece FROM uploads u
            WHERE u.player_id = \(player) AND u.slot = \(slot) AND u.delta_piece IS NOT NULL\(chains)
        )
        DELETE FROM pieces WHERE player_id = \(player) AND slot = \(slot) AND id NOT IN (SELECT id FROM needed)
      """
  }
}

#if SimulationSeams
  /// The storage rules under the name the simulation's build gives every seam.
  package typealias StorageSeams = StorageRules

  extension SQLiteBackend {
    /// A backend whose rules are varied by `seams`: the simulation's honesty check.
    package convenience init(path: String, seams: StorageSeams, smallestDelta: Int = PieceRules.smallestDelta) throws {
      try self.init(path: path, smallestDelta: smallestDelta, rules: seams)
    }
  }

  extension PostgresBackend {
    /// A backend whose rules are varied by `seams`: the simulation's honesty check. The
    /// upload function it creates (``migrate()``) collects pieces as they say, in its database,
    /// for every server on it: give it a database of its own.
    package convenience init(
      url: String, connections: Int = 20, smallestDelta: Int = PieceRules.smallestDelta, seams: StorageSeams,
      logger: Logger
    ) throws {
      try self.init(
        url: url, connections: connections, statementTimeout: nil, smallestDelta: smallestDelta, logger: logger,
        rules: seams)
    }
  }
#endif
