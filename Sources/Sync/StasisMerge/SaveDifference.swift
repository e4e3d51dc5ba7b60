import Stasis

/// One difference between two saves: a line of `stasis diff`.
public struct SaveDifference: Sendable {
  /// Where the saves differ: `metadata.frame`, `camera.x`, `physics.bodies`, `monsters[id=17]`,
  /// or `level.items.count` when an array's length changed.
  public let path: String
  /// The old save's value there; nil when only the new save has it.
  public let old: SaveValue?
  /// The new save's value there; nil when only the old save has it.
  public let new: SaveValue?
  /// For bulk arrays and byte strings: which elements differ, and the first few field by field.
  package let bulk: BulkDifference?

  init(path: String, old: SaveValue?, new: SaveValue?, bulk: BulkDifference? = nil) {
    self.path = path
    self.old = old
    self.new = new
    self.bulk = bulk
  }

  /// The old value as `stasis diff` shows it: `42`, `"orc"`, `{3 fields}`, `[1000 × 16-byte
  /// elements]`, or `(absent)`.
  public var oldText: String { shortText(old) }

  /// The new value as `stasis diff` shows it (see ``oldText``).
  public var newText: String { shortText(new) }

  /// What `stasis diff` prints for this difference, without colours or a final newline:
  /// `path: old → new`, or for a bulk array or byte string `path: 3 of 10 elements differ, …`
  /// and its first differing elements, a line each.
  public var text: String {
    let out = TextOutput()
    write(listing: .summary, to: out)
    return String(out.text.dropLast())
  }

  /// This difference's lines of `stasis diff`, painted when `out` is a terminal.
  package func write(listing: BulkListing, to out: TextOutput) {
    if let bulk {
      bulk.writeText(path: path, listing: listing, to: out)
    } else {
      out.line(out.paint(path, .bold) + ": " + out.paint(oldText, .red) + " → " + out.paint(newText, .green))
    }
  }
}

extension SaveDifference {
  /// What differs between two saves, in the order `stasis diff OLD NEW` lists it: the header's
  /// metadata (`metadata.frame`, `metadata.summary.…`, `metadata.schemaVersion`), then the
  /// sections field by field. Arrays of objects are compared index by index; bulk arrays and
  /// byte strings element by element, each one difference. Empty when the saves are equal.
  ///
  /// The merge's own module computes it, below the CLI's renderers, so that replays, merges and
  /// conflicts name what differs without the tools (`SaveInspection.differences` is this).
  public static func between(_ old: SaveDocument, _ new: SaveDocument) -> [SaveDifference] {
    var warnings: [String] = []
    return between(old, new, alignment: DiffAlignment(), warnings: &warnings)
  }

  /// As ``between(_:_:)``, arrays of objects and bulk arrays aligned as `alignment` says, adding
  /// to `warnings` a line for each bulk array that has its key field but could not be paired by
  /// it (a float field, or a key twice) and was compared index by index:
  /// `bullets: not paired by 'serial': …; compared index by index`.
  package static func between(
    _ old: SaveDocument, _ new: SaveDocument, alignment: DiffAlignment, warnings: inout [String]
  ) -> [SaveDifference] {
    var result = DiffCollection()
    differences(metadata(old), metadata(new), path: "metadata", keys: alignment, into: &result)
    differences(old.tree, new.tree, path: "", keys: alignment, into: &result)
    warnings += result.warnings
    return result.differences
  }

  /// A header's summary as the fields a difference compares under `metadata`. The game's own
  /// fields are under `summary`, as `inspect --json` shows them: none can shadow a fixed field.
  private static func metadata(_ document: SaveDocument) -> SaveValue {
    let summary = document.summary
    return .object(
      SaveObject([
        ("slot", .string(summary.slot)), ("summary", summary.details), ("playTime", .float64(summary.playTime)),
        ("frame", .int64(summary.frame)), ("progress", summary.progress.map { .float64($0) } ?? .null),
        ("device", .string(summary.device)), ("schemaVersion", .uint32(document.game.schemaVersion)),
      ]))
  }
}

