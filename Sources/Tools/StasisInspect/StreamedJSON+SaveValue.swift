import Foundation
import Stasis
import StasisMerge

extension StreamedJSON {
  /// `value` as ``SaveValue/jsonObject`` gives it (`null` when absent), except that a bulk array is
  /// `{"$bulk": {"count", "stride", "fields": [{"name", "type", "offset"}], "first": [...]}}`
  /// unless `listing` is `.allElements`. Given `base` (the common ancestor's value at the same
  /// path), a summarised bulk array also has `sinceBase`: what changed since the base's, as
  /// `diff --json` says it.
  package func value(_ value: SaveValue?, listing: BulkListing, base: SaveValue? = nil) {
    guard let value else { return null() }
    switch value {
    case .null: null()
    case .bool(let flag): bool(flag)
    case .int8, .int16, .int32, .int64, .uint8, .uint16, .uint32: number(value.int64Value!)
    case .uint64(let number): self.number(number)
    case .float32(let number): number.isFinite ? self.number(number) : string(nonFiniteText(Double(number)))
    case .float64(let number): number.isFinite ? self.number(number) : string(nonFiniteText(number))
    case .string(let text): string(text)
    case .bytes(let bytes): string(Data(bytes).base64EncodedString())
    case .array(let items):
      var baseItems: [SaveValue] = []
      if case .array(let items)? = base { baseItems = items }
      array(items.indices) { index in
        self.value(items[index], listing: listing, base: index < baseItems.count ? baseItems[index] : nil)
      }
    case .object(let fields):
      if WorldSnapshot.isWorld(value), let world = try? WorldSnapshot(tree: value) {
        return self.world(world, listing: listing)
      }
      object(keys: fields.fields.map(\.name)) { index in
        let field = fields.fields[index]
        self.value(field.value, listing: listing, base: base?[field: field.name])
      }
    case .bulk(let bulk):
      switch listing {
      case .allElements: elements(of: bulk, 0..<bulk.count)
      case .summary:
        var baseBulk: BulkArray?
        if case .bulk(let array)? = base { baseBulk = array }
        bulkSummary(bulk, base: baseBulk)
      }
    }
  }

  /// An entity world by entity: `{"$world": {"count", "nextIdentity", "components": {NAME:
  /// {"version", "count"}}, "first": [...]}}`, each entity `{"entity": 7, "components": {NAME:
  /// value}}`, a bulk component's value an object of its fields; with `.allElements`,
  /// `entities` lists every entity, streamed, instead of `first`.
  private func world(_ world: WorldSnapshot, listing: BulkListing) {
    let shown =
      listing == .allElements ? world.entities.count : min(world.entities.count, BulkDifference.listedElements)
    let members: [(key: String, write: () -> Void)] = [
      ("count", { self.number(world.entities.count) }),
      ("nextIdentity", { self.number(world.nextIdentity) }),
      (
        "components",
        {
          self.object(keys: world.columns.map(\.name)) { index in
            let column = world.columns[index]
            self.object([
              ("version", { self.number(column.version) }), ("count", { self.number(column.entities.count) }),
            ])
          }
        }
      ),
      (
        listing == .allElements ? "entities" : "first",
        {
          var cursors = Array(repeating: 0, count: world.columns.count)
          self.array(world.entities.prefix(shown)) { identity in
            var components: [(name: String, value: SaveValue)] = []
            for (position, column) in world.columns.enumerated() {
              let cursor = cursors[position]
              guard cursor < column.entities.count, column.entities[cursor] == identity else { continue }
              components.append((column.name, column.element(at: cursor)))
              cursors[position] = cursor + 1
            }
            self.object([
              ("entity", { self.number(identity.rawValue) }),
              (
                "components",
                {
                  self.object(keys: components.map(\.name)) { self.value(components[$0].value, listing: listing) }
                }
              ),
            ])
          }
        }
      ),
    ]
    object([("$world", { self.object(members) })])
  }

  private func bulkSummary(_ bulk: BulkArray, base: BulkArray?) {
    var members: [(key: String, write: () -> Void)] = [
      ("count", { self.number(bulk.count) }),
      ("stride", { self.number(bulk.layout.stride) }),
      (
        "fields",
        {
          self.array(bulk.layout.fields) { field in
            self.object([
              ("name", { self.string(field.name) }), ("type", { self.string(field.type.formatName) }),
              ("offset", { self.number(field.offset) }),
            ])
          }
        }
      ),
      ("first", { self.elements(of: bulk, 0..<min(bulk.count, BulkDifference.listedElements)) }),
    ]
    if let base {
      members.append(
        ("sinceBase", { BulkDifference(old: .bulk(base), new: .bulk(bulk)).writeJSON(to: self, listing: .summary) }))
    }
    object([("$bulk", { self.object(members) })])
  }

  /// The elements at `indices`, each an object of its fields.
  private func elements(of bulk: BulkArray, _ indices: Range<Int>) {
    let names = bulk.layout.fields.map(\.name)
    let order = keyOrder(names)
    array(indices) { index in
      let element = bulk.element(at: index)
      object(keys: names, order: order) { self.value(element.fields[$0].value, listing: .allElements) }
    }
  }

  private func nonFiniteText(_ number: Double) -> String {
    number.isNaN ? "NaN" : number > 0 ? "Infinity" : "-Infinity"
  }
}
