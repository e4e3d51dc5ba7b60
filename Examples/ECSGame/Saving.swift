// Everything the asteroids game does to save its TinyECS world by entity: the adapter, once for
// the ECS, and the components' registration (the guide "Saving an entity world" shows the same
// for FirebladeECS).
import Stasis
import StasisTinyECS

extension TinyWorld: EntityWorld {
  public func entityIDs() -> [UInt64] { entities.map { UInt64($0.id) } }
  public func spawnEntity() -> UInt64 { UInt64(createEntity().id) }
  public func despawnEntity(_ id: UInt64) { destroy(TinyEntity(UInt32(id))) }
}

extension WorldSchema where World == TinyWorld {
  /// Saves the class component `C` as a tree.
  mutating func save<C: TinyComponent & Codable>(_ name: String, _ type: C.Type, version: UInt32 = 1) {
    register(
      name, type, version: version, get: { $0.get(C.self, of: TinyEntity(UInt32($1))) },
      set: { $0.assign($2, to: TinyEntity(UInt32($1))) })
  }
}

/// Motion's fields, saved in bulk: one copy for every moving entity.
struct MotionData: BulkStorable {
  var x = 0.0, y = 0.0, dx = 0.0, dy = 0.0
  static let bulkLayout = BulkLayout(
    of: MotionData.self, [.field("x", \.x), .field("y", \.y), .field("dx", \.dx), .field("dy", \.dy)])
}

@MainActor let asteroidsSchema: WorldSchema<TinyWorld> = {
  var schema = WorldSchema<TinyWorld>()
  schema.register(
    "motion", MotionData.self,
    get: { world, id in
      world.get(Motion.self, of: TinyEntity(UInt32(id))).map { MotionData(x: $0.x, y: $0.y, dx: $0.dx, dy: $0.dy) }
    },
    set: { world, id, m in world.assign(Motion(x: m.x, y: m.y, dx: m.dx, dy: m.dy), to: TinyEntity(UInt32(id))) })
  schema.save("ship", Ship.self)
  schema.save("rock", Rock.self)
  schema.save("health", Health.self)
  schema.save("bullet", Bullet.self)
  schema.save("debris", Debris.self)
  schema.transient("sprite") { world, id in
    world.assign(Sprite(spriteImage(world, TinyEntity(UInt32(id)))), to: TinyEntity(UInt32(id)))
  }
  return schema
}()
