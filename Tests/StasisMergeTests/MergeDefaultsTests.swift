import Stasis
import StasisMerge
import Testing

/// An entity id with a generation counter (Box2D's habit): a struct, not a number.
struct EntityID: Codable, Sendable, Equatable {
  var index: Int
  var generation: Int
}

struct Agent: Codable, Sendable, Equatable {
  var id: EntityID
  var cash = 0
}

/// A trader whose id may be unset: a nil id is a field its element does not have.
struct Trader: Codable, Sendable, Equatable {
  var id: Int?
  var cash = 0
}

struct Market: Codable, Sendable, Equatable {
  var traders: [Trader]
}

struct City: Codable, Sendable, Equatable {
  var agents: [Agent]
  var treasury = 0
}

private let cityCodec = SaveCodec<City>(game: GameIdentity(name: "city", build: "1", schemaVersion: 1))
private let dungeonCodec = SaveCodec<Roguelike>(game: GameIdentity(name: "roguelike", build: "1", schemaVersion: 1))

/// The simulated game's own check of a world: every monster stands on a floor tile.
private func creaturesInWalls(_ world: Roguelike) -> Int {
  world.monsters.filter { world.map[$0.y * 256 + $0.x].kind != 0 }.count
}

/// A level whose monsters stand on floor, as the game makes them.
private func carvedLevel(seed: UInt64, depth: Int) -> Roguelike {
  var level = Roguelike.level(seed: seed, depth: depth)
  for monster in level.monsters { level.map[monster.y * 256 + monster.x].kind = 0 }
  return level
}

@Suite("Merge only what the game declared (issue 27, cases 3 and 6)")
struct MergeDefaultsTests {
  @Test("case 3: one device descends to a new map, the other plays two turns: the merge is one side's world")
  func noWorldNoDeviceSaw() throws {
    let base = carvedLevel(seed: 1, depth: 1)
    let laptop = carvedLevel(seed: 3, depth: 3)  // down the stairs: a new map, new monsters
    var deck = base  // two turns offline on the old level, its map untouched
    for index in deck.monsters.indices { deck.monsters[index].hp -= 1 }
    deck.log += ["You hit the rat.", "The rat hits!"]
    deck.player.gold = 7
    #expect(creaturesInWalls(base) == 0 && creaturesInWalls(laptop) == 0 && creaturesInWalls(deck) == 0)
    #expect(
      creaturesInWalls(Roguelike(map: laptop.map, monsters: deck.monsters, stairs: deck.stairs)) > 0,
      "the world the old merge made: the deck's creatures on the laptop's map")

    let (b, o, t) = (
      try dungeonCodec.document(for: base, summary: SaveSummary(), createdAt: 0),
      try dungeonCodec.document(for: deck, summary: SaveSummary(), createdAt: 0),
      try dungeonCodec.document(for: laptop, summary: SaveSummary(), createdAt: 0)
    )
    for (side, expected) in [(MergeSide.ours, deck), (.theirs, laptop)] {
      let outcome = ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: side, createdAt: 1)
      let world = try dungeonCodec.state(from: try #require(outcome.document))
      #expect(world == expected, "no declarations: \(side)'s world, whole")
      #expect(creaturesInWalls(world) == 0)
      #expect(outcome.sections.first { $0.name == "map" }?.source == .side(side))
    }
    // Declared: the level as a group, the gold by max: still a world a device saw, plus the gold.
    var rules = MergeRules(["player.gold": .max])
    rules.group(["map", "monsters", "stairs", "player.depth"])
    let declared = ThreeWayMerge.merge(base: b, ours: o, theirs: t, rules: rules, fallback: .theirs, createdAt: 1)
    let world = try dungeonCodec.state(from: try #require(declared.document))
    #expect(world.map == laptop.map && world.monsters == laptop.monsters && world.player.depth == 3)
    #expect(world.player.gold == 7, "the declared rule still combines")
    #expect(creaturesInWalls(world) == 0)
  }

  @Test("a section with a declared field: its other fields go with the rest, even when one side alone changed them")
  func declaredInsideFollowsTheRest() throws {
    let base = carvedLevel(seed: 1, depth: 1)
    var laptop = carvedLevel(seed: 3, depth: 3)  // went down: a new map, and player.depth 3
    laptop.monsters = base.monsters
    var deck = base
    deck.monsters[0].hp -= 1  // fought on the old level; only the laptop changed `player`
    let (b, o, t) = (
      try dungeonCodec.document(for: base, summary: SaveSummary(), createdAt: 0),
      try dungeonCodec.document(for: deck, summary: SaveSummary(), createdAt: 0),
      try dungeonCodec.document(for: laptop, summary: SaveSummary(), createdAt: 0)
    )
    let outcome = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t, rules: ["player.gold": .max], fallback: .ours, createdAt: 1)
    let world = try dungeonCodec.state(from: try #require(outcome.document))
    #expect(world.map == base.map && world.player.depth == 1, "the deck's level, and the depth that goes with it")
    #expect(world.monsters == deck.monsters)
  }

