import ArgumentParser
import Foundation
import Stasis
import StasisCloud

/// One difference between two saves.
struct Difference {
  var path: String
  var old: SaveValue?
  var new: SaveValue?
  /// For bulk arrays and byte strings: which elements differ, and the first few field by field.
  var bulk: BulkDifference?
}

/// How `stasis diff` aligns arrays of objects: by the key the game's merge declarations give
/// the array's path (`monsters = by-key id`), else by the first of `keys` that every element
/// has, with distinct values; else index by index.
struct Alignment {
  var keys: [String] = []
  var declarations = MergeRules()

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
  _ a: SaveValue?, _ b: SaveValue?, path: String, keys: Alignment = Alignment(), into result: inout [Difference]
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
      result.append(Difference(path: "\(path).count", old: .int64(Int64(left.count)), new: .int64(Int64(right.count))))
    }
    for index in 0..<min(left.count, right.count) {
      differences(left[index], right[index], path: "\(path)[\(index)]", keys: keys, into: &result)
    }
  case (.bulk(let left)?, .bulk(let right)?):
    guard left != right else { return }
    let summary = BulkDifference(old: .bulk(left), new: .bulk(right))
    if summary.differing > 0 { result.append(Difference(path: path, old: a, new: b, bulk: summary)) }
  case (.bytes(let left)?, .bytes(let right)?):
    guard left != right else { return }
    result.append(Difference(path: path, old: a, new: b, bulk: BulkDifference(old: .bytes(left), new: .bytes(right))))
  default:
    if a != b { result.append(Difference(path: path, old: a, new: b)) }
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
  keys: Alignment, into result: inout [Difference]
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
      result.append(Difference(path: elementPath(id), old: left[index], new: nil))
    }
  }
  for (index, id) in rightIds.enumerated() where leftIndex.index(of: id, in: leftIds) == nil {
    result.append(Difference(path: elementPath(id), old: nil, new: right[index]))
  }
}

