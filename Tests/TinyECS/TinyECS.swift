// A small entity-component system of the shape most Swift games use (FirebladeECS's): class
// components, one swap-remove sparse set per component type, entity ids reused from a free
// list, families that iterate in storage order. It knows nothing of Stasis: the tests and
// `stasis-example-ecs` adopt Stasis on it as a game adopts it on its own ECS. Its orders depend
// on history on purpose, as a real ECS's do.

/// A component: any class.
public protocol TinyComponent: AnyObject {}

/// An entity's id: an index that is reused after the entity is destroyed.
public struct TinyEntity: Hashable, Sendable {
  public let id: UInt32
  public init(_ id: UInt32) { self.id = id }
}

/// The components of one type: dense arrays, an entity's slot by its id, swap-remove.
final class TinyStorage {
  var components: [any TinyComponent] = []
  var owners: [UInt32] = []
  var slot: [UInt32: Int] = [:]

  func set(_ component: any TinyComponent, for id: UInt32) {
    if let index = slot[id] {
      components[index] = component
      return
    }
    slot[id] = components.count
    components.append(component)
    owners.append(id)
  }

  func remove(_ id: UInt32) {
    guard let index = slot.removeValue(forKey: id) else { return }
    let last = components.count - 1
    if index != last {
      components[index] = components[last]
      owners[index] = owners[last]
      slot[owners[index]] = index
    }
    components.removeLast()
    owners.removeLast()
  }
}

/// A world of entities and their components.
public final class TinyWorld {
  private var alive: [UInt32] = []
  private var aliveSlot: [UInt32: Int] = [:]
  private var freeIDs: [UInt32] = []
  private var nextID: UInt32 = 0
  private var storages: [ObjectIdentifier: TinyStorage] = [:]

  public init() {}

  /// The live entities, in storage order (which depends on what was destroyed before).
  public var entities: [TinyEntity] { alive.map(TinyEntity.init) }

  /// A new entity: the id most recently freed, or a new one.
  @discardableResult
  public func createEntity() -> TinyEntity {
    let id: UInt32
    if let reused = freeIDs.popLast() {
      id = reused
    } else {
      id = nextID
      nextID += 1
    }
    aliveSlot[id] = alive.count
    alive.append(id)
    return TinyEntity(id)
  }

  /// Destroys an entity and its components; its id is reused by the next entity created.
  public func destroy(_ entity: TinyEntity) {
    guard let index = aliveSlot.removeValue(forKey: entity.id) else { return }
    let last = alive.count - 1
    if index != last {
      alive[index] = alive[last]
      aliveSlot[alive[index]] = index
    }
    alive.removeLast()
    for storage in storages.values { storage.remove(entity.id) }
    freeIDs.append(entity.id)
  }

  /// True while the entity lives.
  public func exists(_ entity: TinyEntity) -> Bool { aliveSlot[entity.id] != nil }

  /// Sets (adds or replaces) a component.
  public func assign<C: TinyComponent>(_ component: C, to entity: TinyEntity) {
    precondition(exists(entity), "entity \(entity.id) is not alive")
    let key = ObjectIdentifier(C.self)
    let storage = storages[key] ?? TinyStorage()
    storages[key] = storage
    storage.set(component, for: entity.id)
  }

  /// The entity's component of type `C`, or nil.
  public func get<C: TinyComponent>(_ type: C.Type, of entity: TinyEntity) -> C? {
    guard let storage = storages[ObjectIdentifier(C.self)], let index = storage.slot[entity.id] else { return nil }
    return (storage.components[index] as! C)
  }

  /// Removes the entity's component of type `C`.
  public func remove<C: TinyComponent>(_ type: C.Type, from entity: TinyEntity) {
    storages[ObjectIdentifier(C.self)]?.remove(entity.id)
  }

  /// The entities that have both components, in `A`'s storage order.
  public func family<A: TinyComponent, B: TinyComponent>(_ a: A.Type, _ b: B.Type) -> [(TinyEntity, A, B)] {
    guard let first = storages[ObjectIdentifier(A.self)], let second = storages[ObjectIdentifier(B.self)] else {
      return []
    }
    var members: [(TinyEntity, A, B)] = []
    for (index, owner) in first.owners.enumerated() {
      guard let other = second.slot[owner] else { continue }
      members.append((TinyEntity(owner), first.components[index] as! A, second.components[other] as! B))
    }
    return members
  }

  /// The entities that have a component of type `A`, in its storage order.
  public func family<A: TinyComponent>(_ a: A.Type) -> [(TinyEntity, A)] {
    guard let storage = storages[ObjectIdentifier(A.self)] else { return [] }
    return zip(storage.owners, storage.components).map { (TinyEntity($0), $1 as! A) }
  }
}
