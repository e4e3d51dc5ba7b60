import Foundation

/// A type that can fill in fields a save does not have: an older save loads into a newer
/// type, the added fields taking their values from ``saveDefault``. Each field filled in is
/// reported in ``LoadReport/defaultedFields``.
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

/// A type that declares fields it no longer has, so older saves that carry them load and the
/// values are dropped on purpose (reported in ``LoadReport/droppedFields``). Without a
/// declaration or a migration that removes the field, loading such a save is a
/// ``SaveFileError/Kind/droppedField`` error: a forgotten rename never loses data silently.
///
/// ```swift
/// struct Settings: Codable, SaveRemovedFields {
///   var volume = 0.8
///   static let removedSaveFields = ["legacyMusicFlag"]   // removed in schema v3
/// }
/// ```
///
/// A ``BulkStorable`` element declares the bulk fields it removed the same way.
public protocol SaveRemovedFields {
  /// Names of this type's fields that older saves may still carry.
  static var removedSaveFields: [String] { get }
}

/// Decodes any `Decodable` value from a ``SaveValue`` tree, by field name. Integers and
/// floats convert when the value fits exactly (a widened field still loads); fields a save
/// lacks come from ``SaveDefaults``. A field the save has and the type does not decode is
/// an error unless the type declares it removed (``SaveRemovedFields``).
public struct SaveValueDecoder {
  /// What the values' `init(from:)` read from `decoder.userInfo`, as with `JSONDecoder`.
  public var userInfo: [CodingUserInfoKey: any Sendable] = [:]

  /// Creates a decoder.
  public init() {}

  /// Decodes `type` from `value`; a failure is a `typeMismatch`, `missingField` or
  /// `droppedField` naming the field path.
  public func decode<T: Decodable>(_ type: T.Type, from value: SaveValue) throws(SaveFileError) -> T {
    try decodeWithReport(type, from: value).value
  }

  /// Decodes `type` from `value` and says which fields took defaults and which were dropped
  /// by declaration.
  public func decodeWithReport<T: Decodable>(_ type: T.Type, from value: SaveValue) throws(SaveFileError) -> (
    value: T, defaultedFields: [String], droppedFields: [String]
  ) {
    try decodeWithReport(type, from: value, ignoringUnreadFields: false)
  }

  /// Decodes `type` from `value`, ignoring fields the type does not read: for summaries,
  /// which a picker reads from builds older and newer than itself and never saves back.
  func decodeIgnoringUnreadFields<T: Decodable>(_ type: T.Type, from value: SaveValue) throws(SaveFileError) -> T {
    try decodeWithReport(type, from: value, ignoringUnreadFields: true).value
  }

  private func decodeWithReport<T: Decodable>(_ type: T.Type, from value: SaveValue, ignoringUnreadFields: Bool)
    throws(SaveFileError) -> (value: T, defaultedFields: [String], droppedFields: [String])
  {
    let log = DecodeLog(userInfo: userInfo)
    let decoded: T
    do {
      decoded = try TreeDecoder(value: value, codingPath: [], log: log).decodeValue(type)
    } catch let error as SaveFileError {
      throw error
    } catch let error as DecodingError {
      throw SaveFileError(error)
    } catch {
      throw SaveFileError(.typeMismatch, "\(error)", underlyingError: error)
    }
    let (declared, undeclared) = log.unreadFields()
    if let first = undeclared.first, !ignoringUnreadFields {
      let others =
        undeclared.count > 1
        ? " (and \(undeclared.count - 1) more: \(undeclared.dropFirst().prefix(5).joined(separator: ", ")))" : ""
      throw SaveFileError(
        .droppedField, "the save has this field and \(T.self) does not decode it\(others)",
        context: .init(field: first),
        suggestion: "register a migration that renames or removes it, or declare it in removedSaveFields")
    }
    return (decoded, log.defaulted, declared)
  }
}

/// What one decode saw: fields filled from defaults, and every object's fields with whether
/// the type asked for them. One decode, one thread: not shared.
final class DecodeLog {
  let userInfo: [CodingUserInfoKey: Any]
  var defaulted: [String] = []
  var bulkDropped: [(path: String, declared: Bool)] = []
  private var objects: [FieldUsage] = []

  init(userInfo: [CodingUserInfoKey: any Sendable] = [:]) { self.userInfo = userInfo }

  func track(_ usage: FieldUsage) { objects.append(usage) }

  /// Stored fields no decode asked for, split into declared removals and the rest, in order.
  func unreadFields() -> (declared: [String], undeclared: [String]) {
    var declared: [String] = []
    var undeclared: [String] = []
    for entry in bulkDropped {
      if entry.declared { declared.append(entry.path) } else { undeclared.append(entry.path) }
    }
    for usage in objects {
      for (position, name) in usage.names.enumerated() where !usage.asked[position] {
        let path = usage.path.isEmpty ? name : "\(usage.path).\(name)"
        if usage.removed.contains(name) { declared.append(path) } else { undeclared.append(path) }
      }
    }
    return (declared, undeclared)
  }
}

/// One stored object's fields and which of them the type asked for.
final class FieldUsage {
  let path: String
  let names: [String]
  let removed: [String]
  var asked: [Bool]

  init(path: String, names: [String], removed: [String]) {
    self.path = path
    self.names = names
    self.removed = removed
    asked = Array(repeating: false, count: names.count)
  }
}

