import Stasis
import StasisMerge

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
  let bulk: BulkDifference?

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
  func write(listing: BulkListing, to out: TextOutput) {
    if let bulk {
      bulk.writeText(path: path, listing: listing, to: out)
    } else {
      out.line(out.paint(path, .bold) + ": " + out.paint(oldText, .red) + " → " + out.paint(newText, .green))
    }
  }
}

/// How `stasis diff` aligns arrays of objects: by the key the game's merge declarations give
/// the array's path (`monsters = by-key id`), else by the first of `keys` that every element
/// has, with distinct values; else index by index.
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

/// Compares two values field by field; bulk arrays and byte strings element by element,
/// summarised. An array of objects that all have one of the `keys` fields, with distinct
/// values, is aligned by it (`monsters[id=17]`): an element one side removed or added is one
/// difference, and the others compare with their namesakes wherever they stand.
func differences(
  _ a: SaveValue?, _ b: SaveValue?, path: String, keys: DiffAlignment, into result: inout [SaveDifference]
) {
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
  keys: DiffAlignment, into result: inout [SaveDifference]
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
