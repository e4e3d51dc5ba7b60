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
  /// True when the save this build cannot read is not in the slot but the synchronizer's (a
  /// cloud head a newer build uploaded from another device, ``CatchUp/finish(unreadable:)``):
  /// every local generation still loads, ``olderGeneration`` is the one the game holds (nil
  /// when the slot is empty), and ``RestoreChoice/loadGeneration(_:)`` plays on from it beside
  /// the newer save; ``RestoreChoice/startOver`` is refused while the game holds a generation
  /// (a new game is a launch without a slot to restore). Its uploads never go on top of the
  /// newer save: they wait as a conflict until a build that reads both settles it. Such a hold
  /// comes when a catch-up ends (after launch, or on a return), not only at launch; it ends by
  /// itself when a later catch-up restores a save this build reads.
  public var remote: Bool

  /// A failure, with the older generation that would load and the save kept alongside.
  public init(error: SaveFileError, olderGeneration: Int?, alongside: Int? = nil, remote: Bool = false) {
    self.error = error
    self.olderGeneration = olderGeneration
    self.alongside = alongside
    self.remote = remote
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
