import ArgumentParser
import Foundation
import Stasis
import StasisCloud
import StasisInspect
import StasisMerge

struct Diff: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Show the differences between two saves, field by field.",
    discussion: """
      Example:
        stasis diff Saves/autosave/0000000002.stasis Saves/autosave/0000000003.stasis
        stasis diff a.stasis b.stasis --json
        stasis diff a.stasis b.stasis --all-elements   # every differing element of bulk arrays
        stasis diff a.stasis b.stasis --key id      # monsters[id=17]: one dead monster is one difference
        stasis diff a.stasis b.stasis --key serial  # bullets[serial=148]: a bulk array, paired the same way
        stasis diff a.stasis b.stasis --declarations merge.txt   # 'monsters = by-key id' aligns monsters

      An entity world (a game's WorldSnapshot) is compared entity by entity,
      paired by identity: world[#7]: (absent) → {2 fields} is an entity added,
      world[#7].motion.x: 1.0 → 2.0 a component's field that changed.

      Bulk arrays (physics bodies) and byte strings (a tile map) are compared
      over their raw bytes and summarised: how many elements differ, the
      changed ranges (runs of differing elements: 4 is one element, 8..<10
      two, the end excluded; the first ten, then how many more), and the first
      five differing elements field by field. --all-elements lists every range
      and every differing element, written as they are found. Arrays of
      objects and bulk arrays are compared index by index unless --key names
      the field that identifies their elements, or the game's merge
      declarations (the file stasis merge reads) give their path a by-key
      rule: then elements are paired by that field as stasis merge pairs them,
      and each one removed, added or changed is a difference of its own
      (bullets[serial=148]). A bulk array is paired by an integer or bool
      field; by a float field, or when a key is on two elements of one save,
      it is compared index by index, with a warning on standard error.

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
      Align arrays of objects and bulk arrays by this field (an id): an element removed, added or \
      changed is one difference, wherever it stands. Repeat it for arrays keyed by different fields.
      """,
      valueName: "field"))
  var keys: [String] = []

  @Option(
    help: ArgumentHelp(
      "The game's merge declarations (see stasis merge --help): arrays and bulk arrays with a by-key rule are aligned by it.",
      valueName: "file"))
  var declarations: String?

  func run() throws {
    var keys = DiffAlignment(keys: self.keys)
    if let declarations { keys.declarations = try MergeDeclarations.read(declarations) }
    let left = try openSave(old)
    let right = try openSave(new)
    // A key or a declared path the saves do not have would align nothing, in silence.
    for key in self.keys where ![left.tree, right.tree].contains(where: { hasKeyedArray(key, in: $0) }) {
      throw ValidationError("--key \(key): no array of objects or bulk array in either save has a field '\(key)'")
    }
    let unknown = keys.declarations.unknownPaths(in: [left, right])
    if !unknown.isEmpty, let declarations {
      throw ValidationError(
        "\(declarations): declared paths not in either save: " + unknown.map { "'\($0)'" }.joined(separator: ", "))
    }
    var warnings: [String] = []
    let result = SaveInspection.differences(left, right, alignment: keys, warnings: &warnings)
    for warning in warnings { Terminal.standardError.line("warning: " + warning) }
    let output = TextOutput(.standardOutput)
    if json {
      SaveInspection.writeDiffJSON(result, listing: listing, to: StreamedJSON(output))
    } else {
      SaveInspection.writeDiffText(result, listing: listing, to: output)
    }
    output.flush()
    if !result.isEmpty { throw Exit.invalid }
  }

  private var listing: BulkListing { allElements ? .allElements : .summary }
}

/// Whether some array in `value` holds an object with the field `key`, or some bulk array's
/// layout has that field.
private func hasKeyedArray(_ key: String, in value: SaveValue) -> Bool {
  switch value {
  case .object(let object): return object.fields.contains { hasKeyedArray(key, in: $0.value) }
  case .bulk(let array): return array.layout.fields.contains { $0.name == key }
  case .array(let elements):
    return elements.contains { element in
      if case .object(let object) = element, object[key] != nil { return true }
      return hasKeyedArray(key, in: element)
    }
  default: return false
  }
}
