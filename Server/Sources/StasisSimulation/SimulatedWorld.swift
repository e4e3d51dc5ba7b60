import Stasis

// The world build (schema 3): the same game, moved to an entity-component system, as a game
// moves in an update. Its creatures are entities that spawn when the player goes down a level
// and die with it, each following the one spawned before it (a reference between entities);
// its ledger is a journal of entities, one spawned per turn and never removed. The model is
// the other builds', read from the worlds in identity order, so every invariant of the run
// holds it to the same digests.

/// The world build's ECS: a small one of its own, as a game's would be (the simulation links
/// the root's products only, not the tests' `StasisTinyECS`). Ids are reused, most recently
/// freed first, from a first id that differs in each process, and storage is swap-remove: the
/// order and the ids of the live entities depend on the process's history, never on identity.
final class SimECS: EntityWorld {
  private var alive: [UInt64] = []
  private var slot: [UInt64: Int] = [:]  // lookup only: the order is `alive`'s
  private var free: [UInt64] = []
  private var next: UInt64
  /// The components by entity (looked up, never iterated).
  var cells: [UInt64: Cell] = [:]
  var follows: [UInt64: Follows] = [:]
  var entries: [UInt64: Entry] = [:]

  /// An empty world whose first entity is `firstID`.
  init(firstID: UInt64) { next = firstID }

  func entityIDs() -> [UInt64] { alive }

  func spawnEntity() -> UInt64 {
    let id: UInt64
    if let reused = free.popLast() {
      id = reused
    } else {
      id = next
      next += 1
    }
    slot[id] = alive.count
    alive.append(id)
    return id
  }

  func despawnEntity(_ id: UInt64) {
    guard let index = slot.removeValue(forKey: id) else { return }
    let last = alive.count - 1
    if index != last {
      alive[index] = alive[last]
      slot[alive[index]] = index
    }
    alive.removeLast()
    cells[id] = nil
    follows[id] = nil
    entries[id] = nil
    free.append(id)
  }
}

/// A creature's cell: `depth * 1000 + position` (bulk).
struct Cell: BulkStorable {
  var value: Int64 = 0
  static let bulkLayout = BulkLayout(of: Cell.self, [.field("value", \.value)])
}

/// A ledger entry (bulk).
struct Entry: BulkStorable {
  var value: Int64 = 0
  static let bulkLayout = BulkLayout(of: Entry.self, [.field("value", \.value)])
}

/// The creature a creature follows: the one spawned before it on its level.
struct Follows: Codable, Sendable, Equatable {
  var leader = EntityRef.none
}

/// The leader's ECS id saved as a plain number, as a
/// game that knows nothing of identities would save it.
struct RawFollows: Codable, Sendable {
  var leader: UInt64
}

/// Schema 3: the progress as fields, the creatures and the ledger as entity worlds. The field
/// names are schema 2's, so the declared merge's group (`depth` with `creatures`) still names
/// them; the ledger's rule becomes `by-entity` (``GameBuild/worldRules``).
struct StateV3: Codable, Sendable {
  var frame: Int64
  var points: Int64
  var depth: Int64
  var creatures: WorldSnapshot
  var ledger: WorldSnapshot

  /// A state of `model`, its entities spawned in a scratch world in model order (a migration's
  /// and a tool's way to it).
  init(_ model: GameModel) {
    let worlds = SimWorlds(firstID: 0, rawReferences: false)
    worlds.apply(model)
    self = worlds.snapshot()
  }

  init(frame: Int64, points: Int64, depth: Int64, creatures: WorldSnapshot, ledger: WorldSnapshot) {
    self.frame = frame
    self.points = points
    self.depth = depth
    self.creatures = creatures
    self.ledger = ledger
  }

  /// The model the state holds: the creatures' cells and the ledger's entries in identity
  /// order. Nil when a column does not decode.
  var model: GameModel? {
    var model = GameModel()
    model.frame = frame
    model.score = points
    model.depth = depth
    guard let cells = Self.values(Cell.self, "cell", of: creatures),
      let entries = Self.values(Entry.self, "entry", of: ledger)
    else { return nil }
    model.creatures = cells.map(\.value)
    model.ledger = entries.map(\.value)
    return model
  }

  /// Every entity's `name` component, in identity order; nil when one lacks it or it does not decode.
  private static func values<C: Decodable>(_ type: C.Type, _ name: String, of world: WorldSnapshot) -> [C]? {
    guard let column = world.column(name) else { return world.entities.isEmpty ? [] : nil }
    guard column.entities == world.entities else { return nil }
    return try? SaveValueDecoder().decode([C].self, from: column.values)
  }
}

/// The world build's two worlds and the progress beside them: what its process plays.
final class SimWorlds {
  let creatures: SimECS
  let ledger: SimECS
  let savedCreatures: SavedWorld<SimECS>
  let savedLedger: SavedWorld<SimECS>
  var frame: Int64 = 0
  var score: Int64 = 0
  var depth: Int64 = 1

