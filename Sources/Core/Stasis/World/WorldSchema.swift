/// The components of an entity world that saves hold, each registered under a name with its
/// own version and migrations, and the transient ones a restore rebuilds.
///
/// A component whose saved form is ``BulkStorable`` is stored as a bulk column (its fields'
/// bytes, one copy); any other `Codable` component as a tree, in which ``EntityRef`` fields
/// are remapped. A class component with plain fields can be saved in bulk through a struct
/// of its fields, converted in `get` and `set`.
///
/// ```swift
/// var schema = WorldSchema<TinyWorld>()
/// schema.register("motion", Motion.self, get: { $0.get(Motion.self, of: TinyEntity($1)) },
///                 set: { $0.assign($2, to: TinyEntity($1)) })
/// schema.transient("sprite") { world, id in world.assign(Sprite(), to: TinyEntity(id)) }
/// ```
public struct WorldSchema<World: EntityWorld> {
  /// The saved components, in registration order.
  var components: [RegisteredComponent<World>] = []
  /// The transient components' rebuild hooks, in registration order.
  var rebuilds: [(name: String, rebuild: (World, UInt64) -> Void)] = []

  /// An empty schema.
  public init() {}

  /// The registered names of the saved components.
  public var componentNames: [String] { components.map(\.name) }

  /// The registered names of the transient components.
  public var transientNames: [String] { rebuilds.map(\.name) }

  /// Saves the component `type` under `name`: `get` reads an entity's (nil when it has none: an
  /// asteroid that lost its collision radius saves none), `set` gives a restored entity the saved
  /// one. `version` is the component's own; `migrations` bring one element saved at an older
  /// version to it. A ``BulkStorable`` type is stored as a bulk column (its fields' bytes, one
  /// copy; it holds no ``EntityRef``, so a reference goes in a tree component); any other as a
  /// list of trees, its ``EntityRef`` fields remapped. The coders choose, as they do for any
  /// array of the type.
  public mutating func register<C: Codable>(
    _ name: String, _ type: C.Type, version: UInt32 = 1, migrations: SchemaMigrations = SchemaMigrations(),
    get: @escaping (World, UInt64) -> C?, set: @escaping (World, UInt64, C) -> Void
  ) {
    add(
      RegisteredComponent(
        name: name, version: version, migrations: migrations,
        source: .perEntity { world, ids, identities, mapping throws(SaveFileError) in
          var present: [Int] = []
          var values: [C] = []
          for (index, id) in ids.enumerated() {
            guard let component = get(world, id) else { continue }
            present.append(index)
            values.append(component)
          }
          mapping.component = name
          mapping.entities = present.map { identities[$0] }
          var encoder = SaveValueEncoder()
          encoder.userInfo[.entityMapping] = mapping
          return (present, try encoder.encode(values))
        }, decode: Self.decoder(C.self, set: set)))
  }

  /// Saves the component `type` under `name` straight from the ECS's own storage, for an ECS
  /// that keeps a component's values in one contiguous array (Bevy, EnTT, flecs, a game's own;
  /// not FirebladeECS, whose components are classes: use ``register(_:_:version:migrations:get:set:)``).
  /// `column` hands over that storage as it is: the ids of the entities that have the component
  /// and their values, in the storage's order. Arrays are copied on write, so a snapshot takes
  /// them without copying a byte on the game's thread; sorting them by identity, gathering and
  /// encoding happen where the save is encoded, on the store's worker. The game's next write to
  /// the storage copies it (the copy a snapshot needs, paid once). `set` gives a restored
  /// entity the saved value.
  ///
  /// ```swift
  /// schema.register("motion", Motion.self, column: { WorldColumn(ids: $0.motions.ids, values: $0.motions.values) },
  ///                 set: { world, id, motion in world.motions.insert(motion, for: id) })
  /// ```
  public mutating func register<C: BulkStorable, ID: FixedWidthInteger & Sendable>(
    _ name: String, _ type: C.Type, version: UInt32 = 1, migrations: SchemaMigrations = SchemaMigrations(),
    column: @escaping (World) -> WorldColumn<C, ID>, set: @escaping (World, UInt64, C) -> Void
  ) {
    add(
      RegisteredComponent(
        name: name, version: version, migrations: migrations,
        source: .dense { world in
          let storage = column(world)
          return { table, ids, identities in
            Result { () throws(SaveFileError) in try storage.inIdentityOrder(table, ids: ids, identities: identities) }
          }
        }, decode: Self.decoder(C.self, set: set)))
  }

  /// Decodes a saved column of `C`, ready to give each element to its restored entity.
  private static func decoder<C: Decodable>(_ type: C.Type, set: @escaping (World, UInt64, C) -> Void) -> (
    SaveValue, EntityMapping
  ) throws(SaveFileError) -> DecodedColumn<World> {
    { tree, mapping throws(SaveFileError) in
      var decoder = SaveValueDecoder()
      decoder.userInfo[.entityMapping] = mapping
      let values = try decoder.decode([C].self, from: tree)
      return DecodedColumn(count: values.count) { world, id, index in set(world, id, values[index]) }
    }
  }

