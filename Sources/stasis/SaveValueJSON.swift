import Foundation
import Stasis

/// A save value as JSON (see ``SaveValue/jsonObject``).
func jsonObject(_ value: SaveValue) -> Any { value.jsonObject }

/// A short rendering of a value for diff lines.
func shortText(_ value: SaveValue?) -> String {
  guard let value else { return "(absent)" }
  switch value {
  case .array(let items): return "[\(items.count) items]"
  case .object(let object): return "{\(object.fields.count) fields}"
  case .bulk(let bulk): return "[\(bulk.count) × \(bulk.layout.stride)-byte elements]"
  case .bytes(let bytes): return "<\(bytes.count) bytes>"
  case .string(let text): return "\"\(text)\""
  default:
    let object = jsonObject(value)
    return "\(object)"
  }
}
