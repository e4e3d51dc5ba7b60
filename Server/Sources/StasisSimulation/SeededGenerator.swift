/// SplitMix64: the simulation's only source of randomness, so a seed replays a run exactly.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// A generator that starts from `seed`.
  public init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number in `0..<count` (0 when `count` is 0).
  public mutating func below(_ count: Int) -> Int {
    count <= 0 ? 0 : Int(next() % UInt64(count))
  }

  /// True with probability `percent`/100.
  public mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}
