#if SimulationSeams
  /// The storage rules that the simulation's build can vary, one switch each, the same for both
  /// backends: each default is the rule. Only the `SimulationSeams` trait compiles them (on only
  /// in the simulation's build); which variation is a planted bug is the simulation's own
  /// catalogue, and it plants each on SQLite and on PostgreSQL.
  package struct StorageSeams: Sendable {
    /// An upload prunes every older revision but one, whatever the slot keeps.
    package var prunesAllButOne = false
    /// Collection keeps the pieces that needed pieces are deltas on, not only those named.
    package var followsChains = true
    /// The settings merge keeps a stored value with a newer stamp.
    package var settingsUpsertIsConditional = true

    /// The rules.
    package init() {}
  }
#else
  /// Nothing: only the simulation's build varies the storage rules (and no type of that name
  /// exists in any other build: `scripts/check-no-planted-bugs.sh` looks for it).
  package typealias StorageSeams = Void
#endif

/// A backend whose storage rules the simulation's build can vary: both read each rule here, so
/// the rules and their constants are written once.
protocol VariedStorageRules {
  #if SimulationSeams
    /// The storage rules as the simulation varies them; the defaults are the rules.
    var seams: StorageSeams { get }
  #endif
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
  #if SimulationSeams
    var prunesAllButOne: Bool { seams.prunesAllButOne }
    var followsChains: Bool { seams.followsChains }
    var settingsUpsertIsConditional: Bool { seams.settingsUpsertIsConditional }
  #else
    // The storage rules: constants outside the simulation's build.
    var prunesAllButOne: Bool { false }
    var followsChains: Bool { true }
    var settingsUpsertIsConditional: Bool { true }
  #endif
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
