import Stasis
import StasisMerge
import Testing

/// A turn-based roguelike's state, the shape issue 21 met: a 256×256 tile map as a bulk
/// array, monsters that refer to each other by id, staircases, a message log.
struct Tile: BulkStorable, Equatable {
  var kind: UInt8 = 0
  static let bulkLayout = BulkLayout(of: Tile.self, [.field("kind", \.kind)])
}

struct Monster: Codable, Sendable, Equatable {
  var id: Int
  var hp = 10
  var x = 0
  var y = 0
}

struct Roguelike: Codable, Sendable, Equatable {
  struct Player: Codable, Sendable, Equatable {
    var gold = 0
    var depth = 1
  }
  var map: [Tile]
  var monsters: [Monster]
  var stairs: [Int]
  var log: [String] = ["Welcome."]
  var player = Player()

  /// A new level from `seed`: the same size every time, different tiles, monsters and stairs.
  static func level(seed: UInt64, depth: Int) -> Roguelike {
    var random = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    func next() -> Int {
      random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int(truncatingIfNeeded: random >> 33)
    }
    let map = (0..<(256 * 256)).map { _ in Tile(kind: UInt8(next() % 3)) }
    let monsters = (0..<25).map { Monster(id: depth * 100 + $0, hp: 5 + next() % 10, x: next() % 256, y: next() % 256) }
    var level = Roguelike(map: map, monsters: monsters, stairs: [next() % 65536])
    level.player.depth = depth
    return level
  }
}

/// A bulk array's element with an id: a particle system the game declares by key.
struct Particle: BulkStorable, Equatable {
  var id: UInt32 = 0
  var x: Float = 0
  static let bulkLayout = BulkLayout(of: Particle.self, [.field("id", \.id), .field("x", \.x)])
}

struct Emitter: Codable, Sendable, Equatable {
  var particles: [Particle]
}

private let dungeonCodec = SaveCodec<Roguelike>(game: GameIdentity(name: "roguelike", build: "1", schemaVersion: 1))

private func save(_ state: Roguelike) throws -> SaveDocument {
  try dungeonCodec.document(for: state, summary: SaveSummary(), createdAt: 0)
}

