/// A restore that found saves in the slot but could not make a state of them: the newest is
/// one this build cannot read (a newer schema, a field it cannot decode, another key), or
/// every generation is damaged. The game is held until it answers with a ``RestoreChoice``
/// (``SaveCoordinator/resolveRestoreFailure(_:)``); nothing is saved into the slot meanwhile.
public struct RestoreFailure: Sendable, Equatable {
  /// What stopped the restore, naming the generation and the cause.
  public var error: SaveFileError
  /// The newest older generation that loads, when there is one: what
  /// ``RestoreChoice/loadGeneration(_:)`` would restore.
  public var olderGeneration: Int?
  /// When an older build saved beside this build's newer save (``SaveFileError/Kind/savedAlongside``):
  /// that newer save, which this build reads. Offer both: ``olderGeneration`` is the older
  /// build's newest save. The one not chosen stays kept until discarded.
  public var alongside: Int?

  /// A failure, with the older generation that would load and the save kept alongside.
  public init(error: SaveFileError, olderGeneration: Int?, alongside: Int? = nil) {
    self.error = error
    self.olderGeneration = olderGeneration
    self.alongside = alongside
  }
}

/// How a game answers a ``RestoreFailure``. Either way the generations that failed stay in
/// the slot, kept out of pruning, until discarded (`stasis discard`).
public enum RestoreChoice: Sendable, Equatable {
  /// Play on from this older generation; later saves go on top of the unreadable ones.
  case loadGeneration(Int)
  /// Start a new game in this slot; its saves go on top of the unreadable ones.
  case startOver
}
