/// A type that can fill in fields a save does not have: an older save loads into a newer
/// type, the added fields taking their values from ``saveDefault``.
///
/// ```swift
/// struct Level: Codable, SaveDefaults {
///   var index = 1
///   var checkpoint = 0            // added in schema v2
///   static var saveDefault: Level { Level() }
/// }
/// ```
public protocol SaveDefaults: Encodable {
  /// The value whose fields stand in for the ones a save lacks.
  static var saveDefault: Self { get }
}

/// Decodes any `Decodable` value from a ``SaveValue`` tree, by field name. Integers and
/// floats convert when the value fits exactly (a widened field still loads); fields a save
/// lacks come from ``SaveDefaults``; fields the type lacks are ignored.
public struct SaveValueDecoder {
  /// Creates a decoder.
  public init() {}

  /// Decodes `type` from `value`; a failure is a `typeMismatch` naming the field path.
  public func decode<T: Decodable>(_ type: T.Type, from value: SaveValue) throws(SaveFileError) -> T {
    do {
      return try TreeDecoder(value: value, codingPath: []).decodeValue(type)
    } catch let error as SaveFileError {
      throw error
    } catch let error as DecodingError {
      throw SaveFileError(error)
    } catch {
      throw SaveFileError(.typeMismatch, "\(error)")
    }
  }
}

extension SaveFileError {
  init(_ error: DecodingError) {
    let path = fieldPath
    switch error {
    case .keyNotFound(let key, let context):
      self.init(
        .typeMismatch, "missing field '\(key.stringValue)'", context: .init(field: path(context.codingPath + [key])))
    case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
      self.init(.typeMismatch, context.debugDescription, context: .init(field: path(context.codingPath)))
    @unknown default:
      self.init(.typeMismatch, "\(error)")
    }
  }
}

/// A coding path as `level.bodies[3].x`.
func fieldPath(_ codingPath: [any CodingKey]) -> String {
  var path = ""
  for key in codingPath {
    if let index = key.intValue {
      path += "[\(index)]"
    } else {
      path += path.isEmpty ? key.stringValue : ".\(key.stringValue)"
    }
  }
  return path
}

/// Fills the fields `stored` lacks from `defaults`, recursively through nested objects.
func mergingDefaults(_ stored: SaveValue, _ defaults: SaveValue) -> SaveValue {
  guard case .object(var object) = stored, case .object(let fallback) = defaults else { return stored }
  for (name, value) in fallback.fields {
    if let existing = object[name] {
      object[name] = mergingDefaults(existing, value)
    } else {
      object[name] = value
    }
  }
  return .object(object)
}