  /// Marks a component transient (a sprite, a sound, a state machine, a closure): it is never
  /// saved, and `rebuild` gives it back to each restored entity, after the saved components,
  /// in registration order, as bevy_save's prefabs do. It sees the entity's restored components.
  public mutating func transient(_ name: String, rebuild: @escaping (World, UInt64) -> Void) {
    precondition(!components.contains { $0.name == name }, "'\(name)' is registered as a saved component")
    rebuilds.append((name, rebuild))
  }

  private mutating func add(_ component: RegisteredComponent<World>) {
    precondition(!components.contains { $0.name == component.name }, "component '\(component.name)' registered twice")
    precondition(!rebuilds.contains { $0.name == component.name }, "'\(component.name)' is registered as transient")
    precondition(
      !component.name.isEmpty && component.name.utf8.count <= FormatLimits.maxSectionNameBytes
        && !component.name.hasPrefix("$"),
      "a component's name is 1 to \(FormatLimits.maxSectionNameBytes) bytes, not starting with $ (tools' own keys)")
    components.append(component)
  }
}

/// One saved component type, erased to what a snapshot and a restore do with it.
struct RegisteredComponent<World: EntityWorld> {
  /// Where a snapshot reads a component's values.
  enum Source {
    /// Entity by entity, on the game's thread: of `ids` (live ECS ids in identity order, whose
    /// identities are the second list), the positions that have one, and their values as one tree.
    case perEntity(
      (World, [UInt64], [EntityIdentity], EntityMapping) throws(SaveFileError) -> (present: [Int], values: SaveValue))
    /// The ECS's storage taken whole on the game's thread; the returned work, given the
    /// snapshot's identities (its table, and its live ids with their identities in identity
    /// order), makes the column on any thread.
    case dense(
      (World) ->
        @Sendable (IdentityTable, [UInt64], [EntityIdentity]) -> Result<
          (entities: [EntityIdentity], values: SaveValue), SaveFileError
        >)
  }

  let name: String
  let version: UInt32
  let migrations: SchemaMigrations
  let source: Source
  /// A saved column's values, decoded, ready to be given to the restored entities.
  let decode: (SaveValue, EntityMapping) throws(SaveFileError) -> DecodedColumn<World>
}

/// A decoded column: its element `index` given to the entity `id`.
struct DecodedColumn<World> {
  let count: Int
  let assign: (World, UInt64, Int) -> Void
}

/// A component's storage in an ECS that keeps its values in one array: the ids of the entities
/// that have the component and their values, in the same order (the storage's, whatever it is).
/// ``WorldSchema/register(_:_:version:migrations:column:set:)`` takes it from the ECS as it is.
public struct WorldColumn<Component: BulkStorable, ID: FixedWidthInteger & Sendable>: Sendable {
  /// The ECS ids of the entities that have the component.
  public var ids: [ID]
  /// Their values, in the same order.
  public var values: [Component]

  /// The storage of `ids` and their `values`, in the same order.
  public init(ids: [ID], values: [Component]) {
    self.ids = ids
    self.values = values
  }

  /// The column in identity order: the entities `table` knows (the snapshot's live ones), their
  /// values gathered in that order and encoded. Off the game's thread. A storage that holds
  /// every live entity in identity order (`ids`, whose identities are `identities`) is taken as it is.
  func inIdentityOrder(_ table: IdentityTable, ids live: [UInt64], identities: [EntityIdentity]) throws(SaveFileError)
    -> (entities: [EntityIdentity], values: SaveValue)
  {
    guard ids.count == values.count else {
      throw SaveFileError(.malformed, "the storage has \(ids.count) ids and \(values.count) values")
    }
    // (`ids as? [UInt64]` would cast element by element: the types are compared instead.)
    if ID.self == UInt64.self, unsafeBitCast(ids, to: [UInt64].self) == live {
      return (identities, try SaveValueEncoder().encode(values))
    }
    // Index loops: this code is generic over the component and the id, unspecialized, and an
    // iterator's tuples cost a metadata lookup per element.
    let count = ids.count
    var entities: [EntityIdentity] = []
    var positions: [Int] = []
    entities.reserveCapacity(count)
    positions.reserveCapacity(count)
    ids.withUnsafeBufferPointer { ids in
      for position in 0..<count {
        guard let identity = table[UInt64(truncatingIfNeeded: ids[position])] else { continue }  // not live
        entities.append(identity)
        positions.append(position)
      }
    }
    let gathered: [Component]
    if zip(entities, entities.dropFirst()).contains(where: { $0 >= $1 }) {
      let order = entities.indices.sorted { entities[$0] < entities[$1] }
      entities = order.map { entities[$0] }
      gathered = order.map { values[positions[$0]] }
      if let twice = zip(entities, entities.dropFirst()).first(where: { $0 == $1 }) {
        throw SaveFileError(.malformed, "the storage holds entity \(twice.0) twice")
      }
    } else if positions.count == values.count {
      gathered = values
    } else {
      gathered = positions.map { values[$0] }
    }
    return (entities, try SaveValueEncoder().encode(gathered))
  }
}
