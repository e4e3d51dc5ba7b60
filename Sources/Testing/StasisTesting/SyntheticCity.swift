import Stasis

/// A large state for measuring what saving and syncing cost as a game grows: a city builder's
/// agents as a bulk array, its grid as bytes, and a ledger as a log in the tree. The same seed
/// gives the same city, byte for byte.
///
/// ```swift
/// var city = SyntheticCity(agents: 1_000_000, side: 512, ledger: 1_000, seed: 1)
/// let before = try city.file()
/// city.tick(moving: 0.01, seed: 2)  // 1% of the agents move
/// let after = try city.file(frame: 1)
/// ```
public struct SyntheticCity: Codable, Equatable, Sendable {
  /// One agent: 16 bytes, stored as raw bytes.
  public struct Agent: BulkStorable, Equatable {
    /// Position, in metres.
    public var x: Float = 0
    /// Position, in metres.
    public var y: Float = 0
    /// The agent's home, a grid cell index.
    public var home: UInt32 = 0
    /// 0–99.
    public var mood: UInt32 = 0

    /// Creates an agent at the origin.
    public init() {}

    /// Creates an agent.
    public init(x: Float, y: Float, home: UInt32, mood: UInt32) {
      self.x = x
      self.y = y
      self.home = home
      self.mood = mood
    }

    /// The four fields, by key path.
    public static let bulkLayout = BulkLayout(
      of: Agent.self, [.field("x", \.x), .field("y", \.y), .field("home", \.home), .field("mood", \.mood)])
  }

  /// One line of the city's books.
  public struct LedgerEntry: Codable, Equatable, Sendable {
    /// The tick it was written at.
    public var tick: Int64
    /// Coins, positive or negative.
    public var amount: Int64
    /// What for.
    public var memo: String

    /// Creates an entry.
    public init(tick: Int64, amount: Int64, memo: String) {
      self.tick = tick
      self.amount = amount
      self.memo = memo
    }
  }

  /// The agents: the bulk of the state.
  public var agents: [Agent]
  /// A `side`×`side` grid of cell kinds.
  public var grid: [UInt8]
  /// The books: a log that grows.
  public var ledger: [LedgerEntry]

  /// A city of `agents` agents, a `side`×`side` grid and `ledger` entries, the same for the same `seed`.
  public init(agents count: Int, side: Int, ledger: Int, seed: UInt64) {
    var random = SeededRandom(seed: seed)
    agents = (0..<count).map { index in
      Agent(x: random.unit() * 512, y: random.unit() * 512, home: UInt32(index), mood: UInt32(random.next() % 100))
    }
    grid = (0..<(side * side)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
    self.ledger = (0..<ledger).map {
      LedgerEntry(tick: Int64($0), amount: Int64(random.next() % 1000), memo: "tax \($0)")
    }
  }

  /// Moves `fraction` of the agents, chosen at random from `seed` (an agent may move twice).
  public mutating func tick(moving fraction: Double, seed: UInt64) {
    var random = SeededRandom(seed: seed)
    for _ in 0..<Int(Double(agents.count) * fraction) {
      let index = Int(random.next() % UInt64(agents.count))
      agents[index].x = random.unit() * 512
      agents[index].y = random.unit() * 512
    }
  }

  /// The game the city's saves say they are from.
  public static let game = GameIdentity(name: "City", build: "1")

  /// The city as a save file.
  public func file(frame: Int64 = 0) throws(SaveFileError) -> [UInt8] {
    let codec = SaveCodec<SyntheticCity>(game: Self.game)
    let document = try codec.document(for: self, summary: SaveSummary(frame: frame), createdAt: 1_700_000_000_000)
    return SaveFileFormat.encode(document)
  }
}

extension SeededRandom {
  /// A number in [0, 1) with 24 bits: the city's coordinates.
  mutating func unit() -> Float { Float(next() >> 40) / Float(1 << 24) }
}
