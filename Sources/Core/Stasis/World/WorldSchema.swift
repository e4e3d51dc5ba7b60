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
        read: { world, ids, mapping throws(SaveFileError) in
          var present: [Int] = []
          var values: [C] = []
          for (index, id) in ids.enumerated() {
            guard let component = get(world, id) else { continue }
            present.append(index)
            values.append(component)
          }
          mapping.component = name
          mapping.entities = present.map { mapping.identityOf[ids[$0]]! }
          var encoder = SaveValueEncoder()
          encoder.userInfo[.entityMapping] = mapping
          return (present, try encoder.encode(values))
        },
        decode: { tree, mapping throws(SaveFileError) in
          var decoder = SaveValueDecoder()
          decoder.userInfo[.entityMapping] = mapping
          let values = try decoder.decode([C].self, from: tree)
          return DecodedColumn(count: values.count) { world, id, index in set(world, id, values[index]) }
        }))
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
  let name: String
  let version: UInt32
  let migrations: SchemaMigrations
  /// The components of `ids` (live ECS ids in identity order): the positions that have one,
  /// and their values as one tree.
  let read: (World, [UInt64], EntityMapping) throws(SaveFileError) -> (present: [Int], values: SaveValue)
  /// A saved column's values, decoded, ready to be given to the restored entities.
  let decode: (SaveValue, EntityMapping) throws(SaveFileError) -> DecodedColumn<World>
}

/// A decoded column: its element `index` given to the entity `id`.
struct DecodedColumn<World> {
  let count: Int
  let assign: (World, UInt64, Int) -> Void
}
