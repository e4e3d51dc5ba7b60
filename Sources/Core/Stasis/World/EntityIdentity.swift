/// An entity's identity in saves: a serial a ``SavedWorld`` gives the entity when it is spawned
/// and never gives again. It survives a save, a kill, a cold start, a sync and a merge, where
/// the ECS's own id is reused and changes with every restore. Saved entities and their
/// components are written in the order of their identities.
public struct EntityIdentity: RawRepresentable, Hashable, Comparable, Codable, Sendable, CustomStringConvertible {
  /// The serial, from 1.
  public let rawValue: UInt64

  /// The identity with serial `rawValue`.
  public init(rawValue: UInt64) { self.rawValue = rawValue }

  public static func < (lhs: EntityIdentity, rhs: EntityIdentity) -> Bool { lhs.rawValue < rhs.rawValue }

  /// `#12`: how tools and reports name an entity.
  public var description: String { "#\(rawValue)" }

  public init(from decoder: any Decoder) throws {
    rawValue = try decoder.singleValueContainer().decode(UInt64.self)
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(rawValue)
  }
}

/// A component's reference to another entity: the ECS's own id of that entity, which a
/// ``SavedWorld`` saves as the entity's ``EntityIdentity`` and restores as the id the restored
/// entity got, so a bullet still knows its shooter when every id changed.
///
/// ```swift
/// final class Bullet: TinyComponent, Codable {
///   var shooter = EntityRef.none       // EntityRef(ship.id): the ECS's id of the ship
/// }
/// ```
///
/// A reference to an entity that is not in the save (it died and its id was reused, or it was
/// never tracked) restores as ``none`` and is reported by entity, component and field
/// (``WorldRestoreReport/danglingReferences``): it never points at whatever took the id.
/// Outside a ``SavedWorld``'s snapshot it encodes as the ECS's id itself.
public struct EntityRef: Hashable, Codable, Sendable {
  /// The ECS's id of the entity referred to, or nil for no entity.
  public var id: UInt64?

  /// A reference to the entity whose ECS id is `id`.
  public init(_ id: UInt64?) { self.id = id }

  /// A reference to an ECS id of any integer type (FirebladeECS's `UInt32`, EnTT's, Bevy's bits).
  public init(_ id: some BinaryInteger) { self.id = UInt64(id) }

  /// No entity.
  public static let none = EntityRef(nil as UInt64?)

  /// In a world's save a reference is `{"$entity": identity}` (or null), so tools without the
  /// game's code see it (`stasis dump`) and a merge that gives an entity a new identity finds it.
  private enum SavedKey: String, CodingKey { case entity = "$entity" }

  public init(from decoder: any Decoder) throws {
    guard let mapping = decoder.userInfo[.entityMapping] as? EntityMapping else {
      let container = try decoder.singleValueContainer()
      id = container.decodeNil() ? nil : try container.decode(UInt64.self)
      return
    }
    if try decoder.singleValueContainer().decodeNil() {
      self = .none
      return
    }
    let stored = try decoder.container(keyedBy: SavedKey.self).decode(UInt64.self, forKey: .entity)
    id = mapping.restored(EntityIdentity(rawValue: stored), at: decoder.codingPath)
  }

  public func encode(to encoder: any Encoder) throws {
    guard let mapping = encoder.userInfo[.entityMapping] as? EntityMapping else {
      var container = encoder.singleValueContainer()
      return try id.map { try container.encode($0) } ?? container.encodeNil()
    }
    guard let id, let identity = mapping.saved(id, at: encoder.codingPath) else {
      var container = encoder.singleValueContainer()
      return try container.encodeNil()
    }
    var container = encoder.container(keyedBy: SavedKey.self)
    try container.encode(identity.rawValue, forKey: .entity)
  }
}

extension CodingUserInfoKey {
  /// The ``EntityMapping`` a ``SavedWorld`` hands its coders.
  static let entityMapping = CodingUserInfoKey(rawValue: "stasis.entityMapping")!
}