struct Diff: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Show the differences between two saves, field by field.",
    discussion: """
      Example:
        stasis diff Saves/autosave/0000000002.stasis Saves/autosave/0000000003.stasis
        stasis diff a.stasis b.stasis --json
        stasis diff a.stasis b.stasis --all-elements   # every differing element of bulk arrays
        stasis diff a.stasis b.stasis --key id      # monsters[id=17]: one dead monster is one difference
        stasis diff a.stasis b.stasis --declarations merge.txt   # 'monsters = by-key id' aligns monsters

      Bulk arrays (physics bodies) and byte strings (a tile map) are compared
      over their raw bytes and summarised: how many elements differ, the
      changed ranges (runs of differing elements: 4 is one element, 8..<10
      two, the end excluded; the first ten, then how many more), and the first
      five differing elements field by field. --all-elements lists every range
      and every differing element, written as they are found. Arrays of
      objects are compared index by index unless --key names the field that
      identifies their elements, or the game's merge declarations (the file
      stasis merge reads) give their path a by-key rule.

      --json prints a list of {"path", "old", "new"}; a bulk array or byte
      string is {"path", "bulk": {"oldCount", "newCount", "differingElements",
      "changedRanges": [[start, end], ...], "moreRanges", "first": [{"index",
      "fields": [{"field", "old", "new"}]}]}}: each range's end excluded,
      moreRanges the ranges not listed, first the first differing elements
      (every one with --all-elements). A bulk array in "old" or "new" (a type
      that changed) is summarised as stasis dump does.

      Exit 0 when equal, 1 when different, as diff does.
      """
  )

  @Argument(help: "The old save.")
  var old: String

  @Argument(help: "The new save.")
  var new: String

  @Flag(help: "Print the differences as JSON: a list of {path, old, new} (or {path, bulk}).")
  var json = false

  @Flag(help: "List every changed range and every differing element of bulk arrays, streamed, not the first few.")
  var allElements = false

  @Option(
    name: .customLong("key"),
    help: ArgumentHelp(
      """
      Align arrays of objects by this field (an id): an element removed, added or changed is one \
      difference, wherever it stands. Repeat it for arrays keyed by different fields.
      """,
      valueName: "field"))
  var keys: [String] = []

  @Option(
    help: ArgumentHelp(
      "The game's merge declarations (see stasis merge --help): arrays with a by-key rule are aligned by it.",
      valueName: "file"))
  var declarations: String?

  func run() throws {
    var keys = Alignment(keys: self.keys)
    if let declarations { keys.declarations = try MergeDeclarations.read(declarations) }
    let left = try openSave(old)
    let right = try openSave(new)
    // A key or a declared path the saves do not have would align nothing, in silence.
    for key in self.keys where ![left.tree, right.tree].contains(where: { hasKeyedArray(key, in: $0) }) {
      throw ValidationError("--key \(key): no array of objects in either save has a field '\(key)'")
    }
    let unknown = keys.declarations.unknownPaths(in: [left, right])
    if !unknown.isEmpty, let declarations {
      throw ValidationError(
        "\(declarations): declared paths not in either save: " + unknown.map { "'\($0)'" }.joined(separator: ", "))
    }
    var result: [Difference] = []
    differences(summaryValue(left), summaryValue(right), path: "metadata", keys: keys, into: &result)
    differences(left.tree, right.tree, path: "", keys: keys, into: &result)
    let output = BufferedOutput()
    if json {
      writeJSON(result, to: StreamedJSON(output))
    } else {
      writeText(result, to: output)
    }
    output.flush()
    if !result.isEmpty { throw Exit.invalid }
  }

  private var listing: BulkListing { allElements ? .allElements : .summary }

  private func summaryValue(_ document: SaveDocument) -> SaveValue {
    let summary = document.summary
    // The game's own fields are under `summary`, as `inspect --json` shows them: none can
    // shadow a fixed field.
    return .object(
      SaveObject([
        ("slot", .string(summary.slot)), ("summary", summary.details), ("playTime", .float64(summary.playTime)),
        ("frame", .int64(summary.frame)), ("progress", summary.progress.map { .float64($0) } ?? .null),
        ("device", .string(summary.device)), ("schemaVersion", .uint32(document.game.schemaVersion)),
      ]))
  }

  private func writeJSON(_ result: [Difference], to json: StreamedJSON) {
    json.array(result) { difference in
      if let bulk = difference.bulk {
        json.object([
          ("path", { json.string(difference.path) }),
          ("bulk", { bulk.writeJSON(to: json, listing: listing) }),
        ])
      } else {
        json.object([
          ("path", { json.string(difference.path) }),
          ("old", { json.value(difference.old, listing: listing) }),
          ("new", { json.value(difference.new, listing: listing) }),
        ])
      }
    }
    json.finish()
  }

  private func writeText(_ result: [Difference], to out: BufferedOutput) {
    guard !result.isEmpty else {
      out.line("no differences")
      return
    }
    for difference in result {
      if let bulk = difference.bulk {
        bulk.writeText(path: difference.path, listing: listing, to: out)
      } else {
        out.line(
          out.paint(difference.path, .bold) + ": " + out.paint(shortText(difference.old), .red) + " → "
            + out.paint(shortText(difference.new), .green))
      }
    }
    out.line("\(result.count) difference\(result.count == 1 ? "" : "s")")
  }
}

/// Whether some array in `value` holds an object with the field `key`.
private func hasKeyedArray(_ key: String, in value: SaveValue) -> Bool {
  switch value {
  case .object(let object): return object.fields.contains { hasKeyedArray(key, in: $0.value) }
  case .array(let elements):
    return elements.contains { element in
      if case .object(let object) = element, object[key] != nil { return true }
      return hasKeyedArray(key, in: element)
    }
  default: return false
  }
}
