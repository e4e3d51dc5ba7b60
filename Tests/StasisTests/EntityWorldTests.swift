import Stasis
import StasisTinyECS
import Testing

// A game on TinyECS, as a game on FirebladeECS writes it: class components, an adapter, a schema.

final class Motion: TinyComponent, Codable {
  var x: Double, y: Double, vx: Double, vy: Double
  init(x: Double, y: Double, vx: Double = 0, vy: Double = 0) { (self.x, self.y, self.vx, self.vy) = (x, y, vx, vy) }
}

/// Motion's fields, saved in bulk.
struct MotionData: BulkStorable, Equatable {
  var x = 0.0, y = 0.0, vx = 0.0, vy = 0.0
  static let bulkLayout = BulkLayout(
    of: MotionData.self, [.field("x", \.x), .field("y", \.y), .field("vx", \.vx), .field("vy", \.vy)])
}

final class Health: TinyComponent, Codable {
  var points: Int
  init(_ points: Int) { self.points = points }
}

final class Bullet: TinyComponent, Codable {
  var shooter: EntityRef
  var target: EntityRef
  init(shooter: EntityRef, target: EntityRef) { (self.shooter, self.target) = (shooter, target) }
}

final class Shield: TinyComponent, Codable {
  var strength: Int
  init(_ strength: Int) { self.strength = strength }
}

/// Transient: rebuilt from the entity's saved components, never saved.
final class Sprite: TinyComponent {
  let name: String
  let onHit: () -> Void
  init(_ name: String) { (self.name, onHit) = (name, {}) }
}

extension TinyWorld: EntityWorld {
  public func entityIDs() -> [UInt64] { entities.map { UInt64($0.id) } }
  public func spawnEntity() -> UInt64 { UInt64(createEntity().id) }
  public func despawnEntity(_ id: UInt64) { destroy(TinyEntity(UInt32(id))) }
}

extension WorldSchema where World == TinyWorld {
  mutating func save<C: TinyComponent & Codable>(
    _ name: String, _ type: C.Type, version: UInt32 = 1, migrations: SchemaMigrations = SchemaMigrations()
  ) {
    register(
      name, type, version: version, migrations: migrations, get: { $0.get(C.self, of: TinyEntity(UInt32($1))) },
      set: { $0.assign($2, to: TinyEntity(UInt32($1))) })
  }
}

extension TinyWorld {
  func get<C: TinyComponent>(_ type: C.Type, _ id: UInt64) -> C? { get(type, of: TinyEntity(UInt32(id))) }
  func assign<C: TinyComponent>(_ component: C, _ id: UInt64) { assign(component, to: TinyEntity(UInt32(id))) }
}

func asteroidsSchema(shield: Bool = false, healthVersion: UInt32 = 1, healthMigrations: SchemaMigrations = .init())
  -> WorldSchema<TinyWorld>
{
  var schema = WorldSchema<TinyWorld>()
  schema.register(
    "motion", MotionData.self,
    get: { world, id in world.get(Motion.self, id).map { MotionData(x: $0.x, y: $0.y, vx: $0.vx, vy: $0.vy) } },
    set: { world, id, m in world.assign(Motion(x: m.x, y: m.y, vx: m.vx, vy: m.vy), id) })
  schema.save("health", Health.self, version: healthVersion, migrations: healthMigrations)
  schema.save("bullet", Bullet.self)
  if shield { schema.save("shield", Shield.self) }
  schema.transient("sprite", rebuild: giveSprite)
  return schema
}

/// A ship, three asteroids and a bullet from the ship at the second asteroid, after a history of
/// spawns and deaths that left the ECS's storage out of spawn order.
@MainActor
func playedWorld(shield: Bool = false) -> (saved: SavedWorld<TinyWorld>, ship: UInt64, target: UInt64, bullet: UInt64) {
  let world = TinyWorld()
  let saved = SavedWorld(world, schema: asteroidsSchema(shield: shield))
  let ship = saved.spawn()
  world.assign(Motion(x: 1, y: 2), ship)
  world.assign(Health(3), ship)
  var rocks: [UInt64] = []
  for index in 0..<4 {
    let rock = saved.spawn()
    world.assign(Motion(x: Double(10 * index), y: 5, vx: 1), rock)
    world.assign(Health(index + 1), rock)
    if shield { world.assign(Shield(index * 10), rock) }
    rocks.append(rock)
  }
  saved.despawn(rocks[0])  // swap-remove: the last rock moves into its place
  let bullet = saved.spawn()  // reuses rocks[0]'s ECS id
  world.assign(Motion(x: 1, y: 3, vy: 4), bullet)
  world.assign(Bullet(shooter: EntityRef(ship), target: EntityRef(rocks[2])), bullet)
  world.remove(Health.self, from: TinyEntity(UInt32(rocks[3])))  // died: its health is gone
  for id in world.entityIDs() { giveSprite(world, id) }
  return (saved, ship, rocks[2], bullet)
}

