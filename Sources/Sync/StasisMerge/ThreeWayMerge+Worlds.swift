import Stasis

/// Entity worlds in a merge (``MergeRule/byEntity``): each side's world is laid out as a list of
/// entities, each an object of its components keyed by identity, merged as ``MergeRule/byKey(_:)``
/// merges entities, and laid back into columns.
extension Merger {
  /// The key an entity's identity goes under while a world is merged; a component's name never
  /// starts with `$` (`WorldSchema` refuses it, and a merge refuses a world that has one).
  static let entityKey = "$entity"

  /// Nil when the values are not worlds, or when a component's version or bulk layout differs
  /// between the sides (the world is then one value, settled whole).
  mutating func mergeByEntity(_ base: SaveValue?, _ ours: SaveValue?, _ theirs: SaveValue?, path: String)
    -> SaveValue?
  {
    guard let ours, let theirs, let o = try? WorldSnapshot(tree: ours), let t = try? WorldSnapshot(tree: theirs) else {
      return nil
    }
    var b = WorldSnapshot()
    if let base {
      guard let world = try? WorldSnapshot(tree: base) else { return nil }
      b = world
    }
    // What each component is stored as: one version and one kind (a layout, or trees) on every side.
    var kinds: [String: (version: UInt32, layout: BulkLayout?)] = [:]
    for column in o.columns + t.columns + b.columns {
      guard !column.name.hasPrefix("$") else { return nil }
      var layout: BulkLayout?
      if case .bulk(let bulk) = column.values { layout = bulk.layout }
      if let known = kinds[column.name] {
        guard known.version == column.version, known.layout == layout else { return nil }
      } else {
        kinds[column.name] = (column.version, layout)
      }
    }
    var next = max(o.nextIdentity, t.nextIdentity, b.nextIdentity)
    let theirEntities = Self.reidentified(Self.entities(of: t), spawnedAlsoBy: o, since: b, next: &next)
    func byIdentity(_ entities: [SaveValue]) -> [UInt64: SaveObject] {
      var found: [UInt64: SaveObject] = [:]
      for case .object(var object) in entities {
        guard let id = object[Self.entityKey]?.uint64Value else { continue }
        object[Self.entityKey] = nil
        found[id] = object
      }
      return found
    }
    let (be, oe, te) = (byIdentity(Self.entities(of: b)), byIdentity(Self.entities(of: o)), byIdentity(theirEntities))
    var merged: [SaveValue] = []
    for id in Set(be.keys).union(oe.keys).union(te.keys).sorted() {
      let label = "\(path)[#\(id)]"
      guard let entity = mergeEntity(be[id], oe[id], te[id], path: label) else { continue }
      var object = SaveObject([(Self.entityKey, .uint64(id))])
      object.fields += entity.fields
      merged.append(.object(object))
    }
    return Self.world(from: merged, kinds: kinds, nextIdentity: next)?.tree
  }

  /// One entity three ways: one side's change whole; removed on one side and changed on the
  /// other, by the rule for `world[*]` (`ours`, `theirs`, `custom`), else the fallback; changed
  /// on both, component by component, each by the rules at and below `world[*].NAME`, else the
  /// fallback side's component.
  private mutating func mergeEntity(_ base: SaveObject?, _ ours: SaveObject?, _ theirs: SaveObject?, path: String)
    -> SaveObject?
  {
    if ours == theirs { return ours }
    if let one = takeOneSide(base, ours, theirs) { return one }
    guard let ours, let theirs else {
      let field = MergeField(
        path: path, base: base.map(SaveValue.object), ours: ours.map(SaveValue.object),
        theirs: theirs.map(SaveValue.object))
      var side: MergeSide?
      var resolution: String?
      if let (pattern, rule) = rules.rule(for: path) {
        if let whole = Self.wholeSide(rule) {
          (side, resolution) = (whole, "rule \(rule.name) (\(pattern))")
        } else if case .custom = rule {
          let decided = rule.apply(field)
          conflicts.append(ContestedValue(field: field, resolution: "rule custom (\(pattern))"))
          if case .object(let object)? = decided { return object }
          return nil
        }
      }
      if resolution == nil { (resolution, side) = settleSide(field) }
      conflicts.append(ContestedValue(field: field, resolution: resolution))
      return Self.value(on: side, base, ours, theirs)
    }
    var names = ours.fields.map(\.name)
    for field in theirs.fields where !names.contains(field.name) { names.append(field.name) }
    for field in base?.fields ?? [] where !names.contains(field.name) { names.append(field.name) }
    var result = SaveObject()
    for name in names.sorted() {
      if let value = merge(base?[name], ours[name], theirs[name], path: "\(path).\(name)", declared: true) {
        result[name] = value
      }
    }
    return result
  }

