import Foundation
import Stasis

/// A save value as JSON, from the file's own description: objects by field name, bulk arrays
/// as arrays of objects, integers as numbers, floats that JSON cannot hold (NaN, infinities)
/// as strings, bytes as base64.
func jsonObject(_ value: SaveValue) -> Any {
  switch value {
  case .null: return NSNull()
  case .bool(let flag): return flag
  case .int8, .int16, .int32, .int64: return NSNumber(value: value.int64Value!)
  case .uint8, .uint16, .uint32: return NSNumber(value: value.int64Value!)
  case .uint64(let number): return NSNumber(value: number)
  case .float32(let number): return number.isFinite ? NSNumber(value: number) : jsonNumber(Double(number))
  case .float64(let number): return jsonNumber(number)
  case .string(let text): return text
  case .bytes(let bytes): return Data(bytes).base64EncodedString()
  case .array(let items): return items.map(jsonObject)
  case .object(let object):
    var dictionary: [String: Any] = [:]
    for field in object.fields { dictionary[field.name] = jsonObject(field.value) }
    return dictionary
  case .bulk(let bulk): return (0..<bulk.count).map { jsonObject(.object(bulk.element(at: $0))) }
  }
}

private func jsonNumber(_ number: Double) -> Any {
  if number.isNaN { return "NaN" }
  if number.isInfinite { return number > 0 ? "Infinity" : "-Infinity" }
  return NSNumber(value: number)
}

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