/// The sprite an entity's saved components call for: the game's rebuild hook.
func giveSprite(_ world: TinyWorld, _ id: UInt64) {
  world.assign(Sprite(world.get(Bullet.self, id) == nil ? "rock" : "bullet"), id)
}

/// The game's view of one entity, by value, to compare worlds across ECS ids.
struct EntityView: Equatable, CustomStringConvertible {
  var identity: EntityIdentity
  var motion: MotionData?
  var health: Int?
  var shooter: EntityIdentity?
  var target: EntityIdentity?
  var shield: Int?
  var sprite: String?
  var description: String {
    "\(identity) motion:\(motion.map { "\($0)" } ?? "-") health:\(health.map(String.init) ?? "-") shooter:\(shooter?.description ?? "-") target:\(target?.description ?? "-") shield:\(shield.map(String.init) ?? "-") sprite:\(sprite ?? "-")"
  }
}

@MainActor
func view(_ saved: SavedWorld<TinyWorld>) -> [EntityView] {
  let world = saved.world
  return saved.inSaveOrder(world.entityIDs()) { $0 }.map { id in
    let bullet = world.get(Bullet.self, id)
    return EntityView(
      identity: saved.identity(of: id)!,
      motion: world.get(Motion.self, id).map { MotionData(x: $0.x, y: $0.y, vx: $0.vx, vy: $0.vy) },
      health: world.get(Health.self, id)?.points,
      shooter: bullet?.shooter.id.flatMap { saved.identity(of: $0) },
      target: bullet?.target.id.flatMap { saved.identity(of: $0) },
      shield: world.get(Shield.self, id)?.strength,
      sprite: world.get(Sprite.self, id)?.name)
  }
}

/// A snapshot through a whole save file and back, as a cold start reads it.
struct WorldState: Codable, Sendable {
  var tick: Int64
  var world: WorldSnapshot
}

func throughFile(_ snapshot: WorldSnapshot) throws -> (WorldSnapshot, [UInt8]) {
  let codec = SaveCodec<WorldState>(game: GameIdentity(name: "asteroids", schemaVersion: 1))
  let bytes = SaveFileFormat.encode(
    try codec.document(for: WorldState(tick: 7, world: snapshot), summary: SaveSummary(), createdAt: 0))
  return (try codec.state(from: SaveFileFormat.decode(bytes)).world, bytes)
}

@MainActor
@Suite("Entity worlds saved by entity")
struct EntityWorldTests {
  @Test("references are remapped after a cold restore in which every entity got a new ECS id")
  func referencesRemapped() throws {
    let (saved, ship, target, bullet) = playedWorld()
    let before = view(saved)
    let (loaded, _) = try throughFile(saved.snapshot())

    // A fresh process's world, where other entities came and went first: every id differs.
    let world = TinyWorld()
    for _ in 0..<9 { world.createEntity() }
    for id in [8, 2, 5, 0] { world.destroy(TinyEntity(UInt32(id))) }
    let restored = SavedWorld(world, schema: asteroidsSchema())
    let report = try restored.restore(loaded)

    #expect(report.danglingReferences.isEmpty)
    #expect(report.entities == 5)
    let oldIDs = [ship, target, bullet]
    let newIDs = oldIDs.map { restored.id(of: saved.identity(of: $0)!)! }
    #expect(Set(newIDs).isDisjoint(with: oldIDs), "the restore should give new ids: \(oldIDs) → \(newIDs)")
    #expect(view(restored) == before)
    let restoredBullet = try #require(world.get(Bullet.self, newIDs[2]))
    #expect(restoredBullet.shooter == EntityRef(newIDs[0]))
    #expect(restoredBullet.target == EntityRef(newIDs[1]))
  }

