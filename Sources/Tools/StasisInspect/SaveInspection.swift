import Stasis
import StasisMerge

@_exported import struct StasisMerge.SaveDifference

/// A save's tree and two saves' differences, rendered exactly as the `stasis` CLI prints them:
/// what `stasis dump` and `stasis diff` show on a terminal, for a page or a log.
///
/// ```swift
/// let document = try SaveFileFormat.decode(bytes)
/// let tree = SaveInspection.dump(document.tree)  // `stasis dump FILE`'s output
///
/// let changes = SaveInspection.differences(older, newer)
/// print(changes.isEmpty ? "no differences" : "\(changes.count) differences")
/// print(SaveInspection.diff(changes))  // `stasis diff OLD NEW`'s output
/// ```
///
/// The strings are whole in memory: with `allElements`, a bulk array of a million elements is
/// a million lines of text (the CLI streams them instead).
public enum SaveInspection {
  /// `value` as pretty JSON with sorted keys: exactly what `stasis dump FILE` prints for it
  /// (given `document.tree`, the whole save; given a section's tree, `--section NAME`).
  ///
  /// A bulk array is summarised as
  /// `{"$bulk": {"count", "stride", "fields": [{"name", "type", "offset"}], "first": [...]}}`
  /// (its first five elements), or with `allElements` listed, every element an object of its
  /// fields, as `--all-elements` prints it. A byte string is base64; a non-finite float is
  /// `"NaN"`, `"Infinity"` or `"-Infinity"`. The text ends with a newline.
  public static func dump(_ value: SaveValue, allElements: Bool = false) -> String {
    let out = TextOutput()
    writeDump(value, listing: allElements ? .allElements : .summary, to: StreamedJSON(out))
    return out.text
  }

  /// What differs between two saves, in the order `stasis diff OLD NEW` lists it: the header's
  /// metadata (`metadata.frame`, `metadata.summary.…`, `metadata.schemaVersion`), then the
  /// sections field by field. Arrays of objects are compared index by index; bulk arrays and
  /// byte strings element by element, each one difference. Empty when the saves are equal.
  public static func differences(_ old: SaveDocument, _ new: SaveDocument) -> [SaveDifference] {
    SaveDifference.between(old, new)
  }

  /// Exactly what `stasis diff OLD NEW` prints, without colours: a line per difference (a bulk
  /// array's summary and first differing elements below its line), then `12 differences`; or
  /// `no differences`. With `allElements`, every changed range and every differing element of
  /// bulk arrays, as `--all-elements` lists them.
  public static func diff(_ old: SaveDocument, _ new: SaveDocument, allElements: Bool = false) -> String {
    diff(differences(old, new), allElements: allElements)
  }

  /// As ``diff(_:_:allElements:)``, for the differences ``differences(_:_:)`` found.
  public static func diff(_ differences: [SaveDifference], allElements: Bool = false) -> String {
    let out = TextOutput()
    writeDiffText(differences, listing: allElements ? .allElements : .summary, to: out)
    return out.text
  }

  /// Exactly what `stasis diff OLD NEW --json` prints: a list of `{"path", "old", "new"}`, or
  /// `{"path", "bulk": {"oldCount", "newCount", "differingElements", "changedRanges",
  /// "moreRanges", "first"}}` for a bulk array or byte string (`stasis diff --help` says each).
  public static func diffJSON(_ old: SaveDocument, _ new: SaveDocument, allElements: Bool = false) -> String {
    diffJSON(differences(old, new), allElements: allElements)
  }

  /// As ``diffJSON(_:_:allElements:)``, for the differences ``differences(_:_:)`` found.
  public static func diffJSON(_ differences: [SaveDifference], allElements: Bool = false) -> String {
    let out = TextOutput()
    writeDiffJSON(differences, listing: allElements ? .allElements : .summary, to: StreamedJSON(out))
    return out.text
  }
}

// MARK: - For the CLI, which streams to standard output

extension SaveInspection {
  /// `stasis dump`'s output for `value`, its final newline included.
  package static func writeDump(_ value: SaveValue, listing: BulkListing, to json: StreamedJSON) {
    json.value(value, listing: listing)
    json.finish()
  }

  /// The differences between two saves, arrays of objects and bulk arrays aligned as
  /// `alignment` says.
  package static func differences(
    _ old: SaveDocument, _ new: SaveDocument, alignment: DiffAlignment
  ) -> [SaveDifference] {
    var warnings: [String] = []
    return differences(old, new, alignment: alignment, warnings: &warnings)
  }

  /// As ``differences(_:_:alignment:)``, adding to `warnings` a line for each bulk array that
  /// has its key field but could not be paired by it (a float field, or a key twice) and was
  /// compared index by index: `bullets: not paired by 'serial': …; compared index by index`.
  package static func differences(
    _ old: SaveDocument, _ new: SaveDocument, alignment: DiffAlignment, warnings: inout [String]
  ) -> [SaveDifference] {
    SaveDifference.between(old, new, alignment: alignment, warnings: &warnings)
  }

  /// `stasis diff`'s text: a line per difference and the count, or `no differences`.
  package static func writeDiffText(_ result: [SaveDifference], listing: BulkListing, to out: TextOutput) {
    guard !result.isEmpty else {
      out.line("no differences")
      return
    }
    for difference in result { difference.write(listing: listing, to: out) }
    out.line("\(result.count) difference\(result.count == 1 ? "" : "s")")
  }

  /// `stasis diff --json`'s list, its final newline included.
  package static func writeDiffJSON(_ result: [SaveDifference], listing: BulkListing, to json: StreamedJSON) {
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
}
