import Logging

/// A live entity world saved by entity: it gives every entity the game spawns an
/// ``EntityIdentity`` that is never reused, copies the world into a ``WorldSnapshot`` by the
/// ``WorldSchema``, and restores a snapshot into the same live world.
///
/// ```swift
/// let saved = SavedWorld(world, schema: schema)
/// let ship = saved.spawn()                       // or saved.track(id) where the ECS spawned it
/// world.assign(Motion(), to: TinyEntity(UInt32(ship)))
/// let snapshot = saved.snapshot()                // a value: goes in the game's State
/// try saved.restore(snapshot)                    // despawns, respawns, remaps, rebuilds
/// ```
///
/// Used on the game's thread, as the ECS is; the snapshot it makes is `Sendable`.
public final class SavedWorld<World: EntityWorld> {
  /// The live world.
  public let world: World
  /// What is saved of it.
  public let schema: WorldSchema<World>

  private var identityOf = IdentityTable()
  private var idOf: [EntityIdentity: UInt64] = [:]
  private var nextIdentity: UInt64 = 1
  /// Columns of components this build does not register, from the last restore: written back
  /// for the entities that still live, so a newer build's data survives an older build's save.
  private var keptColumns: [WorldSnapshot.Column] = []
  private let logger: Logger
  /// True while ``restore(_:)`` spawns and despawns: an ECS creation event that calls
  /// ``track(_:)`` then is the restore's own spawn, which already has its identity.
  private var restoring = false
  /// The last snapshot's entities: what the world listed, and its ids and identities in identity
  /// order. Taken again while the world lists the same entities and no identity changed (nil
  /// after any change).
  private var lastOrder: (live: [UInt64], ids: [UInt64], identities: [EntityIdentity])?

  /// References the last ``snapshot()`` found pointing at no tracked entity (saved as none).
  public private(set) var lastSnapshotDanglingReferences: [DanglingReference] = []

  /// Saves `world` by `schema`. Entities already in the world are tracked now, in ascending ECS id.
  public init(_ world: World, schema: WorldSchema<World>, logger: Logger = Logger(label: "stasis.world")) {
    self.world = world
    self.schema = schema
    self.logger = logger
    for id in world.entityIDs().sorted() { track(id) }
  }

  // MARK: Identity

  /// Gives the entity the game just spawned (ECS id `id`) a new identity. Call it where the game
  /// spawns, or from the ECS's creation event: identities given in the game's own order make a
  /// restored run save what the uninterrupted one saves. A reused id gets a new identity.
  /// During a ``restore(_:)`` (an ECS event for the restore's own spawns) it changes nothing and
  /// returns identity 0: the restore gives the entity its saved identity once it is spawned.
  @discardableResult
  public func track(_ id: UInt64) -> EntityIdentity {
    if restoring { return identityOf[id] ?? EntityIdentity(rawValue: 0) }
    if let old = identityOf[id] { idOf[old] = nil }
    let identity = EntityIdentity(rawValue: nextIdentity)
    nextIdentity += 1  // below 2^62 from any file (WorldSnapshot.maxIdentity): 2^62 spawns from overflow
    identityOf[id] = identity
    lastOrder = nil
    idOf[identity] = id
    return identity
  }

  /// Forgets the entity with ECS id `id`, which the game despawned. Optional: a snapshot leaves
  /// out what the world no longer has, and ``track(_:)`` replaces a reused id's identity.
  public func untrack(_ id: UInt64) {
    guard !restoring, let identity = identityOf[id] else { return }
    identityOf[id] = nil
    lastOrder = nil
    idOf[identity] = nil
  }

  /// Spawns an entity in the world and tracks it; its ECS id.
  public func spawn() -> UInt64 {
    let id = world.spawnEntity()
    track(id)
    return id
  }

  /// Despawns an entity from the world and forgets it.
  public func despawn(_ id: UInt64) {
    world.despawnEntity(id)
    untrack(id)
  }

