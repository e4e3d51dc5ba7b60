import Stasis

/// The city builder that found whole uploads: agents as a bulk array, a grid, a ledger.
struct Agent: BulkStorable, Equatable {
  var x: Float = 0
  var y: Float = 0
  var home: UInt32 = 0
  var mood: UInt32 = 0

  static let bulkLayout = BulkLayout(
    of: Agent.self, [.field("x", \.x), .field("y", \.y), .field("home", \.home), .field("mood", \.mood)])
}

struct LedgerEntry: Codable, Equatable {
  var tick: Int64
  var amount: Int64
  var memo: String
}

struct CityState: Codable, Equatable {
  var agents: [Agent]
  var grid: [UInt8]
  var ledger: [LedgerEntry]

  /// A city of `agents` agents and a `side`×`side` grid, the same for the same `seed`.
  init(agents count: Int, side: Int, ledger: Int, seed: UInt64) {
    var random = SplitMix(seed)
    agents = (0..<count).map { index in
      Agent(x: random.unit() * 512, y: random.unit() * 512, home: UInt32(index), mood: UInt32(random.next() % 100))
    }
    grid = (0..<(side * side)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    self.ledger = (0..<ledger).map {
      LedgerEntry(tick: Int64($0), amount: Int64(random.next() % 1000), memo: "tax \($0)")
    }
  }

  /// Moves `fraction` of the agents, chosen at random.
  mutating func tick(moving fraction: Double, seed: UInt64) {
    var random = SplitMix(seed)
    for _ in 0..<Int(Double(agents.count) * fraction) {
      let index = Int(random.next() % UInt64(agents.count))
      agents[index].x = random.unit() * 512
      agents[index].y = random.unit() * 512
    }
  }

  func file(frame: Int64 = 0) throws -> [UInt8] {
    let codec = SaveCodec<CityState>(game: GameIdentity(name: "City", build: "1"))
    let document = try codec.document(for: self, summary: SaveSummary(frame: frame), createdAt: 1_700_000_000_000)
    return SaveFileFormat.encode(document)
  }
}

struct SplitMix {
  var state: UInt64
  init(_ seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  mutating func unit() -> Float { Float(next() >> 40) / Float(1 << 24) }
}