/// How `stasis diff` aligns arrays of objects and bulk arrays: by the key the game's merge
/// declarations give the array's path (`monsters = by-key id`), else by the first of `keys`
/// that every element has, with distinct values; else index by index.
package struct DiffAlignment: Sendable {
  package var keys: [String]
  package var declarations: MergeRules

  package init(keys: [String] = [], declarations: MergeRules = MergeRules()) {
    self.keys = keys
    self.declarations = declarations
  }

  /// The fields to try for the array at `path`, the declared one first.
  func keys(at path: String) -> [String] {
    if case .byKey(let field)? = declarations.rule(at: path) { return [field] + keys.filter { $0 != field } }
    return keys
  }
}

/// What ``differences(_:_:path:keys:into:)`` finds: the differences, in order, and a warning
/// for each bulk array that has the key it was to be paired by but could not be paired by it.
struct DiffCollection {
  var differences: [SaveDifference] = []
  /// `bullets: not paired by 'serial': …; compared index by index`, for standard error.
  var warnings: [String] = []

  mutating func append(_ difference: SaveDifference) { differences.append(difference) }
}

/// Compares two values field by field; bulk arrays and byte strings element by element,
/// summarised. An array of objects that all have one of the `keys` fields, with distinct
/// values, is aligned by it (`monsters[id=17]`): an element one side removed or added is one
/// difference, and the others compare with their namesakes wherever they stand. A bulk array
/// whose layout has the field is paired by it as `stasis merge`'s `by-key` pairs it
/// (``KeyedElements``), and its elements then differ as objects do (`bullets[serial=148]`).
func differences(
  _ a: SaveValue?, _ b: SaveValue?, path: String, keys: DiffAlignment, into result: inout DiffCollection
) {
  if let a, let b, WorldSnapshot.isWorld(a), WorldSnapshot.isWorld(b), let left = try? WorldSnapshot(tree: a),
    let right = try? WorldSnapshot(tree: b)
  {
    return worldDifferences(left, right, path: path, keys: keys, into: &result)
  }
  switch (a, b) {
  case (.object(let left)?, .object(let right)?):
    var names = left.fields.map(\.name)
    for field in right.fields where !names.contains(field.name) { names.append(field.name) }
    for name in names {
      differences(left[name], right[name], path: path.isEmpty ? name : "\(path).\(name)", keys: keys, into: &result)
    }
  case (.array(let left)?, .array(let right)?):
    for key in keys.keys(at: path) {
      guard let leftIds = ids(left, by: key), let rightIds = ids(right, by: key) else { continue }
      keyedDifferences(
        left, right, leftIds: leftIds, rightIds: rightIds, key: key, path: path, keys: keys, into: &result)
      return
    }
    if left.count != right.count {
      result.append(
        SaveDifference(path: "\(path).count", old: .int64(Int64(left.count)), new: .int64(Int64(right.count))))
    }
    for index in 0..<min(left.count, right.count) {
      differences(left[index], right[index], path: "\(path)[\(index)]", keys: keys, into: &result)
    }
  case (.bulk(let left)?, .bulk(let right)?):
    guard left != right else { return }
    var refusals: [String] = []
    for key in keys.keys(at: path) {
      switch bulkPairing(left, right, by: key) {
      case .paired(let leftKeys, let rightKeys):
        result.warnings += refusals.map { "\(path): \($0)" }
        keyedBulkDifferences(
          left, right, leftKeys: leftKeys, rightKeys: rightKeys, key: key, path: path, keys: keys, into: &result)
        return
      case .refused(let reason): refusals.append(reason)
      case .noField: continue
      }
    }
    result.warnings += refusals.map { "\(path): \($0); compared index by index" }
    let summary = BulkDifference(old: .bulk(left), new: .bulk(right))
    if summary.differing > 0 { result.append(SaveDifference(path: path, old: a, new: b, bulk: summary)) }
  case (.bytes(let left)?, .bytes(let right)?):
    guard left != right else { return }
    result.append(
      SaveDifference(path: path, old: a, new: b, bulk: BulkDifference(old: .bytes(left), new: .bytes(right))))
  default:
    if a != b { result.append(SaveDifference(path: path, old: a, new: b)) }
  }
}