  /// The identity of the entity with ECS id `id`, or nil when it is not tracked.
  public func identity(of id: UInt64) -> EntityIdentity? { identityOf[id] }

  /// The ECS id of the entity with `identity`, or nil when no live entity has it.
  public func id(of identity: EntityIdentity) -> UInt64? { idOf[identity] }

  /// `items` (a family's members, say) in the order of their entities' identities: a system
  /// whose outcome depends on the order it visits entities (collisions) iterates this, and sees
  /// the same order in an uninterrupted run and after a restore. Untracked entities come last.
  public func inSaveOrder<Item>(_ items: [Item], id: (Item) -> UInt64) -> [Item] {
    let keyed = items.map { (identityOf[id($0)]?.rawValue ?? .max, $0) }
    return keyed.sorted { $0.0 < $1.0 }.map(\.1)
  }

  // MARK: Snapshot

  /// The world as a value: every live entity by identity, every registered component by column,
  /// the unknown components kept from the last restore. References to entities that are not
  /// tracked are saved as none and listed in ``lastSnapshotDanglingReferences``. A component
  /// whose `encode(to:)` throws leaves its column out and makes the snapshot's
  /// ``WorldSnapshot/failure``: saving it fails with that error, and the game plays on.
  public func snapshot() -> WorldSnapshot {
    let live = world.entityIDs()
    let (ids, identities) = order(of: live)
    let mapping = EntityMapping(identityOf: identityOf)
    var columns: [WorldSnapshot.Column] = []
    var deferred: [@Sendable () -> Result<WorldSnapshot.Column, SaveFileError>] = []
    var failure: SaveFileError?
    for component in schema.components {
      let (name, version) = (component.name, component.version)
      switch component.source {
      case .perEntity(let read):
        do {
          let (present, values) = try read(world, ids, identities, mapping)
          columns.append(
            WorldSnapshot.Column(
              name: name, version: version, entities: present.map { identities[$0] }, values: values))
        } catch {
          failure = failure ?? error.inComponent(name)
        }
      case .dense(let capture):
        // The ECS's arrays and the identities as they are now; the work is where it is encoded.
        let make = capture(world)
        let table = identityOf
        deferred.append {
          make(table, ids, identities).map {
            WorldSnapshot.Column(name: name, version: version, entities: $0.entities, values: $0.values)
          }
          .mapError { $0.inComponent(name) }
        }
      }
    }
    if !keptColumns.isEmpty {
      let alive = Set(identities)
      for kept in keptColumns { columns.append(kept.keeping(alive)) }
    }
    lastSnapshotDanglingReferences = mapping.dangling
    var snapshot = WorldSnapshot(ascending: identities, nextIdentity: nextIdentity, columns: columns)
    snapshot.failure = failure
    if !deferred.isEmpty { snapshot.deferred = DeferredColumns(deferred) }
    return snapshot
  }

  /// The live entities' ids and identities in identity order; untracked ones are tracked now,
  /// and identities of entities the world no longer has are forgotten.
  private func order(of live: [UInt64]) -> (ids: [UInt64], identities: [EntityIdentity]) {
    // An array compares in O(1) while the ECS has not written to its list since.
    if let last = lastOrder, last.live == live { return (last.ids, last.identities) }
    var identities: [EntityIdentity] = []
    identities.reserveCapacity(live.count)
    var untracked: [UInt64] = []
    let table = identityOf  // a local copy: no access check per entity
    for id in live {
      if let identity = table[id] { identities.append(identity) } else { untracked.append(id) }
    }
    if !untracked.isEmpty {
      logger.warning(
        "\(untracked.count) entities were never tracked; they get identities now, in ECS id order (track where the game spawns)"
      )
      for id in untracked.sorted() { track(id) }
      identities = live.map { identityOf[$0]! }
    }
    // Storage order is identity order until a swap-remove moves an entity: then sort.
    var ids = live
    if zip(identities, identities.dropFirst()).contains(where: { $0 >= $1 }) {
      let order = identities.indices.sorted { identities[$0] < identities[$1] }
      ids = order.map { live[$0] }
      identities = order.map { identities[$0] }
    }
    if identityOf.count != identities.count {
      identityOf.removeAll()
      idOf = Dictionary(minimumCapacity: ids.count)
      for (id, identity) in zip(ids, identities) {
        identityOf[id] = identity
        idOf[identity] = id
      }
    }
    lastOrder = (live, ids, identities)
    return (ids, identities)
  }

