import ArgumentParser
import Foundation
import Stasis

/// One difference between two saves.
struct Difference {
  var path: String
  var old: SaveValue?
  var new: SaveValue?
  /// For bulk arrays: how many elements differ, and the first few with their fields.
  var bulk: BulkDifference?
}

struct BulkDifference {
  var oldCount: Int
  var newCount: Int
  var differing: Int
  var first: [(index: Int, fields: [(name: String, old: SaveValue?, new: SaveValue?)])]
}

/// Compares two values field by field; bulk arrays element by element, summarised.
func differences(_ a: SaveValue?, _ b: SaveValue?, path: String, into result: inout [Difference]) {
  switch (a, b) {
  case (.object(let left)?, .object(let right)?):
    var names = left.fields.map(\.name)
    for field in right.fields where !names.contains(field.name) { names.append(field.name) }
    for name in names {
      differences(left[name], right[name], path: path.isEmpty ? name : "\(path).\(name)", into: &result)
    }
  case (.array(let left)?, .array(let right)?):
    if left.count != right.count {
      result.append(Difference(path: "\(path).count", old: .int64(Int64(left.count)), new: .int64(Int64(right.count))))
    }
    for index in 0..<min(left.count, right.count) {
      differences(left[index], right[index], path: "\(path)[\(index)]", into: &result)
    }
  case (.bulk(let left)?, .bulk(let right)?):
    if let summary = bulkDifference(left, right) {
      result.append(Difference(path: path, old: a, new: b, bulk: summary))
    }
  default:
    if a != b { result.append(Difference(path: path, old: a, new: b)) }
  }
}

private func bulkDifference(_ left: BulkArray, _ right: BulkArray) -> BulkDifference? {
  guard left != right else { return nil }
  var differing = 0
  var first: [(index: Int, fields: [(name: String, old: SaveValue?, new: SaveValue?)])] = []
  let sameLayout = left.layout == right.layout
  for index in 0..<max(left.count, right.count) {
    if index >= left.count || index >= right.count {
      differing += 1
      continue
    }
    if sameLayout {
      let stride = left.layout.stride
      let equal = left.withUnsafeBytes { a in
        right.withUnsafeBytes { b in
          a[(index * stride)..<((index + 1) * stride)].elementsEqual(b[(index * stride)..<((index + 1) * stride)])
        }
      }
      if equal { continue }
    }
    let old = left.element(at: index)
    let new = right.element(at: index)
    var names = old.fields.map(\.name)
    for field in new.fields where !names.contains(field.name) { names.append(field.name) }
    let fields = names.compactMap { name -> (name: String, old: SaveValue?, new: SaveValue?)? in
      old[name] == new[name] ? nil : (name, old[name], new[name])
    }
    guard !fields.isEmpty else { continue }
    differing += 1
    if first.count < 5 { first.append((index, fields)) }
  }
  return BulkDifference(oldCount: left.count, newCount: right.count, differing: differing, first: first)
}

struct Diff: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Show the differences between two saves, field by field.",
    discussion: """
      Example:
        stasis diff Saves/autosave/0000000002.stasis Saves/autosave/0000000003.stasis
        stasis diff a.stasis b.stasis --json

      Bulk arrays (physics bodies) are summarised: how many elements differ, and the first few.
      Exit 0 when equal, 1 when different, as diff does.
      """
  )

  @Argument(help: "The old save.")
  var old: String

  @Argument(help: "The new save.")
  var new: String

  @Flag(help: "Print the differences as JSON: a list of {path, old, new}.")
  var json = false

  func run() throws {
    let left = try openSave(old)
    let right = try openSave(new)
    var result: [Difference] = []
    differences(summaryValue(left), summaryValue(right), path: "metadata", into: &result)
    differences(left.tree, right.tree, path: "", into: &result)
    if json {
      print(jsonText(result.map(jsonDifference)))
    } else {
      printText(result)
    }
    if !result.isEmpty { throw Exit.invalid }
  }

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

  private func jsonDifference(_ difference: Difference) -> [String: Any] {
    var object: [String: Any] = ["path": difference.path]
    if let bulk = difference.bulk {
      object["bulk"] =
        [
          "oldCount": bulk.oldCount, "newCount": bulk.newCount, "differingElements": bulk.differing,
          "first": bulk.first.map { entry in
            [
              "index": entry.index,
              "fields": entry.fields.map {
                [
                  "field": $0.name, "old": $0.old.map(jsonObject) ?? NSNull(),
                  "new": $0.new.map(jsonObject) ?? NSNull(),
                ]
              },
            ] as [String: Any]
          },
        ] as [String: Any]
    } else {
      object["old"] = difference.old.map(jsonObject) ?? NSNull()
      object["new"] = difference.new.map(jsonObject) ?? NSNull()
    }
    return object
  }

  private func printText(_ result: [Difference]) {
    let out = Terminal.standardOutput
    guard !result.isEmpty else {
      out.line("no differences")
      return
    }
    for difference in result {
      if let bulk = difference.bulk {
        out.line(
          out.paint(difference.path, .bold)
            + ": \(bulk.differing) of \(max(bulk.oldCount, bulk.newCount)) elements differ"
            + (bulk.oldCount != bulk.newCount ? " (count \(bulk.oldCount) → \(bulk.newCount))" : ""))
        for entry in bulk.first {
          let fields = entry.fields.map { "\($0.name) \(shortText($0.old)) → \(shortText($0.new))" }
          out.line("  [\(entry.index)] " + fields.joined(separator: ", "))
        }
        if bulk.differing > bulk.first.count { out.line("  … and \(bulk.differing - bulk.first.count) more") }
      } else {
        out.line(
          out.paint(difference.path, .bold) + ": " + out.paint(shortText(difference.old), .red) + " → "
            + out.paint(shortText(difference.new), .green))
      }
    }
    out.line("\(result.count) difference\(result.count == 1 ? "" : "s")")
  }
}