  @Test("a saved world reads back to the same file, byte for byte")
  func byteForByte() throws {
    let (saved, _, _, _) = playedWorld()
    let (loaded, bytes) = try throughFile(saved.snapshot())
    let restored = SavedWorld(TinyWorld(), schema: asteroidsSchema())
    try restored.restore(loaded)
    let (_, again) = try throughFile(restored.snapshot())
    #expect(again == bytes)
  }

  @Test(
    "a reference to an entity the save does not hold is reported by entity, component and field, and restored as none")
  func danglingReported() throws {
    let (saved, _, _, bullet) = playedWorld()
    var snapshot = saved.snapshot()
    let bulletIdentity = saved.identity(of: bullet)!
    // An edited or older save whose bullet targets #999, which it does not hold.
    let index = snapshot.columns.firstIndex { $0.name == "bullet" }!
    guard case .array(var items) = snapshot.columns[index].values else {
      Issue.record("bullet is a tree")
      return
    }
    items[0][field: "target"] = .object(SaveObject([("$entity", .uint64(999))]))
    snapshot.columns[index].values = .array(items)

    let world = TinyWorld()
    let restored = SavedWorld(world, schema: asteroidsSchema())
    let report = try restored.restore(snapshot)
    #expect(
      report.danglingReferences == [
        DanglingReference(
          entity: bulletIdentity, component: "bullet", field: "target", target: EntityIdentity(rawValue: 999))
      ])
    #expect(
      "\(report.danglingReferences[0])" == "\(bulletIdentity) bullet.target refers to #999, which is not in the save")
    let restoredBullet = try #require(world.get(Bullet.self, restored.id(of: bulletIdentity)!))
    #expect(restoredBullet.target == .none)
    #expect(restoredBullet.shooter != .none)
  }

  @Test("a reference to an entity that died before the save is saved as none and reported")
  func danglingAtSnapshot() throws {
    let (saved, _, target, bullet) = playedWorld()
    saved.world.destroy(TinyEntity(UInt32(target)))  // the game forgot to clear the bullet's target
    let snapshot = saved.snapshot()
    #expect(
      saved.lastSnapshotDanglingReferences == [
        DanglingReference(entity: saved.identity(of: bullet)!, component: "bullet", field: "target", target: nil)
      ])
    #expect(snapshot.column("bullet")?.element(at: 0)[field: "target"] == .null)
  }

  @Test("a component this build does not register is kept, reported, and written back for the entities that live")
  func unknownComponentKept() throws {
    let (newer, _, target, _) = playedWorld(shield: true)
    let shielded = newer.inSaveOrder(newer.world.entityIDs()) { $0 }.filter { newer.world.get(Shield.self, $0) != nil }
    #expect(shielded.count == 3)
    let (fromNewer, _) = try throughFile(newer.snapshot())

    // An older build, without shields, restores, plays (one shielded rock dies) and saves.
    let older = SavedWorld(TinyWorld(), schema: asteroidsSchema(shield: false))
    let report = try older.restore(fromNewer)
    #expect(report.unknownComponents == ["shield"])
    let targetIdentity = newer.identity(of: target)!
    older.despawn(older.id(of: targetIdentity)!)
    let (fromOlder, _) = try throughFile(older.snapshot())
    let kept = try #require(fromOlder.column("shield"))
    #expect(kept.entities == shielded.map { newer.identity(of: $0)! }.filter { $0 != targetIdentity })

    // The newer build gets its shields back.
    let again = SavedWorld(TinyWorld(), schema: asteroidsSchema(shield: true))
    #expect(try again.restore(fromOlder).unknownComponents.isEmpty)
    let strengths = view(again).compactMap(\.shield)
    #expect(strengths == shielded.filter { $0 != target }.map { newer.world.get(Shield.self, $0)!.strength })
  }

  @Test("a component removed by play is absent from that entity's save, and stays absent after a restore")
  func removedComponentAbsent() throws {
    let (saved, _, _, _) = playedWorld()
    let snapshot = saved.snapshot()
    guard case .bulk? = snapshot.column("motion")?.values else {
      Issue.record("a BulkStorable save form is stored in bulk")
      return
    }
    let health = try #require(snapshot.column("health"))
    let withoutHealth = snapshot.entities.filter { !health.entities.contains($0) }
    #expect(withoutHealth.count == 2)  // the bullet never had one; the dead rock lost it
    let restored = SavedWorld(TinyWorld(), schema: asteroidsSchema())
    try restored.restore(snapshot)
    #expect(view(restored).filter { $0.health == nil }.map(\.identity) == withoutHealth)
  }

  @Test("components are saved in identity order, and a restored world's storage iterates in it")
  func identityOrder() throws {
    let (saved, _, _, _) = playedWorld()
    let storageOrder = saved.world.family(Motion.self).map { saved.identity(of: UInt64($0.0.id))! }
    #expect(storageOrder != storageOrder.sorted(), "the history should have left storage out of order")
    let snapshot = saved.snapshot()
    #expect(snapshot.entities == storageOrder.sorted())
    #expect(snapshot.column("motion")?.entities == storageOrder.sorted())
    let restored = SavedWorld(TinyWorld(), schema: asteroidsSchema())
    try restored.restore(snapshot)
    #expect(restored.world.family(Motion.self).map { restored.identity(of: UInt64($0.0.id))! } == storageOrder.sorted())
  }

  @Test("transient components are rebuilt by the game's hook after the entity's saved components")
  func transientRebuilt() throws {
    let (saved, _, _, bullet) = playedWorld()
    let snapshot = saved.snapshot()
    #expect(snapshot.column("sprite") == nil)
    let restored = SavedWorld(TinyWorld(), schema: asteroidsSchema())
    try restored.restore(snapshot)
    let sprites = view(restored).map(\.sprite)
    #expect(sprites.allSatisfy { $0 != nil })
    #expect(view(restored).first { $0.identity == saved.identity(of: bullet) }?.sprite == "bullet")
  }

  @Test("identities are never reused, across despawns and restores")
  func identitiesNeverReused() throws {
    let (saved, _, _, _) = playedWorld()
    let given = Set(view(saved).map(\.identity))
    let snapshot = saved.snapshot()
    let restored = SavedWorld(TinyWorld(), schema: asteroidsSchema())
    try restored.restore(snapshot)
    let fresh = restored.identity(of: restored.spawn())!
    #expect(fresh.rawValue == snapshot.nextIdentity)
    #expect(fresh.rawValue > 6)  // six entities were ever spawned, one died
    #expect(!given.contains(fresh))
  }

  @Test(
    "a component saved at an older version migrates; one saved by a newer version is refused and the world untouched")
  func componentVersions() throws {
    let (saved, _, _, _) = playedWorld()
    var snapshot = saved.snapshot()
    // Health v1 saved `points`; v2 calls it `hp`.
    var migrations = SchemaMigrations()
    migrations.register(from: 1) { $0.renameField("points", to: "hp") }
    final class HealthV2: TinyComponent, Codable { var hp = 0 }
    var schema = asteroidsSchema()
    schema = WorldSchema<TinyWorld>()
    schema.save("health", HealthV2.self, version: 2, migrations: migrations)
    let world = TinyWorld()
    let restored = SavedWorld(world, schema: schema)
    let report = try restored.restore(snapshot)
    #expect(report.migrations == [.init(component: "health", from: 1, to: 2)])
    #expect(report.unknownComponents == ["bullet", "motion"])
    let points = view(saved).compactMap(\.health)
    #expect(restored.inSaveOrder(world.entityIDs()) { $0 }.compactMap { world.get(HealthV2.self, $0)?.hp } == points)

    // A save from a build whose health is v3.
    let index = snapshot.columns.firstIndex { $0.name == "health" }!
    snapshot.columns[index].version = 3
    let live = TinyWorld()
    let game = SavedWorld(live, schema: schema)
    let sentinel = game.spawn()
    #expect {
      try game.restore(snapshot)
    } throws: { error in
      (error as? SaveFileError)?.kind == .newerSchema && (error as? SaveFileError)?.context.field == "components.health"
    }
    #expect(live.entityIDs() == [sentinel])
  }

  @Test("a next identity near the top, two columns of one name, and a snapshot that failed to encode are refused")
  func hostileCounters() throws {
    let (saved, _, _, _) = playedWorld()
    let tree = saved.snapshot().tree
    var high = tree
    high[field: "nextIdentity"] = .uint64(.max)
    #expect(throws: SaveFileError.self) { try WorldSnapshot(tree: high) }
    var twice = tree
    guard case .object(var components)? = tree[field: "components"] else {
      Issue.record("no components")
      return
    }
    components.fields.append(components.fields[0])
    twice[field: "components"] = .object(components)
    #expect {
      try WorldSnapshot(tree: twice)
    } throws: { ($0 as? SaveFileError)?.kind == .malformed }

    final class Unencodable: TinyComponent, Codable {
      func encode(to encoder: any Encoder) throws { throw CocoaErrorStandIn() }
      init() {}
    }
    struct CocoaErrorStandIn: Error {}
    var schema = asteroidsSchema()
    schema.save("broken", Unencodable.self)
    let world = TinyWorld()
    let broken = SavedWorld(world, schema: schema)
    world.assign(Unencodable(), broken.spawn())
    let snapshot = broken.snapshot()
    #expect(snapshot.failure?.context.field?.hasPrefix("components.broken") == true)
    #expect(throws: SaveFileError.self) { try broken.restore(snapshot) }
    #expect(world.entityIDs().count == 1, "the world is as it was")
  }

  @Test("a world tree that breaks the layout is refused by name and field, before any restore")
  func hostileWorldRefused() throws {
    let (saved, _, _, _) = playedWorld()
    let codec = SaveCodec<WorldState>(game: GameIdentity(name: "asteroids", schemaVersion: 1))
    var document = try codec.document(
      for: WorldState(tick: 1, world: saved.snapshot()), summary: SaveSummary(), createdAt: 0)
    let section = try #require(document.sections.firstIndex { $0.name == "world" })
    guard case .tree(var tree) = document.sections[section].content else {
      Issue.record("world is a tree")
      return
    }
    // The health column claims an entity the world does not have.
    guard case .bulk(let ids)? = tree[field: "components"]?[field: "health"]?[field: "entities"] else {
      Issue.record("no health identities")
      return
    }
    var bytes: [UInt8] = ids.withUnsafeBytes { Array($0) }
    bytes[(ids.count - 1) * 8] = 200  // the last identity becomes #200, still ascending
    tree[field: "components"]?[field: "health"]?[field: "entities"] = .bulk(
      BulkArray(layout: ids.layout, count: ids.count, bytes: bytes[...]))
    document.sections[section].content = .tree(tree)
    let read = try SaveFileFormat.decode(SaveFileFormat.encode(document))
    #expect {
      try codec.state(from: read)
    } throws: { error in
      let error = error as? SaveFileError
      return error?.kind == .malformed && error?.context.part == "world" && error?.context.field == "components.health"
    }
  }
}

