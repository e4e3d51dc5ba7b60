/// A sync test for a game's own tests, as ggrs's `SyncTestSession` and GGPO's SyncTest: every
/// frame, after the real step, the state is rolled back `depth` frames and stepped again with
/// the same inputs; the digest must be the one the real steps reached. A step that reads
/// anything the state does not hold (a `static var`, the wall clock, a `Dictionary`'s order, a
/// cache that outlives a rollback) fails it, at the first frame where it shows.
///
/// ```swift
/// var sync = SyncTest(depth: 8, step: { (state: inout World, input: Input) in state.step(input) },
///                     digest: { $0.digest })
/// var world = World(seed: 7)
/// for input in inputs { try sync.advance(&world, with: input) }
/// ```
///
/// `Digest` is whatever the game compares states by: StasisReplay's `DigestScope`, or the
/// state itself when it is `Equatable`.
public struct SyncTest<State, Input, Digest: Equatable> {
  /// How many frames each check rolls back.
  public let depth: Int
  /// The frames advanced so far.
  public private(set) var frame = 0
  private let step: (inout State, Input) -> Void
  private let digest: (State) -> Digest
  /// The last `depth` frames: the state before each, and its input.
  private var history: [(state: State, input: Input)] = []

  /// A sync test rolling back `depth` frames (at least 1).
  public init(depth: Int, step: @escaping (inout State, Input) -> Void, digest: @escaping (State) -> Digest) {
    self.depth = max(1, depth)
    self.step = step
    self.digest = digest
  }

  /// Steps `state` with `input`, then rolls back up to ``depth`` frames, steps again and
  /// compares; throws at the first frame whose re-simulation differs.
  public mutating func advance(_ state: inout State, with input: Input) throws(SyncTestFailure) {
    history.append((state, input))
    if history.count > depth { history.removeFirst() }
    step(&state, input)
    frame += 1
    var again = history[0].state
    for (_, input) in history { step(&again, input) }
    let reached = digest(state)
    let replayed = digest(again)
    if reached != replayed {
      throw SyncTestFailure(
        frame: frame, rolledBack: history.count, reached: String(describing: reached),
        replayed: String(describing: replayed))
    }
  }
}

/// A sync test's failure: the frame whose re-simulation went another way.
public struct SyncTestFailure: Error, Sendable, Equatable, CustomStringConvertible {
  /// The frame the real steps had reached (1 for the first `advance`).
  public let frame: Int
  /// How many frames were rolled back and stepped again.
  public let rolledBack: Int
  /// The digest the real steps reached.
  public let reached: String
  /// The digest the re-simulation reached.
  public let replayed: String

  public var description: String {
    "sync test: frame \(frame), rolled back \(rolledBack) frames and stepped again: digest \(replayed), "
      + "where the real steps reached \(reached): the step reads something the state does not hold"
  }
}
