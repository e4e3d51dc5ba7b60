import Foundation
import Stasis

/// The API's JSON, written directly: `JSONSerialization` took a tenth of the server's CPU under
/// load (boxing every value in `Any`, then walking it back out). Keys come out sorted, as
/// `JSONSerialization`'s `.sortedKeys` wrote them.
indirect enum JSON: Sendable {
  case null
  case bool(Bool)
  case int(Int64)
  case double(Double)
  case string(String)
  case array([JSON])
  case object([String: JSON])
  /// JSON text the server wrote before (a revision's stored summary), inserted as it is.
  case raw(String)

  /// The text.
  var text: String {
    var output = ""
    write(to: &output)
    return output
  }

  func write(to output: inout String) {
    switch self {
    case .null: output += "null"
    case .bool(let flag): output += flag ? "true" : "false"
    case .int(let number): output += String(number)
    case .double(let number): output += Self.number(number)
    case .string(let text): Self.quote(text, to: &output)
    case .raw(let text): output += text
    case .array(let items):
      output += "["
      for (index, item) in items.enumerated() {
        if index > 0 { output += "," }
        item.write(to: &output)
      }
      output += "]"
    case .object(let fields):
      output += "{"
      for (index, key) in fields.keys.sorted().enumerated() {
        if index > 0 { output += "," }
        Self.quote(key, to: &output)
        output += ":"
        fields[key]!.write(to: &output)
      }
      output += "}"
    }
  }

  /// A finite number as JSON writes it (whole numbers without a fraction); NaN and the
  /// infinities, which JSON cannot hold, as the strings `stasis dump` uses.
  static func number(_ number: Double) -> String {
    if number.isNaN { return "\"NaN\"" }
    if number.isInfinite { return number > 0 ? "\"Infinity\"" : "\"-Infinity\"" }
    if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
    return "\(number)"
  }

  private static func quote(_ text: String, to output: inout String) {
    output += "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": output += "\\\""
      case "\\": output += "\\\\"
      case "\n": output += "\\n"
      case "\r": output += "\\r"
      case "\t": output += "\\t"
      case let control where control.value < 0x20:
        let hex = String(control.value, radix: 16)
        output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: output.unicodeScalars.append(scalar)
      }
    }
    output += "\""
  }
}

extension JSON {
  /// A save's value as `SaveValue.jsonObject` shows it (objects by field name, bulk arrays as
  /// arrays of objects, bytes as base64, NaN and the infinities as strings), without `Any`.
  init(_ value: SaveValue) {
    switch value {
    case .null: self = .null
    case .bool(let flag): self = .bool(flag)
    case .int8, .int16, .int32, .int64, .uint8, .uint16, .uint32: self = .int(value.int64Value!)
    case .uint64(let number): self = number <= UInt64(Int64.max) ? .int(Int64(number)) : .raw(String(number))
    case .float32(let number):
      self = number.isFinite && number != number.rounded() ? .raw("\(number)") : .double(Double(number))
    case .float64(let number): self = .double(number)
    case .string(let text): self = .string(text)
    case .bytes(let bytes): self = .string(Data(bytes).base64EncodedString())
    case .array(let items): self = .array(items.map(JSON.init))
    case .object(let object):
      var fields: [String: JSON] = [:]
      for field in object.fields { fields[field.name] = JSON(field.value) }
      self = .object(fields)
    case .bulk(let bulk): self = .array((0..<bulk.count).map { JSON(SaveValue.object(bulk.element(at: $0))) })
    }
  }
}