/// Between the ECS's ids and the identities of one snapshot or restore, for ``EntityRef``'s
/// coding; records the references that found no entity. One coding, one thread.
final class EntityMapping: @unchecked Sendable {
  /// ECS id → identity, for a snapshot.
  let identityOf: IdentityTable
  /// Identity → ECS id, for a restore.
  let idOf: [EntityIdentity: UInt64]
  /// The entities of the column being coded, by element: the coding path's first index.
  var entities: [EntityIdentity] = []
  /// The component being coded, for reports.
  var component = ""
  /// References that found no entity.
  var dangling: [DanglingReference] = []
  /// True once a reference was looked up: a column without one decodes the same with any mapping.
  var used = false

  init(identityOf: IdentityTable = IdentityTable(), idOf: [EntityIdentity: UInt64] = [:]) {
    self.identityOf = identityOf
    self.idOf = idOf
  }

  func saved(_ id: UInt64, at path: [any CodingKey]) -> EntityIdentity? {
    used = true
    if let identity = identityOf[id] { return identity }
    dangling.append(DanglingReference(entity: owner(path), component: component, field: fieldName(path), target: nil))
    return nil
  }

  func restored(_ identity: EntityIdentity, at path: [any CodingKey]) -> UInt64? {
    used = true
    if let id = idOf[identity] { return id }
    dangling.append(
      DanglingReference(entity: owner(path), component: component, field: fieldName(path), target: identity))
    return nil
  }

  /// The entity whose element of the column is being coded.
  private func owner(_ path: [any CodingKey]) -> EntityIdentity {
    guard let index = path.first?.intValue, entities.indices.contains(index) else { return EntityIdentity(rawValue: 0) }
    return entities[index]
  }

  /// The field inside one component: the column's element index is not part of it.
  private func fieldName(_ path: [any CodingKey]) -> String {
    fieldPath(Array(path.dropFirst()))
  }
}

/// A reference from a component to an entity that is not there: in a snapshot, an ECS id no
/// tracked entity has; in a restore, an identity the save does not hold.
public struct DanglingReference: Sendable, Equatable, CustomStringConvertible {
  /// The entity whose component holds the reference.
  public var entity: EntityIdentity
  /// The component's registered name.
  public var component: String
  /// The field inside the component (`shooter`, `targets[2]`).
  public var field: String
  /// The identity referred to, when the save named one.
  public var target: EntityIdentity?

  /// A reference from `entity`'s `component.field` to `target`.
  public init(entity: EntityIdentity, component: String, field: String, target: EntityIdentity?) {
    self.entity = entity
    self.component = component
    self.field = field
    self.target = target
  }

  /// `#12 bullet.shooter refers to #7, which is not in the save`.
  public var description: String {
    let to = target.map { "refers to \($0), which is not in the save" } ?? "refers to an entity that is not tracked"
    return "\(entity) \(component).\(field) \(to)"
  }
}

/// ECS id → identity, looked up for every entity of every snapshot: a flat array for the small
/// ids most ECSs give (indexes into their storage, reused), a dictionary for the rest (ids with
/// a generation in their high bits). A value: a snapshot takes it along, copied on write.
struct IdentityTable: Sendable {
  /// Ids below this are kept in `flat` (8 bytes each, up to the largest id seen).
  static let flatLimit: UInt64 = 1 << 20
  private var flat: [UInt64] = []  // identity's raw value; 0: none
  private var other: [UInt64: EntityIdentity] = [:]  // lookup only
  /// How many ids have an identity.
  private(set) var count = 0

  subscript(id: UInt64) -> EntityIdentity? {
    get {
      if id < Self.flatLimit {
        let index = Int(id)
        guard index < flat.count, flat[index] != 0 else { return nil }
        return EntityIdentity(rawValue: flat[index])
      }
      return other[id]
    }
    set {
      let old = self[id]
      count += (newValue == nil ? 0 : 1) - (old == nil ? 0 : 1)
      guard id < Self.flatLimit else {
        other[id] = newValue
        return
      }
      let index = Int(id)
      if index >= flat.count {
        guard newValue != nil else { return }
        flat += repeatElement(0, count: Swift.max(index + 1 - flat.count, flat.count))
      }
      flat[index] = newValue?.rawValue ?? 0
    }
  }

  /// Removes every id.
  mutating func removeAll() {
    flat.removeAll(keepingCapacity: true)
    other.removeAll()
    count = 0
  }
}
