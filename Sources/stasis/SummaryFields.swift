import Foundation
import Stasis

/// The game's own summary fields of a header (``SaveSummary/details``), by name, for tables
/// and metadata: the top-level fields of an object, or one `summary` field for anything else.
func detailFields(_ summary: SaveSummary) -> [(name: String, value: SaveValue)] {
  switch summary.details {
  case .null: return []
  case .object(let object): return object.fields
  default: return [("summary", summary.details)]
  }
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

/// The header's summary as JSON: the fixed keys, `summary` (the game's own value) and, for
/// scripts written against format 1, the game's top-level fields beside them: `level` and
/// `score` are always there (null when the game's summary has no such field).
func summaryJSON(_ header: SaveHeader) -> [String: Any] {
  let summary = header.summary
  var object: [String: Any] = ["level": NSNull(), "score": NSNull()]
  for field in detailFields(summary) { object[field.name] = jsonObject(field.value) }
  object.merge(
    [
      "slot": summary.slot, "createdAt": isoDate(milliseconds: header.createdAt), "frame": summary.frame,
      "playTime": summary.playTime, "progress": summary.progress ?? NSNull(), "device": summary.device,
      "summary": jsonObject(summary.details),
    ]
  ) { _, fixed in fixed }
  return object
}
