import Stasis

/// A game for tests: a state the test sets, that a `SaveCoordinator` pauses, saves and
/// restores, and nothing else. Its restores are counted, and it can refuse one, as a game
/// whose `restore` throws does.
///
/// ```swift
/// let game = TestGame(PlayerState())
/// let coordinator = SaveCoordinator(game: game, store: store, codec: codec, slot: "autosave")
/// game.state.score = 10
/// coordinator.didStep(frame: 1)
/// ```
@MainActor
public final class TestGame<State: Codable & Sendable>: SaveableGame {
  /// The state the test plays with.
  public var state: State
  /// True while the coordinator holds the game (in the background, or waiting on an answer).
  public var isPaused = false
  /// How many restores the game took.
  public private(set) var restores = 0
  /// When set, `restore` throws it and keeps its state: a game that refuses a loaded state.
  public var refusal: (any Error)?
  /// The header's summary of a state; empty when nil.
  public var summarize: (@MainActor (State) throws -> SaveSummary)?

  /// A game whose state starts as `state`.
  public init(_ state: State) {
    self.state = state
  }

  /// The state, copied.
  public func snapshot() -> State { state }

  /// Takes `saved`, unless ``refusal`` is set.
  public func restore(_ saved: State) throws {
    if let refusal { throw refusal }
    state = saved
    restores += 1
  }

  /// ``summarize``'s summary, or an empty one.
  public func summary(of state: State) throws -> SaveSummary {
    try summarize?(state) ?? SaveSummary()
  }
}
