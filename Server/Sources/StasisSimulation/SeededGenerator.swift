import StasisTesting

/// The simulation's only source of randomness, so a seed replays a run exactly: StasisTesting's
/// ``SeededRandom`` (SplitMix64), with the draws the operations use.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
  private var random: SeededRandom

  /// A generator that starts from `seed`.
  public init(seed: UInt64) { random = SeededRandom(seed: seed) }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 { random.next() }

  /// A number in `0..<count` (0 when `count` is 0).
  public mutating func below(_ count: Int) -> Int {
    count <= 0 ? 0 : Int(next() % UInt64(count))
  }

  /// True with probability `percent`/100.
  public mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