/// The elements' `key` values by index when every element is an object whose `key` field is
/// a plain value, no two alike; else nil.
private func ids(_ items: [SaveValue], by key: String) -> [SaveValue]? {
  var ids: [SaveValue] = []
  var seen = IdIndex()
  for item in items {
    guard case .object(let object) = item, let value = object[key] else { return nil }
    switch value {
    case .bulk, .bytes, .null: return nil
    default: break  // a number, a string, or a struct (an id with a generation), by its encoded value
    }
    guard seen.index(of: value, in: ids) == nil else { return nil }
    seen.insert(value, at: ids.count)
    ids.append(value)
  }
  return ids
}

/// Finds an id among many without comparing each with each: ids bucketed by their text, then
/// compared exactly (`1` the integer and `1` the byte share a bucket, not an identity).
private struct IdIndex {
  private var buckets: [String: [Int]] = [:]

  mutating func insert(_ value: SaveValue, at index: Int) { buckets[value.keyText, default: []].append(index) }

  func index(of value: SaveValue, in ids: [SaveValue]) -> Int? {
    buckets[value.keyText]?.first { ids[$0] == value }
  }
}

/// Elements matched by `key`: the old side's order first, then what only the new side has.
private func keyedDifferences(
  _ left: [SaveValue], _ right: [SaveValue], leftIds: [SaveValue], rightIds: [SaveValue], key: String, path: String,
  keys: DiffAlignment, into result: inout DiffCollection
) {
  var leftIndex = IdIndex()
  for (index, id) in leftIds.enumerated() { leftIndex.insert(id, at: index) }
  var rightIndex = IdIndex()
  for (index, id) in rightIds.enumerated() { rightIndex.insert(id, at: index) }
  func elementPath(_ id: SaveValue) -> String { "\(path)[\(key)=\(id.keyText)]" }
  for (index, id) in leftIds.enumerated() {
    if let counterpart = rightIndex.index(of: id, in: rightIds) {
      differences(left[index], right[counterpart], path: elementPath(id), keys: keys, into: &result)
    } else {
      result.append(SaveDifference(path: elementPath(id), old: left[index], new: nil))
    }
  }
  for (index, id) in rightIds.enumerated() where leftIndex.index(of: id, in: leftIds) == nil {
    result.append(SaveDifference(path: elementPath(id), old: nil, new: right[index]))
  }
}

/// How two bulk arrays pair by a field.
private enum BulkPairing {
  /// By the field, as `by-key` pairs them in a merge.
  case paired(KeyedElements, KeyedElements)
  /// A layout has no such field: not paired by it, in silence, as an array of objects without it.
  case noField
  /// The field is a float (`0.0` and `-0.0` would be two keys, and a NaN no key), or a key is
  /// on two elements of one side: `not paired by 'serial': …`, for a warning.
  case refused(String)
}

/// Two bulk arrays' elements paired by their field `key`, as a merge's `by-key` pairs them.
private func bulkPairing(_ left: BulkArray, _ right: BulkArray, by key: String) -> BulkPairing {
  guard let leftField = left.layout.fields.first(where: { $0.name == key }),
    let rightField = right.layout.fields.first(where: { $0.name == key })
  else { return .noField }
  if let float = [leftField, rightField].first(where: { [.float32, .float64].contains($0.type) }) {
    return .refused(
      "not paired by '\(key)': it is a \(float.type.formatName) field, and elements pair only by an integer or bool field"
    )
  }
  switch (KeyedElements.pairing(left, by: key), KeyedElements.pairing(right, by: key)) {
  case (.success(let leftKeys), .success(let rightKeys)):
    return .paired(leftKeys, rightKeys)
  case (.failure(.duplicateKey(let id, let first, let second)), _):
    return .refused("not paired by '\(key)': \(key) \(id) is on the old save's elements \(first) and \(second)")
  case (_, .failure(.duplicateKey(let id, let first, let second))):
    return .refused("not paired by '\(key)': \(key) \(id) is on the new save's elements \(first) and \(second)")
  case (.failure(.missingKey), _), (_, .failure(.missingKey)):
    return .noField  // not reached: both layouts have the field
  }
}

