/// The last 9 states before each step, newest last: an 8-step rollback window, as rollback
/// netcode keeps. Copies are cheap: the arrays are shared until written.
public struct RollbackRing: Sendable {
  /// States kept.
  public static let capacity = 9
  /// The states, oldest first.
  public private(set) var states: [GameState] = []

  /// Keeps `state`, dropping the oldest when full.
  mutating func record(_ state: GameState) {
    states.append(state)
    if states.count > Self.capacity { states.removeFirst() }
  }

  /// The state `steps` steps back (1 is the state before the last step), if kept.
  func state(stepsBack steps: Int) -> GameState? {
    guard steps >= 1, steps <= states.count else { return nil }
    return states[states.count - steps]
  }

  /// Forgets the newest `steps` states (after rolling back over them).
  mutating func drop(_ steps: Int) { states.removeLast(min(steps, states.count)) }
}