private struct TreeDecoder: Decoder {
  let value: SaveValue
  let codingPath: [any CodingKey]
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
    if let bulkType = type as? any BulkArrayCodable.Type, case .bulk(let bulk) = value {
      do {
        return try bulkType.fromBulk(bulk) as! T
      } catch {
        var located = error
        located.context.field = ([fieldPath(codingPath)] + [error.context.field].compactMap { $0 })
          .joined(separator: ".")
        throw located
      }
    }
    if let scalar = try scalar(type) { return scalar }
    var source = value
    if let defaults = type as? any SaveDefaults.Type {
      source = mergingDefaults(value, try SaveValueEncoder().encode(defaults.saveDefault))
    }
    return try T(from: TreeDecoder(value: source, codingPath: codingPath))
  }

  private func mismatch(_ expected: String) -> DecodingError {
    .typeMismatch(
      Any.self, .init(codingPath: codingPath, debugDescription: "expected \(expected), found \(value.typeName)"))
  }

  private func integer<I: FixedWidthInteger>(_: I.Type) throws -> I {
    let result: I?
    if case .uint64(let big) = value {
      result = I(exactly: big)
    } else {
      result = value.int64Value.flatMap { I(exactly: $0) }
    }
    guard let result else { throw mismatch("an integer that fits \(I.self)") }
    return result
  }

  /// Scalars decode with exact conversions; nil when `T` is not a scalar.
  private func scalar<T>(_ type: T.Type) throws -> T? {
    switch type {
    case is Bool.Type:
      guard case .bool(let flag) = value else { throw mismatch("bool") }
      return flag as? T
    case is Int.Type: return try integer(Int.self) as? T
    case is Int8.Type: return try integer(Int8.self) as? T
    case is Int16.Type: return try integer(Int16.self) as? T
    case is Int32.Type: return try integer(Int32.self) as? T
    case is Int64.Type: return try integer(Int64.self) as? T
    case is UInt.Type: return try integer(UInt.self) as? T
    case is UInt8.Type: return try integer(UInt8.self) as? T
    case is UInt16.Type: return try integer(UInt16.self) as? T
    case is UInt32.Type: return try integer(UInt32.self) as? T
    case is UInt64.Type: return try integer(UInt64.self) as? T
    case is Float.Type:
      if case .float32(let v) = value { return v as? T }
      guard let v = value.doubleValue else { throw mismatch("a number") }
      return Float(v) as? T
    case is Double.Type:
      if case .float64(let v) = value { return v as? T }
      guard let v = value.doubleValue else { throw mismatch("a number") }
      return v as? T
    case is String.Type:
      guard case .string(let string) = value else { throw mismatch("string") }
      return string as? T
    default: return nil
    }
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard case .object(let object) = value else { throw mismatch("object") }
    return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    switch value {
    case .array(let items): return UnkeyedContainer(items: items, codingPath: codingPath)
    case .bulk(let bulk):
      return UnkeyedContainer(items: (0..<bulk.count).map { .object(bulk.element(at: $0)) }, codingPath: codingPath)
    case .bytes(let bytes): return UnkeyedContainer(items: bytes.map { .uint8($0) }, codingPath: codingPath)
    default: throw mismatch("array")
    }
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    SingleContainer(decoder: self)
  }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let object: SaveObject
  let codingPath: [any CodingKey]
  private let index: [String: SaveValue]

  init(object: SaveObject, codingPath: [any CodingKey]) {
    self.object = object
    self.codingPath = codingPath
    var index: [String: SaveValue] = [:]
    for field in object.fields { index[field.name] = field.value }
    self.index = index
  }

  var allKeys: [Key] { object.fields.compactMap { Key(stringValue: $0.name) } }

  func contains(_ key: Key) -> Bool { index[key.stringValue] != nil }

  private func child(_ key: Key) throws -> TreeDecoder {
    guard let value = index[key.stringValue] else {
      throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing field"))
    }
    return TreeDecoder(value: value, codingPath: codingPath + [key])
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    guard let value = index[key.stringValue] else { return true }
    return value == .null
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try child(key).decodeValue(type)
  }

  func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    try child(key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try child(key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    TreeDecoder(value: index["super"] ?? .null, codingPath: codingPath)
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    TreeDecoder(value: index[key.stringValue] ?? .null, codingPath: codingPath + [key])
  }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
  let items: [SaveValue]
  let codingPath: [any CodingKey]
  private(set) var currentIndex = 0

  init(items: [SaveValue], codingPath: [any CodingKey]) {
    self.items = items
    self.codingPath = codingPath
  }

  var count: Int? { items.count }
  var isAtEnd: Bool { currentIndex >= items.count }

  private mutating func next() throws -> TreeDecoder {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        Any.self, .init(codingPath: codingPath, debugDescription: "the array has only \(items.count) elements"))
    }
    defer { currentIndex += 1 }
    return TreeDecoder(value: items[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)])
  }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd, items[currentIndex] == .null else { return false }
    currentIndex += 1
    return true
  }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decodeValue(type) }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    try next().container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try next().unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder { try next() }
}

private struct SingleContainer: SingleValueDecodingContainer {
  let decoder: TreeDecoder
  var codingPath: [any CodingKey] { decoder.codingPath }

  func decodeNil() -> Bool { decoder.value == .null }

  func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(type) }
}
