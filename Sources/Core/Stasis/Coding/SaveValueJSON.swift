import Foundation

extension SaveValue {
  /// The value as a JSON object for `JSONSerialization`, from the file's own description:
  /// objects by field name, bulk arrays as arrays of objects, integers as numbers, floats that
  /// JSON cannot hold (NaN, infinities) as strings, bytes as base64. What `stasis dump
  /// --all-elements` prints (plain `dump` summarises bulk arrays) and what a save server shows
  /// of a save's summary.
  public var jsonObject: Any {
    switch self {
    case .null: return NSNull()
    case .bool(let flag): return flag
    case .int8, .int16, .int32, .int64: return NSNumber(value: int64Value!)
    case .uint8, .uint16, .uint32: return NSNumber(value: int64Value!)
    case .uint64(let number): return NSNumber(value: number)
    case .float32(let number): return number.isFinite ? NSNumber(value: number) : Self.jsonNumber(Double(number))
    case .float64(let number): return Self.jsonNumber(number)
    case .string(let text): return text
    case .bytes(let bytes): return Data(bytes).base64EncodedString()
    case .array(let items): return items.map(\.jsonObject)
    case .object(let object):
      var dictionary: [String: Any] = [:]
      for field in object.fields { dictionary[field.name] = field.value.jsonObject }
      return dictionary
    case .bulk(let bulk): return (0..<bulk.count).map { SaveValue.object(bulk.element(at: $0)).jsonObject }
    }
  }

  private static func jsonNumber(_ number: Double) -> Any {
    if number.isNaN { return "NaN" }
    if number.isInfinite { return number > 0 ? "Infinity" : "-Infinity" }
    return NSNumber(value: number)
  }
}

extension SaveValue {
  /// The value in one line, as JSON (keys sorted): for logs, changes and `stasis settings`.
  package var inlineText: String {
    let object = jsonObject
    guard
      let data = try? JSONSerialization.data(
        withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
    else { return "\(object)" }
    return String(decoding: data, as: UTF8.self)
  }
}
