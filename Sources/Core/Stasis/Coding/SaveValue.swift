/// A decoded value of a save file, described by the file alone: what `stasis dump` prints
/// and `stasis diff` compares, and what the `Codable` coders translate to and from.
///
/// Floating-point values compare by bit pattern, so a NaN payload or a `-0` is kept and seen.
public indirect enum SaveValue: Sendable, Equatable {
  /// No value (an absent optional).
  case null
  /// A Boolean.
  case bool(Bool)
  /// A signed 8-bit integer.
  case int8(Int8)
  /// A signed 16-bit integer.
  case int16(Int16)
  /// A signed 32-bit integer.
  case int32(Int32)
  /// A signed 64-bit integer.
  case int64(Int64)
  /// An unsigned 8-bit integer.
  case uint8(UInt8)
  /// An unsigned 16-bit integer.
  case uint16(UInt16)
  /// An unsigned 32-bit integer.
  case uint32(UInt32)
  /// An unsigned 64-bit integer.
  case uint64(UInt64)
  /// A 32-bit float, bit for bit (NaN payloads and −0 kept).
  case float32(Float)
  /// A 64-bit float, bit for bit.
  case float64(Double)
  /// UTF-8 text.
  case string(String)
  /// Opaque bytes.
  case bytes([UInt8])
  /// An ordered list of values.
  case array([SaveValue])
  /// Named fields (a struct, or a dictionary with string keys).
  case object(SaveObject)
  /// An array of plain structs stored as raw little-endian bytes with a field layout.
  case bulk(BulkArray)

  public static func == (lhs: SaveValue, rhs: SaveValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): return true
    case (.bool(let a), .bool(let b)): return a == b
    case (.int8(let a), .int8(let b)): return a == b
    case (.int16(let a), .int16(let b)): return a == b
    case (.int32(let a), .int32(let b)): return a == b
    case (.int64(let a), .int64(let b)): return a == b
    case (.uint8(let a), .uint8(let b)): return a == b
    case (.uint16(let a), .uint16(let b)): return a == b
    case (.uint32(let a), .uint32(let b)): return a == b
    case (.uint64(let a), .uint64(let b)): return a == b
    case (.float32(let a), .float32(let b)): return a.bitPattern == b.bitPattern
    case (.float64(let a), .float64(let b)): return a.bitPattern == b.bitPattern
    case (.string(let a), .string(let b)): return a == b
    case (.bytes(let a), .bytes(let b)): return a == b
    case (.array(let a), .array(let b)): return a == b
    case (.object(let a), .object(let b)): return a == b
    case (.bulk(let a), .bulk(let b)): return a == b
    default: return false
    }
  }

  /// The type's name as the format documents it (`i32`, `f64`, `object`, ...).
  public var typeName: String {
    switch self {
    case .null: return "null"
    case .bool: return "bool"
    case .int8: return "i8"
    case .int16: return "i16"
    case .int32: return "i32"
    case .int64: return "i64"
    case .uint8: return "u8"
    case .uint16: return "u16"
    case .uint32: return "u32"
    case .uint64: return "u64"
    case .float32: return "f32"
    case .float64: return "f64"
    case .string: return "string"
    case .bytes: return "bytes"
    case .array: return "array"
    case .object: return "object"
    case .bulk: return "bulk"
    }
  }

  /// The value as a signed integer, when it is an integer that fits.
  public var int64Value: Int64? {
    switch self {
    case .int8(let v): return Int64(v)
    case .int16(let v): return Int64(v)
    case .int32(let v): return Int64(v)
    case .int64(let v): return v
    case .uint8(let v): return Int64(v)
    case .uint16(let v): return Int64(v)
    case .uint32(let v): return Int64(v)
    case .uint64(let v): return Int64(exactly: v)
    default: return nil
    }
  }

  /// The value as an unsigned integer, when it is a non-negative integer.
  public var uint64Value: UInt64? {
    if case .uint64(let v) = self { return v }
    return int64Value.flatMap { UInt64(exactly: $0) }
  }

  /// The value as a double, when it is a number.
  public var doubleValue: Double? {
    switch self {
    case .float32(let v): return Double(v)
    case .float64(let v): return v
    case .uint64(let v): return Double(v)
    default: return int64Value.map(Double.init)
    }
  }

  /// The field `name` of an object, or nil.
  public subscript(field name: String) -> SaveValue? {
    get {
      if case .object(let object) = self { return object[name] }
      return nil
    }
    set {
      guard case .object(var object) = self else { return }
      object[name] = newValue
      self = .object(object)
    }
  }
}

/// The fields of an object, in the order they were written (sorted by name when encoded).
public struct SaveObject: Sendable, Equatable {
  /// The fields, in order.
  public var fields: [(name: String, value: SaveValue)]

  /// Creates an object from its fields.
  public init(_ fields: [(name: String, value: SaveValue)] = []) {
    self.fields = fields
  }

  /// The value of a field by name; setting nil removes it, setting a new name appends it.
  public subscript(name: String) -> SaveValue? {
    get { fields.first { $0.name == name }?.value }
    set {
      let index = fields.firstIndex { $0.name == name }
      switch (index, newValue) {
      case (let index?, let value?): fields[index].value = value
      case (let index?, nil): fields.remove(at: index)
      case (nil, let value?): fields.append((name, value))
      case (nil, nil): break
      }
    }
  }

  /// Renames a field, keeping its value and position; a missing field is left alone.
  public mutating func renameField(_ old: String, to new: String) {
    guard let index = fields.firstIndex(where: { $0.name == old }) else { return }
    fields[index].name = new
  }

  public static func == (lhs: SaveObject, rhs: SaveObject) -> Bool {
    lhs.fields.count == rhs.fields.count
      && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
  }
}

/// A value that is already a tree: the coders store it and hand it back as it is, so a type whose
/// parts are trees of their own (``WorldSnapshot``'s component columns) is encoded once, not twice.
protocol SaveValueConvertible {
  /// The value's tree; an error when the value could not be made into one (a world whose
  /// component failed to encode when the snapshot was taken).
  func saveValue() throws(SaveFileError) -> SaveValue
  /// The value of a tree read from a save; `path` names the field for errors.
  init(saveValue: SaveValue, path: String) throws(SaveFileError)
}
