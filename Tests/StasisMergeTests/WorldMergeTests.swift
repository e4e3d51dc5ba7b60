import Stasis
import StasisMerge
import Testing

/// A position, saved in bulk.
private struct Place: BulkStorable, Equatable {
  var x: Float = 0
  static let bulkLayout = BulkLayout(of: Place.self, [.field("x", \.x)])
}

/// A world by hand: each entity's health (a tree), place (bulk) and target (a reference).
private func world(
  _ entities: [UInt64: (health: Int?, x: Float?, target: UInt64?)], next: UInt64
) throws -> SaveDocument {
  let ids = entities.keys.sorted()
  func column(_ name: String, _ pick: (UInt64) -> SaveValue?) -> WorldSnapshot.Column {
    let members = ids.filter { pick($0) != nil }
    return WorldSnapshot.Column(
      name: name, version: 1, entities: members.map(EntityIdentity.init), values: .array(members.map { pick($0)! }))
  }
  let placed = ids.filter { entities[$0]!.x != nil }
  let place = WorldSnapshot.Column(
    name: "place", version: 1, entities: placed.map(EntityIdentity.init),
    values: .bulk(BulkArray(placed.map { Place(x: entities[$0]!.x!) })))
  let snapshot = WorldSnapshot(
    entities: ids.map(EntityIdentity.init), nextIdentity: next,
    columns: [
      column("health") { id in entities[id]!.health.map { .object(SaveObject([("points", .int64(Int64($0)))])) } },
      column("aim") { id in
        entities[id]!.target.map { .object(SaveObject([("target", .object(SaveObject([("$entity", .uint64($0))])))])) }
      },
      place,
    ])
  return SaveDocument(
    game: GameIdentity(name: "rocks"), createdAt: 0, summary: SaveSummary(),
    sections: [SaveSection(name: "world", content: .tree(snapshot.tree))])
}

private func merged(_ outcome: MergeOutcome) throws -> WorldSnapshot {
  let document = try #require(
    outcome.document, "refused: \(outcome.refused?.message ?? "unsettled \(outcome.unsettled.map(\.path))")")
  guard case .tree(let tree)? = document[section: "world"]?.content else { throw SaveFileError(.malformed, "no world") }
  return try WorldSnapshot(tree: tree)
}

private func health(_ world: WorldSnapshot, _ id: UInt64) -> Int64? {
  world.column("health")?.value(of: EntityIdentity(rawValue: id))?[field: "points"]?.int64Value
}

@Suite("Entity worlds merge by entity")
struct WorldMergeTests {
  let base: SaveDocument
  init() throws {
    base = try world([1: (3, 0, nil), 2: (2, 10, nil), 3: (1, 20, 2)], next: 4)
  }

