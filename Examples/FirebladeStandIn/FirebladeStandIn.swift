// The part of FirebladeECS's public API (1.1.0: Nexus, Entity, EntityIdentifier, Component,
// NexusEventDelegate, EntityCreated) that the guide "Saving an entity world" adapts, with the
// same names and signatures, so the guide's FirebladeECS adapter compiles here: no third-party
// ECS can be a dependency of Stasis. The behaviour is the least that makes the signatures honest
// (ids reused from a free list, class components by type); it is not FirebladeECS.

/// FirebladeECS's component: a class.
public protocol Component: AnyObject {}

/// FirebladeECS's entity id.
public struct EntityIdentifier: Hashable, Sendable {
  public typealias Identifier = UInt32
  public let id: Identifier
  public init(_ id: Identifier) { self.id = id }
}

/// FirebladeECS's entity handle.
public struct Entity {
  let nexus: Nexus
  public private(set) var identifier: EntityIdentifier

  @discardableResult
  public func assign(_ component: Component) -> Entity {
    nexus.assign(component: component, to: self)
    return self
  }
}

/// FirebladeECS's events, as its delegate receives them.
public protocol NexusEvent {}

/// An entity was created.
public struct EntityCreated: NexusEvent {
  public let entityId: EntityIdentifier
}

/// An entity was destroyed.
public struct EntityDestroyed: NexusEvent {
  public let entityId: EntityIdentifier
}

/// FirebladeECS's delegate.
public protocol NexusEventDelegate: AnyObject, Sendable {
  func nexusEvent(_ event: NexusEvent)
  func nexusNonFatalError(_ message: String)
}

/// FirebladeECS's world.
public final class Nexus {
  private var components: [ObjectIdentifier: [EntityIdentifier: Component]] = [:]
  private var alive: [EntityIdentifier] = []
  private var free: [UInt32] = []
  private var next: UInt32 = 0
  public weak var delegate: NexusEventDelegate?

  public init() {}

  @discardableResult
  public func createEntity() -> Entity {
    let id = EntityIdentifier(free.popLast() ?? next)
    if id.id == next { next += 1 }
    alive.append(id)
    delegate?.nexusEvent(EntityCreated(entityId: id))
    return Entity(nexus: self, identifier: id)
  }

  @discardableResult
  public func destroy(entityId: EntityIdentifier) -> Bool {
    guard let index = alive.firstIndex(of: entityId) else { return false }
    alive.swapAt(index, alive.count - 1)
    alive.removeLast()
    for key in components.keys { components[key]?[entityId] = nil }
    free.append(entityId.id)
    delegate?.nexusEvent(EntityDestroyed(entityId: entityId))
    return true
  }

  public func entity(from entityId: EntityIdentifier) -> Entity { Entity(nexus: self, identifier: entityId) }

  public func makeEntitiesIterator() -> AnyIterator<Entity> {
    var remaining = alive.makeIterator()
    return AnyIterator { remaining.next().map { Entity(nexus: self, identifier: $0) } }
  }

  @discardableResult
  public func assign(component: Component, to entity: Entity) -> Bool {
    components[ObjectIdentifier(type(of: component)), default: [:]][entity.identifier] = component
    return true
  }

  public func get<C: Component>(safe entityId: EntityIdentifier) -> C? {
    components[ObjectIdentifier(C.self)]?[entityId] as? C
  }
}