  /// Worlds whose ECS ids start at `firstID`; with `rawReferences`, the leader is saved as a
  /// plain number (``RawFollows``), not a reference.
  init(firstID: UInt64, rawReferences: Bool) {
    creatures = SimECS(firstID: firstID)
    ledger = SimECS(firstID: firstID)
    var creatureSchema = WorldSchema<SimECS>()
    creatureSchema.register("cell", Cell.self, get: { $0.cells[$1] }, set: { $0.cells[$1] = $2 })
    if rawReferences {
      creatureSchema.register(
        "follows", RawFollows.self, get: { ecs, id in ecs.follows[id]?.leader.id.map(RawFollows.init) },
        set: { ecs, id, raw in ecs.follows[id] = Follows(leader: EntityRef(raw.leader)) })
    } else {
      creatureSchema.register("follows", Follows.self, get: { $0.follows[$1] }, set: { $0.follows[$1] = $2 })
    }
    var ledgerSchema = WorldSchema<SimECS>()
    ledgerSchema.register("entry", Entry.self, get: { $0.entries[$1] }, set: { $0.entries[$1] = $2 })
    savedCreatures = SavedWorld(creatures, schema: creatureSchema)
    savedLedger = SavedWorld(ledger, schema: ledgerSchema)
  }

  /// The creatures' ECS ids in identity order.
  var creatureIDs: [UInt64] { savedCreatures.inSaveOrder(creatures.entityIDs()) { $0 } }
  /// The ledger's ECS ids in identity order.
  var entryIDs: [UInt64] { savedLedger.inSaveOrder(ledger.entityIDs()) { $0 } }

  /// The model, read from the worlds in identity order.
  var model: GameModel {
    var model = GameModel()
    model.frame = frame
    model.score = score
    model.depth = depth
    model.creatures = creatureIDs.map { creatures.cells[$0]?.value ?? -1 }
    model.ledger = entryIDs.map { ledger.entries[$0]?.value ?? -1 }
    return model
  }

  /// Plays the worlds to `model`, as the game's systems would: a new level despawns its
  /// creatures and spawns the next level's, each following the one spawned before it; a
  /// creature that moves keeps its entity; each new ledger entry is an entity spawned.
  func apply(_ model: GameModel) {
    let ids = creatureIDs
    if model.depth != depth || ids.count != model.creatures.count {
      for id in ids { savedCreatures.despawn(id) }
      var previous: UInt64?
      for cell in model.creatures {
        let id = savedCreatures.spawn()
        creatures.cells[id] = Cell(value: cell)
        if let previous { creatures.follows[id] = Follows(leader: EntityRef(previous)) }
        previous = id
      }
    } else {
      for (id, cell) in zip(ids, model.creatures) { creatures.cells[id] = Cell(value: cell) }
    }
    var entries = entryIDs
    let held = entries.map { ledger.entries[$0]?.value ?? -1 }
    if !model.ledger.starts(with: held) {
      for id in entries { savedLedger.despawn(id) }
      entries = []
    }
    for entry in model.ledger.dropFirst(entries.count) {
      let id = savedLedger.spawn()
      ledger.entries[id] = Entry(value: entry)
    }
    frame = model.frame
    score = model.score
    depth = model.depth
  }

  func snapshot() -> StateV3 {
    StateV3(
      frame: frame, points: score, depth: depth, creatures: savedCreatures.snapshot(), ledger: savedLedger.snapshot())
  }

  /// Restores both worlds; the progress only once both restored.
  func restore(_ state: StateV3) throws {
    try savedCreatures.restore(state.creatures)
    try savedLedger.restore(state.ledger)
    frame = state.frame
    score = state.points
    depth = state.depth
  }

  /// What a restore of `saved` must have built, entity by entity; nil when it holds, else what
  /// differs. Both worlds snapshot to the saved ones (identities, components, the next
  /// identity), and every creature after the first follows, by its ECS id, the live entity of
  /// the identity saved before it.
  func differences(from saved: StateV3) -> String? {
    let live = snapshot()
    for (name, world, file) in [("creatures", live.creatures, saved.creatures), ("ledger", live.ledger, saved.ledger)]
    where world != file {
      if world.entities != file.entities {
        return "\(name): entities \(world.entities.map(\.description)) where the save holds "
          + "\(file.entities.map(\.description))"
      }
      if world.nextIdentity != file.nextIdentity {
        return "\(name): next identity \(world.nextIdentity) where the save holds \(file.nextIdentity)"
      }
      return "\(name): a component differs from the save's"
    }
    let ids = creatureIDs
    for (index, id) in ids.enumerated().dropFirst() {
      let leader = creatures.follows[id]?.leader.id
      let expected = ids[index - 1]
      guard leader == expected else {
        let identity = savedCreatures.identity(of: id).map(\.description) ?? "?"
        let followed = leader.flatMap { savedCreatures.identity(of: $0) }.map(\.description) ?? "no entity"
        return "creature \(identity) follows ECS id \(leader.map(String.init) ?? "none") (\(followed)), "
          + "not \(expected), the entity of the identity saved before it"
      }
    }
    return nil
  }
}