  // MARK: Restore

  /// Replaces the live world with `snapshot`: every entity in the world is despawned, each saved
  /// one spawned (in identity order, so the world's storage holds them in that order) with its
  /// saved components (references remapped to the new ECS ids), then the transient components
  /// rebuilt. The same path serves a return, a cold start, a fast-forward and a rollback.
  ///
  /// Everything is decoded and migrated before the world is touched: a column that does not
  /// decode, or a component saved by a newer version than this build's, throws and leaves the
  /// world as it was.
  @discardableResult
  public func restore(_ snapshot: WorldSnapshot) throws(SaveFileError) -> WorldRestoreReport {
    // A snapshot that could not be saved is not a world to restore: a column is missing from it.
    if let failure = snapshot.failure { throw failure }
    guard snapshot.nextIdentity <= WorldSnapshot.maxIdentity else {
      throw SaveFileError(
        .malformed, "entity world: nextIdentity \(snapshot.nextIdentity) is above \(WorldSnapshot.maxIdentity)",
        context: .init(field: "nextIdentity"))
    }
    var report = WorldRestoreReport(entities: snapshot.entities.count)
    // 1. Decode every column against stand-in ids: nothing live changes before this succeeds.
    var pending:
      [(component: RegisteredComponent<World>, column: WorldSnapshot.Column, decoded: DecodedColumn<World>?)] =
        []
    var unknown: [WorldSnapshot.Column] = []
    let standIns = EntityMapping(
      idOf: Dictionary(uniqueKeysWithValues: snapshot.entities.map { ($0, $0.rawValue) }))
    for component in schema.components {
      guard var column = snapshot.column(component.name) else { continue }
      let part = "component '\(component.name)'"
      guard column.version <= component.version else {
        throw SaveFileError(
          .newerSchema,
          "\(part) was saved at version \(column.version); this build knows up to \(component.version)",
          context: .init(field: "components.\(component.name)"), suggestion: "update the game to load it")
      }
      if column.version < component.version {
        var elements: [SaveValue] = []
        for index in column.entities.indices {
          var element = column.element(at: index)
          do {
            _ = try component.migrations.migrate(&element, from: column.version, to: component.version)
          } catch {
            var located = error
            located.context.field = "components.\(component.name)[\(index)]"
            throw located
          }
          elements.append(element)
        }
        report.migrations.append(
          WorldRestoreReport.ComponentMigration(component: component.name, from: column.version, to: component.version))
        column.values = .array(elements)
      }
      standIns.used = false
      standIns.component = component.name
      standIns.entities = column.entities
      let decoded: DecodedColumn<World>
      do {
        decoded = try component.decode(column.values, standIns)
      } catch {
        throw error.inComponent(component.name)
      }
      pending.append((component, column, standIns.used ? nil : decoded))
    }
    let registered = Set(schema.components.map(\.name))
    for column in snapshot.columns where !registered.contains(column.name) {
      unknown.append(column)
      report.unknownComponents.append(column.name)
    }
    if !unknown.isEmpty {
      logger.notice(
        "the save has components this build does not register; kept and written back: \(report.unknownComponents.joined(separator: ", "))"
      )
    }

    // 2. The world: out with what is live, in with the saved entities, in identity order.
    restoring = true
    for id in world.entityIDs() { world.despawnEntity(id) }
    identityOf.removeAll()
    lastOrder = nil
    idOf = [:]
    var ids: [UInt64] = []
    ids.reserveCapacity(snapshot.entities.count)
    for identity in snapshot.entities {
      let id = world.spawnEntity()
      ids.append(id)
      identityOf[id] = identity
      idOf[identity] = id
    }
    restoring = false
    nextIdentity = snapshot.nextIdentity
    keptColumns = unknown

    // 3. References against the real ids: only the columns that hold any decode again.
    let mapping = EntityMapping(idOf: idOf)
    var columns: [(entities: [EntityIdentity], decoded: DecodedColumn<World>)] = []
    for entry in pending {
      if let decoded = entry.decoded {
        columns.append((entry.column.entities, decoded))
        continue
      }
      mapping.component = entry.component.name
      mapping.entities = entry.column.entities
      do {
        columns.append((entry.column.entities, try entry.component.decode(entry.column.values, mapping)))
      } catch {
        // The same tree decoded a moment ago; only the ids differ, and a reference never throws.
        logger.error("component '\(entry.component.name)' decoded once and not twice: \(error)")
        throw error
      }
    }
    report.danglingReferences = mapping.dangling

    // 4. Entity by entity: its saved components in registration order, then the rebuilds.
    var cursors = Array(repeating: 0, count: columns.count)
    for (index, identity) in snapshot.entities.enumerated() {
      let id = ids[index]
      for (position, column) in columns.enumerated() {
        let cursor = cursors[position]
        guard cursor < column.entities.count, column.entities[cursor] == identity else { continue }
        column.decoded.assign(world, id, cursor)
        cursors[position] = cursor + 1
      }
      for rebuild in schema.rebuilds { rebuild.rebuild(world, id) }
    }
    return report
  }
}