  @Test("an entity removed on one side and changed on the other follows the rule for world[*], else the fallback")
  func removedAndChanged() throws {
    let ours = try world([1: (5, 0, nil), 3: (1, 20, nil)], next: 4)  // #2 died; #3 lost its aim
    let theirs = try world([1: (3, 0, nil), 2: (9, 10, nil), 3: (1, 25, 2)], next: 4)  // #2 healed; #3 moved
    for (rule, fallback, survives) in [
      (MergeRule.ours, MergeSide.theirs, false), (.theirs, .ours, true), (nil, .theirs, true), (nil, .ours, false),
    ] {
      var rules: MergeRules = ["world": .byEntity]
      if let rule { rules["world[*]"] = rule }
      let outcome = ThreeWayMerge.merge(
        base: base, ours: ours, theirs: theirs, rules: rules, fallback: fallback, createdAt: 1)
      let result = try merged(outcome)
      #expect(
        result.entities.contains(EntityIdentity(rawValue: 2)) == survives, "rule \(rule?.name ?? "-"), \(fallback)")
      #expect(health(result, 1) == 5, "ours alone changed #1")
      #expect(result.column("place")?.value(of: EntityIdentity(rawValue: 3))?[field: "x"] == .float32(25))
      #expect(result.column("aim")?.value(of: EntityIdentity(rawValue: 3)) == nil, "ours alone removed #3's aim")
      #expect(outcome.conflicts.map(\.path).contains("world[#2]"))
    }
  }

  @Test("a component field both sides changed follows its rule: world[*].health.points = max")
  func componentRule() throws {
    let ours = try world([1: (5, 0, nil), 2: (2, 10, nil), 3: (1, 20, 2)], next: 4)
    let theirs = try world([1: (7, 0, nil), 2: (2, 10, nil), 3: (1, 20, 2)], next: 4)
    let outcome = ThreeWayMerge.merge(
      base: base, ours: ours, theirs: theirs, rules: ["world": .byEntity, "world[*].health.points": .max],
      fallback: .ours, createdAt: 1)
    #expect(health(try merged(outcome), 1) == 7)
    #expect(outcome.conflicts.first?.resolution == "rule max (world[*].health.points)")
  }

  @Test("a rule below a bulk component is refused by name: a bulk component merges whole")
  func ruleBelowBulkRefused() throws {
    let ours = try world([1: (3, 5, nil), 2: (2, 10, nil), 3: (1, 20, 2)], next: 4)
    let theirs = try world([1: (3, 7, nil), 2: (2, 10, nil), 3: (1, 20, 2)], next: 4)
    let outcome = ThreeWayMerge.merge(
      base: base, ours: ours, theirs: theirs, rules: ["world": .byEntity, "world[*].place.x": .max],
      fallback: .ours, createdAt: 1)
    #expect(outcome.document == nil)
    #expect(outcome.refused?.kind == .unknownPath)
    #expect(
      outcome.refused?.message.contains("world[*].place.x") == true, "\(outcome.refused?.message ?? "no refusal")")
    let whole = ThreeWayMerge.merge(
      base: base, ours: ours, theirs: theirs, rules: ["world": .byEntity, "world[*].place": .theirs],
      fallback: .ours, createdAt: 1)
    #expect(try merged(whole).column("place")?.value(of: EntityIdentity(rawValue: 1))?[field: "x"] == .float32(7))
  }

  @Test("two spawns under one identity, one per side, stay two entities, and references follow the renamed one")
  func bothSpawned() throws {
    let ours = try world([1: (3, 0, nil), 2: (2, 10, nil), 3: (1, 20, 2), 4: (10, 1, nil)], next: 5)
    let theirs = try world([1: (3, 0, nil), 2: (2, 10, nil), 3: (1, 20, 2), 4: (20, 2, nil), 5: (nil, 3, 4)], next: 6)
    let result = try merged(
      ThreeWayMerge.merge(
        base: base, ours: ours, theirs: theirs, rules: ["world": .byEntity], fallback: .ours, createdAt: 1))
    #expect(result.entities.map(\.rawValue) == [1, 2, 3, 4, 5, 6])
    #expect(health(result, 4) == 10)
    #expect(health(result, 6) == 20, "theirs' spawn, renamed")
    #expect(
      result.column("aim")?.value(of: EntityIdentity(rawValue: 5))?[field: "target"]?[field: "$entity"] == .uint64(6))
    #expect(result.nextIdentity == 7)
  }

  @Test("an identity ours gave to an entity it has since removed is not given to theirs' spawn")
  func noIdentityMeansTwoThings() throws {
    let ours = try world([1: (3, 0, nil), 2: (2, 10, nil), 3: (1, 20, 2)], next: 5)  // spawned #4, and it died
    let theirs = try world([1: (3, 0, nil), 2: (2, 10, nil), 3: (1, 20, 2), 4: (8, 4, nil)], next: 5)
    let result = try merged(
      ThreeWayMerge.merge(
        base: base, ours: ours, theirs: theirs, rules: ["world": .byEntity], fallback: .ours, createdAt: 1))
    #expect(result.entities.map(\.rawValue) == [1, 2, 3, 5])
    #expect(health(result, 5) == 8)
    #expect(result.nextIdentity == 6)
  }

  @Test("without by-entity a world both sides changed is one value, from the fallback side")
  func undeclaredIsWhole() throws {
    let ours = try world([1: (5, 0, nil), 2: (2, 10, nil), 3: (1, 20, 2)], next: 4)
    let theirs = try world([1: (3, 0, nil), 2: (2, 10, nil), 3: (1, 25, 2)], next: 4)
    let result = try merged(
      ThreeWayMerge.merge(base: base, ours: ours, theirs: theirs, fallback: .theirs, createdAt: 1))
    #expect(health(result, 1) == 3)
  }
}