/// Bulk elements matched by `key`, as ``keyedDifferences(_:_:leftIds:rightIds:key:path:keys:into:)``
/// matches objects: the old side's order first, then what only the new side has. A pair whose
/// saved fields are equal byte for byte is skipped without decoding it.
private func keyedBulkDifferences(
  _ left: BulkArray, _ right: BulkArray, leftKeys: KeyedElements, rightKeys: KeyedElements, key: String,
  path: String, keys: DiffAlignment, into result: inout DiffCollection
) {
  let spans = left.layout == right.layout ? FieldSpans(left.layout) : nil
  func elementPath(_ id: String) -> String { "\(path)[\(key)=\(id)]" }
  for (index, id) in leftKeys.keys.enumerated() {
    guard let counterpart = rightKeys.index[id] else {
      result.append(SaveDifference(path: elementPath(id), old: .object(left.element(at: index)), new: nil))
      continue
    }
    if let spans, !spans.differ(left, at: index, right, at: counterpart) { continue }
    differences(
      .object(left.element(at: index)), .object(right.element(at: counterpart)), path: elementPath(id), keys: keys,
      into: &result)
  }
  for (index, id) in rightKeys.keys.enumerated() where leftKeys.index[id] == nil {
    result.append(SaveDifference(path: elementPath(id), old: nil, new: .object(right.element(at: index))))
  }
}

/// Two entity worlds entity by entity, paired by identity: an entity one side lacks is one
/// difference (`world[#7]: (absent) → {2 fields}`, its components by name); one both have differs
/// component by component (`world[#7].motion.x`, `world[#7].health: {1 fields} → (absent)`).
private func worldDifferences(
  _ left: WorldSnapshot, _ right: WorldSnapshot, path: String, keys: DiffAlignment, into result: inout DiffCollection
) {
  func entity(_ world: WorldSnapshot, _ identity: EntityIdentity) -> SaveValue {
    .object(SaveObject(world.components(of: identity)))
  }
  var rightIndex = 0
  var leftIndex = 0
  while leftIndex < left.entities.count || rightIndex < right.entities.count {
    let l = leftIndex < left.entities.count ? left.entities[leftIndex] : nil
    let r = rightIndex < right.entities.count ? right.entities[rightIndex] : nil
    if let l, r == nil || l < r! {
      result.append(SaveDifference(path: "\(path)[\(l)]", old: entity(left, l), new: nil))
      leftIndex += 1
    } else if let r, l == nil || r < l! {
      result.append(SaveDifference(path: "\(path)[\(r)]", old: nil, new: entity(right, r)))
      rightIndex += 1
    } else if let l {
      let names = Array(Set(left.columns.map(\.name) + right.columns.map(\.name))).sorted()
      for name in names {
        differences(
          left.column(name)?.value(of: l), right.column(name)?.value(of: l), path: "\(path)[\(l)].\(name)",
          keys: keys, into: &result)
      }
      leftIndex += 1
      rightIndex += 1
    }
  }
  if left.nextIdentity != right.nextIdentity {
    result.append(
      SaveDifference(path: "\(path).nextIdentity", old: .uint64(left.nextIdentity), new: .uint64(right.nextIdentity)))
  }
  for name in Array(Set(left.columns.map(\.name) + right.columns.map(\.name))).sorted() {
    let (old, new) = (left.column(name)?.version, right.column(name)?.version)
    if old != new, old != nil, new != nil {
      result.append(SaveDifference(path: "\(path).components.\(name).version", old: .uint32(old!), new: .uint32(new!)))
    }
  }
}

/// A short rendering of a value for diff lines: `(absent)` for nil.
package func shortText(_ value: SaveValue?) -> String {
  guard let value else { return "(absent)" }
  switch value {
  case .array(let items): return "[\(items.count) items]"
  case .object(let object): return "{\(object.fields.count) fields}"
  case .bulk(let bulk): return "[\(bulk.count) × \(bulk.layout.stride)-byte elements]"
  case .bytes(let bytes): return "<\(bytes.count) bytes>"
  case .string(let text): return "\"\(text)\""
  default:
    return "\(value.jsonObject)"
  }
}

extension ScalarType {
  /// The type's name in the format (`f32`, `u16`, `bool`), as `SaveValue.typeName` says it.
  package var formatName: String {
    switch self {
    case .bool: return "bool"
    case .int8: return "i8"
    case .int16: return "i16"
    case .int32: return "i32"
    case .int64: return "i64"
    case .uint8: return "u8"
    case .uint16: return "u16"
    case .uint32: return "u32"
    case .uint64: return "u64"
    case .float32: return "f32"
    case .float64: return "f64"
    }
  }
}
