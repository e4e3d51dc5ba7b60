/// A restore that found saves in the slot but could not make a state of them: the newest is
/// one this build cannot read (a newer schema, a field it cannot decode, another key), or
/// every generation is damaged. The game is held until it answers with a ``RestoreChoice``
/// (``SaveCoordinator/resolveRestoreFailure(_:)``); nothing is saved into the slot meanwhile.
public struct RestoreFailure: Sendable, Equatable {
  /// Which of the three holds this is: each says what the game offers the player.
  public enum Reason: Sendable, Equatable {
    /// The slot's newest generation (or every one) cannot be made a state: a newer schema, a
    /// field this build cannot decode, another key, damage. Offer ``RestoreFailure/olderGeneration``
    /// or a start-over.
    case unreadable
    /// An older build saved beside this build's newer save (``SaveFileError/Kind/savedAlongside``):
    /// generation `newer` is that newer save, which this build reads, and
    /// ``RestoreFailure/olderGeneration`` is the older build's newest. Offer both; the one not
    /// chosen stays kept until discarded.
    case savedAlongside(newer: Int)
    /// The save this build cannot read is not in the slot but the cloud's (a head a newer build
    /// uploaded from another device, ``CatchUp/finish(unreadable:)``). Every local generation
    /// still loads; ``RestoreFailure/olderGeneration`` is the one the game holds (nil when the
    /// slot is empty), and ``RestoreChoice/loadGeneration(_:)`` plays on from it beside the
    /// newer save. ``RestoreChoice/startOver`` is refused while the game holds a generation (a
    /// new game is a launch without a slot to restore). Its uploads never go on top of the newer
    /// save: they wait as a conflict until a build that reads both settles it. It comes when a
    /// catch-up ends (after launch, or on a return), and ends by itself when a later catch-up
    /// restores a save this build reads.
    case newerInCloud

    /// The newer save of a ``savedAlongside(newer:)`` hold, or nil.
    public var newer: Int? {
      if case .savedAlongside(let newer) = self { newer } else { nil }
    }
  }

  /// What stopped the restore, naming the generation and the cause.
  public var error: SaveFileError
  /// The newest older generation that loads, when there is one: what
  /// ``RestoreChoice/loadGeneration(_:)`` would restore.
  public var olderGeneration: Int?
  /// Which hold this is.
  public var reason: Reason

  /// The newer save of a ``Reason/savedAlongside(newer:)`` hold, or nil.
  @available(*, deprecated, renamed: "reason.newer")
  public var alongside: Int? { reason.newer }

  /// A hold: what stopped the restore, the older generation that would load, and which hold.
  public init(error: SaveFileError, olderGeneration: Int?, reason: Reason = .unreadable) {
    self.error = error
    self.olderGeneration = olderGeneration
    self.reason = reason
  }

  /// A failure, with the older generation that would load and the save kept alongside.
  @available(*, deprecated, message: "use init(error:olderGeneration:reason:)")
  public init(error: SaveFileError, olderGeneration: Int?, alongside: Int?) {
    self.init(
      error: error, olderGeneration: olderGeneration,
      reason: alongside.map { .savedAlongside(newer: $0) } ?? .unreadable)
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
