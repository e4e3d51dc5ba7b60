/// SplitMix64: a small seeded generator, the same numbers for the same seed on every machine
/// and in every run. For tests that draw at random and must be replayed from the seed they
/// print (`Int.random(in: 0..<10, using: &random)`); never for anything secret.
///
/// ```swift
/// let seed = UInt64.random(in: 0...UInt64.max)
/// print("seed \(seed)")  // replays with SeededRandom(seed: seed)
/// var random = SeededRandom(seed: seed)
/// let delay = Double.random(in: 0..<0.03, using: &random)
/// ```
public struct SeededRandom: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// A generator that draws the same numbers for the same `seed`.
  public init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
