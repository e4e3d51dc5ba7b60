/// What a ``SavedWorld`` needs from an entity-component system, written once by a game for its
/// ECS: the live entities, and a way to spawn and despawn one. Components are reached through
/// the getters and setters registered in a ``WorldSchema``.
///
/// An ECS id is any integer the ECS hands out (FirebladeECS's `EntityIdentifier.id`, EnTT's
/// entity, Bevy's `Entity::to_bits`), widened to `UInt64`; it may be reused after a despawn
/// and changes with every restore. What saves hold is the entity's ``EntityIdentity``.
///
/// ```swift
/// extension TinyWorld: EntityWorld {
///   public func entityIDs() -> [UInt64] { entities.map { UInt64($0.id) } }
///   public func spawnEntity() -> UInt64 { UInt64(createEntity().id) }
///   public func despawnEntity(_ id: UInt64) { destroy(TinyEntity(UInt32(id))) }
/// }
/// ```
public protocol EntityWorld: AnyObject {
  /// The ECS ids of the live entities, in any order.
  func entityIDs() -> [UInt64]
  /// Creates an entity with no components and returns its ECS id.
  func spawnEntity() -> UInt64
  /// Destroys an entity and its components.
  func despawnEntity(_ id: UInt64)
}