  /// Their entities, where one they spawned since the base under an identity ours also gave out
  /// since the base (each device gives the next serial to its own spawn) is theirs under a new
  /// identity from `next`, and their references to it follow: two spawns are two entities, never
  /// one merged from both, and no identity means two things. A spawn identical on both sides is
  /// one entity.
  static func reidentified(
    _ theirs: [SaveValue], spawnedAlsoBy ours: WorldSnapshot, since base: WorldSnapshot, next: inout UInt64
  ) -> [SaveValue] {
    var ourEntities: [UInt64: SaveValue] = [:]
    for entity in entities(of: ours) {
      if let id = entity[field: entityKey]?.uint64Value { ourEntities[id] = entity }
    }
    let ourNew = base.nextIdentity..<max(base.nextIdentity, ours.nextIdentity)
    var renamed: [UInt64: UInt64] = [:]
    for entity in theirs {
      guard let id = entity[field: entityKey]?.uint64Value, ourNew.contains(id), ourEntities[id] != entity else {
        continue
      }
      renamed[id] = next
      next += 1
    }
    guard !renamed.isEmpty else { return theirs }
    return theirs.map { entity in
      var entity = remapped(entity, renamed)
      if let id = entity[field: entityKey]?.uint64Value, let new = renamed[id] {
        entity[field: entityKey] = .uint64(new)
      }
      return entity
    }
  }

  /// `value` with every saved reference (`{"$entity": id}`) to a renamed identity pointing at its new one.
  static func remapped(_ value: SaveValue, _ renamed: [UInt64: UInt64]) -> SaveValue {
    switch value {
    case .object(var object):
      if object.fields.count == 1, object.fields[0].name == entityKey {
        if let id = object.fields[0].value.uint64Value, let new = renamed[id] {
          return .object(SaveObject([(entityKey, .uint64(new))]))
        }
        return value
      }
      for index in object.fields.indices where object.fields[index].name != entityKey {
        object.fields[index].value = remapped(object.fields[index].value, renamed)
      }
      return .object(object)
    case .array(let items): return .array(items.map { remapped($0, renamed) })
    default: return value
    }
  }

  /// The world's entities, ascending, each `{"$entity": identity, component: value, ...}`; a bulk
  /// component's value is a bulk array of its one element, so it merges whole.
  static func entities(of world: WorldSnapshot) -> [SaveValue] {
    var objects = world.entities.map { SaveObject([(entityKey, .uint64($0.rawValue))]) }
    for column in world.columns {
      var cursor = 0
      for (index, identity) in world.entities.enumerated() {
        guard cursor < column.entities.count, column.entities[cursor] == identity else { continue }
        objects[index][column.name] = element(column, cursor)
        cursor += 1
      }
    }
    return objects.map(SaveValue.object)
  }

  private static func element(_ column: WorldSnapshot.Column, _ index: Int) -> SaveValue {
    switch column.values {
    case .bulk(let bulk):
      let stride = bulk.layout.stride
      let bytes = bulk.withUnsafeBytes { Array($0[(index * stride)..<((index + 1) * stride)]) }
      return .bulk(BulkArray(layout: bulk.layout, count: 1, bytes: bytes[...]))
    case .array(let items): return items[index]
    default: return .null
    }
  }

  /// The merged entities laid back into columns by identity; nil when a merged component does
  /// not fit its column (a rule's value of another kind).
  static func world(
    from entities: [SaveValue], kinds: [String: (version: UInt32, layout: BulkLayout?)], nextIdentity: UInt64
  ) -> WorldSnapshot? {
    var rows: [(identity: EntityIdentity, components: SaveObject)] = []
    for entity in entities {
      guard case .object(let object) = entity, let raw = object[entityKey]?.uint64Value else { return nil }
      rows.append((EntityIdentity(rawValue: raw), object))
    }
    rows.sort { $0.identity < $1.identity }
    var columns: [WorldSnapshot.Column] = []
    for name in kinds.keys.sorted() {
      let kind = kinds[name]!
      var members: [EntityIdentity] = []
      var trees: [SaveValue] = []
      var bytes: [UInt8] = []
      for row in rows {
        guard let value = row.components[name] else { continue }
        members.append(row.identity)
        if let layout = kind.layout {
          guard case .bulk(let one) = value, one.count == 1, one.layout == layout else { return nil }
          one.withUnsafeBytes { bytes += $0 }
        } else {
          trees.append(value)
        }
      }
      let values: SaveValue =
        kind.layout.map { .bulk(BulkArray(layout: $0, count: members.count, bytes: bytes[...])) } ?? .array(trees)
      columns.append(WorldSnapshot.Column(name: name, version: kind.version, entities: members, values: values))
    }
    let identities = rows.map(\.identity)
    let next = max(nextIdentity, (identities.last?.rawValue ?? 0) + 1)
    return WorldSnapshot(entities: identities, nextIdentity: next, columns: columns)
  }
}
