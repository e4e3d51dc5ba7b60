// The guide "Saving an entity world": a FirebladeECS game's adapter and registration, compiled
// against StasisFirebladeStandIn (FirebladeECS's names and signatures: no third-party ECS can be
// a dependency here). In a game, the file imports FirebladeECS instead.
import Stasis
import StasisFirebladeStandIn

// MARK: The game's components (FirebladeECS components are classes)

final class Transform: Component, Codable {
  var x = 0.0, y = 0.0, angle = 0.0
}

final class Missile: Component, Codable {
  var shooter = EntityRef.none  // the ship that fired it: an ECS id, remapped on restore
  var ticksLeft = 90
}

final class Collision: Component, Codable {
  var radius = 10.0  // removed when the asteroid dies: a dead one saves none
}

final class Display: Component {
  let image: String  // transient: an SDL texture in the real game
  init(image: String) { self.image = image }
}

// MARK: The adapter and the registration: 33 lines without blanks and comments

extension Nexus: EntityWorld {  // Swift 6 asks a game for `@retroactive` here: both are imported
  public func entityIDs() -> [UInt64] { makeEntitiesIterator().map { UInt64($0.identifier.id) } }
  public func spawnEntity() -> UInt64 { UInt64(createEntity().identifier.id) }
  public func despawnEntity(_ id: UInt64) { destroy(entityId: EntityIdentifier(UInt32(id))) }
}

extension WorldSchema where World == Nexus {
  mutating func save<C: Component & Codable>(_ name: String, _ type: C.Type, version: UInt32 = 1) {
    register(
      name, type, version: version,
      get: { nexus, id in nexus.get(safe: EntityIdentifier(UInt32(id))) },
      set: { nexus, id, component in nexus.entity(from: EntityIdentifier(UInt32(id))).assign(component) })
  }
}

/// Gives each entity its identity where FirebladeECS creates it, in the game's own order.
final class IdentityTracker: NexusEventDelegate, @unchecked Sendable {
  weak var saved: SavedWorld<Nexus>?
  func nexusEvent(_ event: NexusEvent) {
    if let created = event as? EntityCreated { saved?.track(UInt64(created.entityId.id)) }
  }
  func nexusNonFatalError(_ message: String) {}
}

func savedWorld(of nexus: Nexus, tracker: IdentityTracker) -> SavedWorld<Nexus> {
  var schema = WorldSchema<Nexus>()
  schema.save("transform", Transform.self)
  schema.save("missile", Missile.self)
  schema.save("collision", Collision.self)
  schema.transient("display") { nexus, id in
    nexus.entity(from: EntityIdentifier(UInt32(id))).assign(Display(image: "asteroid"))
  }
  let saved = SavedWorld(nexus, schema: schema)
  tracker.saved = saved
  nexus.delegate = tracker
  return saved
}

// MARK: The state a save holds

struct AsteroidsSave: Codable, Sendable {
  var tick: Int64
  var world: WorldSnapshot
}

@MainActor
func worldRoundTrip() throws {
  let nexus = Nexus()
  let tracker = IdentityTracker()
  let saved = savedWorld(of: nexus, tracker: tracker)
  let ship = nexus.createEntity().assign(Transform())
  let missile = nexus.createEntity().assign(Transform())
  missile.assign(Missile())
  let save = AsteroidsSave(tick: 60, world: saved.snapshot())  // a value: the store writes it on its worker
  let report = try saved.restore(save.world)  // despawns, respawns in identity order, remaps, rebuilds
  for dangling in report.danglingReferences { print("lost a reference: \(dangling)") }
  _ = ship
}

// MARK: Systems that iterate in save order

func inSaveOrder(_ saved: SavedWorld<Nexus>, _ missiles: [EntityIdentifier]) -> [EntityIdentifier] {
  saved.inSaveOrder(missiles) { UInt64($0.id) }
}

// MARK: A component's own version

final class TransformV2: Component, Codable {
  var position = [0.0, 0.0]
  var angle = 0.0
}

func migratedSchema() -> WorldSchema<Nexus> {
  var migrations = SchemaMigrations()
  migrations.register(from: 1) { transform in  // v1 → v2: x and y became position
    let x = transform[field: "x"] ?? .float64(0)
    let y = transform[field: "y"] ?? .float64(0)
    transform.removeField("x")
    transform.removeField("y")
    transform[field: "position"] = .array([x, y])
  }
  var schema = WorldSchema<Nexus>()
  schema.register(
    "transform", TransformV2.self, version: 2, migrations: migrations,
    get: { nexus, id in nexus.get(safe: EntityIdentifier(UInt32(id))) },
    set: { nexus, id, transform in nexus.entity(from: EntityIdentifier(UInt32(id))).assign(transform) })
  return schema
}

// MARK: An ECS whose components are values in dense arrays (Bevy's, EnTT's shape)

struct Spark: BulkStorable {
  var x = 0.0, y = 0.0, life = 0.0
  static let bulkLayout = BulkLayout(of: Spark.self, [.field("x", \.x), .field("y", \.y), .field("life", \.life)])
}

/// One component's values in one array, beside their entities' ids (swap-remove).
struct DenseStorage<Value> {
  var ids: [UInt32] = []
  var values: [Value] = []

  mutating func insert(_ value: Value, for id: UInt64) {
    if let index = ids.firstIndex(of: UInt32(id)) {
      values[index] = value
      return
    }
    ids.append(UInt32(id))
    values.append(value)
  }
}

final class SparkWorld: EntityWorld {
  var alive: [UInt64] = []
  var sparks = DenseStorage<Spark>()
  private var next: UInt64 = 0
  func entityIDs() -> [UInt64] { alive }
  func spawnEntity() -> UInt64 {
    defer { next += 1 }
    alive.append(next)
    return next
  }
  func despawnEntity(_ id: UInt64) { alive.removeAll { $0 == id } }
}

func denseSchema() -> WorldSchema<SparkWorld> {
  var schema = WorldSchema<SparkWorld>()
  schema.register(
    "spark", Spark.self, column: { WorldColumn(ids: $0.sparks.ids, values: $0.sparks.values) },
    set: { world, id, spark in world.sparks.insert(spark, for: id) })
  return schema
}