/// What a ``SavedWorld/restore(_:)`` did beyond the plain: components migrated, components this
/// build does not know (kept and written back), references to entities the save does not hold.
public struct WorldRestoreReport: Sendable, Equatable {
  /// One component's column brought from the version it was saved at to this build's.
  public struct ComponentMigration: Sendable, Equatable {
    /// The component's name.
    public var component: String
    /// The version it was saved at.
    public var from: UInt32
    /// This build's version.
    public var to: UInt32

    /// `component` brought from version `from` to `to`.
    public init(component: String, from: UInt32, to: UInt32) {
      self.component = component
      self.from = from
      self.to = to
    }
  }

  /// How many entities were restored.
  public var entities: Int
  /// The components migrated, in registration order.
  public var migrations: [ComponentMigration] = []
  /// Components in the save that this build does not register: not given to any entity, kept
  /// for the entities that have them and written back by the next snapshot.
  public var unknownComponents: [String] = []
  /// References that pointed at entities the save does not hold, restored as ``EntityRef/none``.
  public var danglingReferences: [DanglingReference] = []
}

extension SaveFileError {
  /// The error, its field placed under the component's column (`components.NAME.field`).
  func inComponent(_ name: String) -> SaveFileError {
    var located = self
    located.context.field = ["components", name, context.field].compactMap { $0 }.joined(separator: ".")
    return located
  }
}

extension WorldSnapshot.Column {
  /// The column without the entities that are not in `alive`.
  func keeping(_ alive: Set<EntityIdentity>) -> Self {
    let keep = entities.indices.filter { alive.contains(entities[$0]) }
    if keep.count == entities.count { return self }
    var copy = self
    copy.entities = keep.map { entities[$0] }
    switch values {
    case .bulk(let bulk):
      let stride = bulk.layout.stride
      var bytes: [UInt8] = []
      bytes.reserveCapacity(keep.count * stride)
      bulk.withUnsafeBytes { raw in
        for index in keep { bytes += raw[(index * stride)..<((index + 1) * stride)] }
      }
      copy.values = .bulk(BulkArray(layout: bulk.layout, count: keep.count, bytes: bytes[...]))
    case .array(let items): copy.values = .array(keep.map { items[$0] })
    default: break
    }
    return copy
  }
}