private func merged(_ outcome: MergeOutcome) throws -> Roguelike {
  try dungeonCodec.state(from: try #require(outcome.document, "unsettled: \(outcome.unsettled.map(\.path))"))
}

@Suite("A declared merge never builds a world no device saw")
struct DeclaredMergeTests {
  let base = Roguelike.level(seed: 1, depth: 1)

  @Test("two new maps of the same size, one per device: one side's map, whole, never a mix")
  func twoNewMaps() throws {
    var ours = Roguelike.level(seed: 2, depth: 2)
    ours.log = base.log + ["You go down the stairs."]
    var theirs = Roguelike.level(seed: 3, depth: 2)
    theirs.log = base.log + ["You descend."]
    #expect(ours.map.count == theirs.map.count && ours.map.count == base.map.count, "lengths match, as in the issue")
    let (b, o, t) = (try save(base), try save(ours), try save(theirs))
    for (side, expected) in [(MergeSide.theirs, theirs), (.ours, ours)] {
      let outcome = ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: side, createdAt: 1)
      let state = try merged(outcome)
      #expect(state.map == expected.map, "the map is \(side)'s, tile for tile")
      #expect(state.monsters == expected.monsters, "the monsters are \(side)'s")
      #expect(state.stairs == expected.stairs)
      #expect(state == expected, "every section both changed is \(side)'s: a world \(side) saw")
      #expect(outcome.conflicts.map(\.path) == ["log", "map", "monsters", "stairs"], "one per section both changed")
      #expect(outcome.sections.first { $0.name == "map" }?.source == .side(side))
      #expect(
        outcome.sections.first { $0.name == "map" }?.description
          == "map: \(side.rawValue) (both changed it: policy: \(side.rawValue))")
    }
    let unsettled = ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: nil, createdAt: 1)
    #expect(unsettled.document == nil, "no fallback: nothing is made up")
    #expect(unsettled.sections.first { $0.name == "map" }?.source == .unsettled)
  }

  @Test("entities by key: ids inserted and removed on both sides each keep their side's change")
  func byKey() throws {
    var start = base
    start.monsters = (1...4).map { Monster(id: $0, hp: 10, x: $0, y: 0) }
    var ours = start
    ours.monsters.removeAll { $0.id == 2 }  // ours killed 2
    ours.monsters.insert(Monster(id: 5, hp: 3), at: 0)  // and met 5
    ours.monsters[2].hp = 5  // and hit 3
    var theirs = start
    theirs.monsters.removeAll { $0.id == 4 }  // theirs killed 4
    theirs.monsters.append(Monster(id: 6, hp: 8))  // and met 6
    theirs.monsters[0].x = 40  // 1 walked
    theirs.monsters[2].hp = 7  // and hit 3 less hard,
    theirs.monsters[2].y = 9  // which moved it
    #expect(ours.monsters.count == theirs.monsters.count, "equal lengths: an index-wise merge would pair 5 with 1")
    let rules = MergeRules(["monsters": .byKey("id"), "monsters[*].hp": .min])
    let outcome = ThreeWayMerge.merge(
      base: try save(start), ours: try save(ours), theirs: try save(theirs), rules: rules, fallback: .theirs,
      createdAt: 1)
    let monsters = try merged(outcome).monsters
    #expect(monsters.map(\.id) == [5, 1, 3, 6], "2 and 4 are gone, 5 and 6 are in, each where its side put it")
    #expect(monsters.first { $0.id == 1 } == Monster(id: 1, hp: 10, x: 40, y: 0), "changed by theirs only")
    #expect(monsters.first { $0.id == 3 } == Monster(id: 3, hp: 5, x: 3, y: 9), "both: hp by min, y from theirs")
    #expect(monsters.first { $0.id == 5 } == Monster(id: 5, hp: 3), "added by ours")
    #expect(outcome.conflicts.map(\.path) == ["monsters[id=3].hp"])
    #expect(outcome.conflicts.first?.resolution == "rule min (monsters[*].hp)")

    // One side removed what the other changed: the fallback decides, whole.
    var removed = start
    removed.monsters.removeAll { $0.id == 3 }
    let (r, c) = (try save(removed), try save(ours))
    let keepsIt = ThreeWayMerge.merge(
      base: try save(start), ours: c, theirs: r, rules: rules, fallback: .ours, createdAt: 1)
    #expect(try merged(keepsIt).monsters.map(\.id) == [5, 1, 3, 4], "ours changed 3 and wins: it stays")
    let dropsIt = ThreeWayMerge.merge(
      base: try save(start), ours: c, theirs: r, rules: rules, fallback: .theirs, createdAt: 1)
    #expect(try merged(dropsIt).monsters.map(\.id) == [5, 1, 4], "theirs removed 3 and wins: it is gone")
    #expect(dropsIt.conflicts.map(\.path) == ["monsters[id=3]"])
  }

  @Test("a group always comes from one side, even when each side changed a different member")
  func group() throws {
    var ours = Roguelike.level(seed: 2, depth: 2)  // ours went down: new map, monsters, stairs
    ours.player = base.player
    ours.log = base.log
    var theirs = base
    theirs.monsters[0].hp = 1  // theirs fought on the old level
    theirs.player.gold = 50
    let rules = MergeRules([:], groups: [["map", "monsters", "stairs"]])
    let (b, o, t) = (try save(base), try save(ours), try save(theirs))
    let oursWins = try merged(
      ThreeWayMerge.merge(base: b, ours: o, theirs: t, rules: rules, fallback: .ours, createdAt: 1))
    #expect(oursWins.map == ours.map && oursWins.monsters == ours.monsters && oursWins.stairs == ours.stairs)
    #expect(oursWins.player.gold == 50, "outside the group, theirs' change stands")
    let outcome = ThreeWayMerge.merge(base: b, ours: o, theirs: t, rules: rules, fallback: .theirs, createdAt: 1)
    let theirsWins = try merged(outcome)
    #expect(theirsWins.map == base.map, "the old level, whole: its map")
    #expect(theirsWins.monsters == theirs.monsters, "with theirs' monsters")
    #expect(theirsWins.stairs == base.stairs, "and its stairs, though only ours changed them")
    #expect(outcome.conflicts.map(\.path) == ["map+monsters+stairs"])
    #expect(
      outcome.sections.map(\.description) == [
        "log: unchanged (neither side changed it)",
        "map: theirs (group map+monsters+stairs: both changed it: policy: theirs)",
        "monsters: theirs (group map+monsters+stairs: both changed it: policy: theirs)",
        "player: theirs (only theirs changed it)",
        "stairs: theirs (group map+monsters+stairs: both changed it: policy: theirs)",
      ])
    // Only one side touched the group: that side's, whole, and no conflict.
    let quiet = ThreeWayMerge.merge(base: b, ours: o, theirs: try save(base), rules: rules, fallback: nil, createdAt: 1)
    #expect(try merged(quiet).map == ours.map)
    #expect(quiet.conflicts.isEmpty)
  }

  @Test("a group member inside a section comes from the group's side, even where only the other side changed it")
  func nestedGroupMember() throws {
    var ours = base
    ours.map[0].kind = 7  // ours dug
    var theirs = base
    theirs.player = Roguelike.Player(gold: 5, depth: 2)  // theirs went down and found gold
    let rules = MergeRules([:], groups: [["map", "player.depth"]])
    let outcome = ThreeWayMerge.merge(
      base: try save(base), ours: try save(ours), theirs: try save(theirs), rules: rules, fallback: .ours,
      createdAt: 1)
    let state = try merged(outcome)
    #expect(state.map == ours.map)
    #expect(state.player == Roguelike.Player(gold: 5, depth: 1), "depth goes with ours' map; gold is theirs")
    #expect(outcome.conflicts.map(\.path) == ["map+player.depth"])
    #expect(outcome.sections.first { $0.name == "player" }?.source == .merged)
  }

  @Test("a bulk array is whole unless declared; by index or by key when it is")
  func bulkWhole() throws {
    var ours = base
    ours.map[0].kind = 7  // ours dug here
    var theirs = base
    theirs.map[1].kind = 9  // theirs dug there
    let (b, o, t) = (try save(base), try save(ours), try save(theirs))
    let whole = ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: .theirs, createdAt: 1)
    #expect(try merged(whole).map == theirs.map, "theirs' map, whole: tile 0 is not ours' 7")
    #expect(whole.conflicts.map(\.path) == ["map"])
    let declared = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t, rules: ["map": .byIndex], fallback: .theirs, createdAt: 1)
    let tiles = try merged(declared).map
    #expect(tiles[0].kind == 7 && tiles[1].kind == 9, "declared by index: each side's tile")
    #expect(declared.conflicts.isEmpty)
    #expect(declared.sections.first { $0.name == "map" }?.source == .merged)
  }

  @Test("a log merges by union; flags by max; a declared field leaves the rest of its section whole")
  func unionAndFields() throws {
    var ours = base
    ours.log += ["You find 3 gold.", "A rat bites!"]
    ours.player = Roguelike.Player(gold: 3, depth: 3)
    var theirs = base
    theirs.log = ["You descend."]  // theirs trimmed the log and added one line
    theirs.player = Roguelike.Player(gold: 9, depth: 2)
    let rules = MergeRules(["log": .union, "player.gold": .max])
    let outcome = ThreeWayMerge.merge(
      base: try save(base), ours: try save(ours), theirs: try save(theirs), rules: rules, fallback: .ours,
      createdAt: 1)
    let state = try merged(outcome)
    #expect(state.log == ["You find 3 gold.", "A rat bites!", "You descend."], "theirs' removal and addition kept")
    #expect(state.player == Roguelike.Player(gold: 9, depth: 3), "gold by max; depth is the rest: ours, whole")
    #expect(
      outcome.sections.first { $0.name == "player" }?.description
        == "player: merged (other fields: policy: ours; player.gold: rule max (player.gold))")
  }

  @Test("a bulk array declared by key: elements added, removed and changed on each side, each whole")
  func bulkByKey() throws {
    let codec = SaveCodec<Emitter>(game: GameIdentity(name: "emitter", build: "1", schemaVersion: 1))
    func save(_ particles: [Particle]) throws -> SaveDocument {
      try codec.document(for: Emitter(particles: particles), summary: SaveSummary(), createdAt: 0)
    }
    let base = (1...3).map { Particle(id: UInt32($0), x: Float($0)) }
    let ours = [base[0], base[2], Particle(id: 4, x: 4)]  // 2 burnt out, 4 spawned
    var theirs = base
    theirs[2].x = 30  // 3 moved
    let outcome = ThreeWayMerge.merge(
      base: try save(base), ours: try save(ours), theirs: try save(theirs), rules: ["particles": .byKey("id")],
      fallback: nil, createdAt: 1)
    let merged = try codec.state(from: try #require(outcome.document)).particles
    #expect(merged == [Particle(id: 1, x: 1), Particle(id: 3, x: 30), Particle(id: 4, x: 4)])
    #expect(outcome.conflicts.isEmpty)
  }
}