  @Test("case 6: by-key on a struct id aligns entities by the id's encoded value")
  func structKeys() throws {
    let base = City(agents: (0..<4).map { Agent(id: EntityID(index: $0, generation: 1)) })
    var ours = base
    ours.agents.remove(at: 1)  // agent {1, 1} moved away
    ours.agents.append(Agent(id: EntityID(index: 1, generation: 2)))  // its slot reused: a new agent
    ours.agents[0].cash = 10
    var theirs = base
    theirs.agents[2].cash = 30
    theirs.agents.append(Agent(id: EntityID(index: 4, generation: 1), cash: 5))
    let (b, o, t) = (
      try cityCodec.document(for: base, summary: SaveSummary(), createdAt: 0),
      try cityCodec.document(for: ours, summary: SaveSummary(), createdAt: 0),
      try cityCodec.document(for: theirs, summary: SaveSummary(), createdAt: 0)
    )
    let outcome = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t, rules: ["agents": .byKey("id")], fallback: nil, createdAt: 1)
    let city = try cityCodec.state(from: try #require(outcome.document, "\(outcome.refused?.message ?? "")"))
    #expect(
      city.agents.map { [$0.id.index, $0.id.generation, $0.cash] } == [
        [0, 1, 10], [2, 1, 30], [3, 1, 0], [4, 1, 5], [1, 2, 0],
      ], "each side's change to each entity kept; {1,1} gone and {1,2} new: not the same entity")
    #expect(outcome.conflicts.isEmpty)
  }

  @Test("case 6: a declared path or a key the saves do not have refuses the merge, naming it")
  func unknownPaths() throws {
    let base = City(agents: [Agent(id: EntityID(index: 0, generation: 1))])
    var ours = base
    ours.treasury = 1
    var theirs = base
    theirs.agents[0].cash = 2
    let (b, o, t) = (
      try cityCodec.document(for: base, summary: SaveSummary(), createdAt: 0),
      try cityCodec.document(for: ours, summary: SaveSummary(), createdAt: 0),
      try cityCodec.document(for: theirs, summary: SaveSummary(), createdAt: 0)
    )
    let typo = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t, rules: ["agnets": .byKey("id")], fallback: .ours, createdAt: 1)
    #expect(typo.document == nil)
    #expect(typo.refused == MergeRefusal(.unknownPath, "declared path not in any of the saves: 'agnets'"))
    var grouped = MergeRules(["agents[*].cash": .max, "treasury": .max])
    grouped.group(["agents", "ledger.entries"])
    #expect(grouped.unknownPaths(in: [b, o, t]) == ["ledger.entries"])
    let key = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t, rules: ["agents": .byKey("uuid")], fallback: .ours, createdAt: 1)
    #expect(key.document == nil)
    #expect(key.refused == MergeRefusal(.unknownPath, "declared path not in any of the saves: 'agents[*].uuid'"))
    let fine = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t, rules: ["agents[*].cash": .max, "treasury": .max], fallback: nil, createdAt: 1)
    #expect(fine.refused == nil)
    #expect(try cityCodec.state(from: try #require(fine.document)) == City(agents: theirs.agents, treasury: 1))
  }

  @Test("a key one element lacks refuses the merge as missingKey, naming the element")
  func missingKey() throws {
    let codec = SaveCodec<Market>(game: GameIdentity(name: "market", build: "1", schemaVersion: 1))
    let base = Market(traders: [Trader(id: 1), Trader(id: nil)])
    var ours = base
    ours.traders[0].cash = 5
    var theirs = base
    theirs.traders[0].cash = 7
    let outcome = ThreeWayMerge.merge(
      base: try codec.document(for: base, summary: SaveSummary(), createdAt: 0),
      ours: try codec.document(for: ours, summary: SaveSummary(), createdAt: 0),
      theirs: try codec.document(for: theirs, summary: SaveSummary(), createdAt: 0),
      rules: ["traders": .byKey("id")], fallback: .ours, createdAt: 1)
    #expect(outcome.document == nil)
    #expect(
      outcome.refused
        == MergeRefusal(.missingKey, "'traders' is declared by-key 'id', but its element 1 has no field 'id'"),
      "\(String(describing: outcome.refused))")
  }
}
