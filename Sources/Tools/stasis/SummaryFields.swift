import Foundation
import Stasis
import StasisInspect
import StasisMerge

/// The game's own summary fields of a header (``SaveSummary/details``), by name, for tables
/// and metadata: the top-level fields of an object, or one `summary` field for anything else.
func detailFields(_ summary: SaveSummary) -> [(name: String, value: SaveValue)] {
  switch summary.details {
  case .null: return []
  case .object(let object): return object.fields
  default: return [("summary", summary.details)]
  }
}

/// The columns `stasis slots` prints itself. A game's summary field of one of these names (or
/// one that starts with `summary.`) gets the column `summary.NAME`, so no two columns share a name.
let builtInColumns: Set<String> = [
  "slot", "generation", "saved at", "play time", "progress", "device", "bytes", "valid", "note",
]

/// The column for a game's summary field: its name, unless that could be read as a built-in column.
func detailColumn(_ name: String) -> String {
  builtInColumns.contains(name) || name.hasPrefix("summary.") ? "summary.\(name)" : name
}

/// A summary field as a table cell: strings without quotes, containers by size.
func cellText(_ value: SaveValue) -> String {
  if case .string(let text) = value { return text }
  return shortText(value)
}

/// `47 %`, or `-` when the game records no progress.
func progressText(_ progress: Double?) -> String {
  progress.map { String(format: "%.0f %%", $0 * 100) } ?? "-"
}

/// The header's summary as JSON: the fixed keys, and `summary`, the game's own value (null
/// when it records none). The game's fields are only under `summary`, so none can shadow a
/// fixed key, and no game's field names appear for another game's save.
func summaryJSON(_ header: SaveHeader) -> [String: Any] {
  let summary = header.summary
  return [
    "slot": summary.slot, "createdAt": isoDate(milliseconds: header.createdAt), "frame": summary.frame,
    "playTime": summary.playTime, "progress": summary.progress ?? NSNull(), "device": summary.device,
    "summary": summary.details.jsonObject,
  ]
}