extension SaveFileError {
  init(_ error: DecodingError) {
    let path = fieldPath
    switch error {
    case .keyNotFound(let key, let context):
      self.init(
        .missingField, "missing field '\(key.stringValue)'", context: .init(field: path(context.codingPath + [key])),
        suggestion: "give the type a default for it (SaveDefaults), or register the migration that renamed it",
        underlyingError: error)
    case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
      self.init(
        .typeMismatch, context.debugDescription, context: .init(field: path(context.codingPath)),
        underlyingError: error)
    @unknown default:
      self.init(.typeMismatch, "\(error)", underlyingError: error)
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

/// Fills the fields `stored` lacks from `defaults`, recursively through nested objects, and
/// records each filled field's path.
func mergingDefaults(_ stored: SaveValue, _ defaults: SaveValue, path: String, filled: inout [String]) -> SaveValue {
  guard case .object(var object) = stored, case .object(let fallback) = defaults else { return stored }
  for (name, value) in fallback.fields {
    let fieldPath = path.isEmpty ? name : "\(path).\(name)"
    if let existing = object[name] {
      object[name] = mergingDefaults(existing, value, path: fieldPath, filled: &filled)
    } else {
      object[name] = value
      filled.append(fieldPath)
    }
  }
  return .object(object)
}

private struct TreeDecoder: Decoder {
  let value: SaveValue
  let codingPath: [any CodingKey]
  let log: DecodeLog
  /// Fields the type being decoded declares removed (``SaveRemovedFields``).
  var removedFields: [String] = []
  var userInfo: [CodingUserInfoKey: Any] { log.userInfo }

  func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
    if let treeType = type as? any SaveValueConvertible.Type {
      return try treeType.init(saveValue: value, path: fieldPath(codingPath)) as! T
    }
    if let bulkType = type as? any BulkArrayCodable.Type, case .bulk(let bulk) = value {
      do {
        return try bulkType.fromBulk(bulk, path: fieldPath(codingPath), log: log) as! T
      } catch {
        var located = error
        located.context.field = ([fieldPath(codingPath)] + [error.context.field].compactMap { $0 })
          .joined(separator: ".")
        throw located
      }
    }
    if let scalar = try scalar(type) { return scalar }
    // Byte arrays in one copy; an older build's array of numbers goes the general way below.
    if case .bytes(let bytes) = value {
      if type == [UInt8].self { return bytes as! T }
      if type == Data.self { return Data(bytes) as! T }
    }
    var source = value
    if let defaults = type as? any SaveDefaults.Type {
      source = mergingDefaults(
        value, try SaveValueEncoder().encode(defaults.saveDefault), path: fieldPath(codingPath),
        filled: &log.defaulted)
    }
    let removed = (type as? any SaveRemovedFields.Type)?.removedSaveFields ?? []
    return try T(from: TreeDecoder(value: source, codingPath: codingPath, log: log, removedFields: removed))
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
    let usage = FieldUsage(path: fieldPath(codingPath), names: object.fields.map(\.name), removed: removedFields)
    log.track(usage)
    return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath, log: log, usage: usage))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    switch value {
    case .array(let items): return UnkeyedContainer(items: items, codingPath: codingPath, log: log)
    case .bulk(let bulk):
      return UnkeyedContainer(
        items: (0..<bulk.count).map { .object(bulk.element(at: $0)) }, codingPath: codingPath, log: log)
    case .bytes(let bytes): return UnkeyedContainer(items: bytes.map { .uint8($0) }, codingPath: codingPath, log: log)
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
  let log: DecodeLog
  /// Which stored fields the type asked for: the ones it never asks for are reported.
  let usage: FieldUsage
  private let index: [String: Int]

  init(object: SaveObject, codingPath: [any CodingKey], log: DecodeLog, usage: FieldUsage) {
    self.object = object
    self.codingPath = codingPath
    self.log = log
    self.usage = usage
    var index: [String: Int] = [:]
    for (position, field) in object.fields.enumerated() { index[field.name] = position }
    self.index = index
  }

  var allKeys: [Key] { object.fields.compactMap { Key(stringValue: $0.name) } }

  /// The stored value of `key`, marking it asked for.
  private func stored(_ key: Key) -> SaveValue? {
    guard let position = index[key.stringValue] else { return nil }
    usage.asked[position] = true
    return object.fields[position].value
  }

  func contains(_ key: Key) -> Bool { stored(key) != nil }

  private func child(_ key: Key) throws -> TreeDecoder {
    guard let value = stored(key) else {
      throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing field"))
    }
    return TreeDecoder(value: value, codingPath: codingPath + [key], log: log)
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    guard let value = stored(key) else { return true }
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
    let key = Key(stringValue: "super")
    return TreeDecoder(value: key.flatMap(stored) ?? .null, codingPath: codingPath, log: log)
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    TreeDecoder(value: stored(key) ?? .null, codingPath: codingPath + [key], log: log)
  }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
  let items: [SaveValue]
  let codingPath: [any CodingKey]
  let log: DecodeLog
  private(set) var currentIndex = 0

  init(items: [SaveValue], codingPath: [any CodingKey], log: DecodeLog) {
    self.items = items
    self.codingPath = codingPath
    self.log = log
  }

  var count: Int? { items.count }
  var isAtEnd: Bool { currentIndex >= items.count }

  private mutating func next() throws -> TreeDecoder {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        Any.self, .init(codingPath: codingPath, debugDescription: "the array has only \(items.count) elements"))
    }
    defer { currentIndex += 1 }
    return TreeDecoder(value: items[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)], log: log)
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