/// An ECS that announces each entity it creates, as FirebladeECS tells its delegate.
final class AnnouncingWorld: EntityWorld {
  let inner = TinyWorld()
  var created: ((UInt64) -> Void)?
  func entityIDs() -> [UInt64] { inner.entityIDs() }
  func spawnEntity() -> UInt64 {
    let id = inner.spawnEntity()
    created?(id)
    return id
  }
  func despawnEntity(_ id: UInt64) { inner.despawnEntity(id) }
}

@MainActor
@Suite("Identities given from the ECS's own creation events")
struct CreationEventTests {
  @Test("a restore's own spawns, announced by the ECS, change no identity and give none away")
  func restoreIgnoresItsOwnSpawns() throws {
    var schema = WorldSchema<AnnouncingWorld>()
    schema.register(
      "health", Health.self, get: { $0.inner.get(Health.self, $1) }, set: { $0.inner.assign($2, $1) })
    let world = AnnouncingWorld()
    let saved = SavedWorld(world, schema: schema)
    world.created = { [unowned saved] in saved.track($0) }
    for points in 1...5 { world.inner.assign(Health(points), world.spawnEntity()) }
    world.despawnEntity(world.entityIDs()[1])
    let snapshot = saved.snapshot()
    #expect(snapshot.entities.map(\.rawValue) == [1, 3, 4, 5])
    #expect(snapshot.nextIdentity == 6)

    try saved.restore(snapshot)
    #expect(saved.id(of: EntityIdentity(rawValue: 6)) == nil, "no live entity has identity 6 yet")
    let again = saved.snapshot()
    #expect(again == snapshot)
    #expect(saved.identity(of: world.spawnEntity()) == EntityIdentity(rawValue: 6))
  }
}
