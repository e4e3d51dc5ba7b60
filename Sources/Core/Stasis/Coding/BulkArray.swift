#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The scalar types a bulk field may have.
public enum ScalarType: Sendable, Equatable, CaseIterable {
  /// One byte, 0 or 1.
  case bool
  /// A signed 8-bit integer.
  case int8
  /// A signed 16-bit integer.
  case int16
  /// A signed 32-bit integer.
  case int32
  /// A signed 64-bit integer.
  case int64
  /// An unsigned 8-bit integer.
  case uint8
  /// An unsigned 16-bit integer.
  case uint16
  /// An unsigned 32-bit integer.
  case uint32
  /// An unsigned 64-bit integer.
  case uint64
  /// A 32-bit IEEE 754 float.
  case float32
  /// A 64-bit IEEE 754 float.
  case float64

  /// The type's tag in a bulk layout: the value tag of the same type (`bool` uses `true`'s).
  var tag: ValueTag {
    switch self {
    case .bool: return .trueValue
    case .int8: return .int8
    case .int16: return .int16
    case .int32: return .int32
    case .int64: return .int64
    case .uint8: return .uint8
    case .uint16: return .uint16
    case .uint32: return .uint32
    case .uint64: return .uint64
    case .float32: return .float32
    case .float64: return .float64
    }
  }

  /// The scalar type a layout's tag names, or nil for a tag that is not a scalar.
  init?(tag: ValueTag) {
    guard let type = Self.allCases.first(where: { $0.tag == tag }) else { return nil }
    self = type
  }

  /// Bytes one value takes.
  public var size: Int {
    switch self {
    case .bool, .int8, .uint8: return 1
    case .int16, .uint16: return 2
    case .int32, .uint32, .float32: return 4
    case .int64, .uint64, .float64: return 8
    }
  }

  /// The value at `offset` of `bytes`, as a `SaveValue`.
  func load(from bytes: UnsafeRawBufferPointer, at offset: Int) -> SaveValue {
    switch self {
    case .bool: return .bool(bytes[offset] != 0)
    case .int8: return .int8(Int8(bitPattern: bytes[offset]))
    case .int16: return .int16(Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int16.self)))
    case .int32: return .int32(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
    case .int64: return .int64(Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self)))
    case .uint8: return .uint8(bytes[offset])
    case .uint16:
      return .uint16(UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self)))
    case .uint32:
      return .uint32(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
    case .uint64:
      return .uint64(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
    case .float32:
      return .float32(
        Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))))
    case .float64:
      return .float64(
        Double(bitPattern: UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))))
    }
  }

  /// Stores `value`, converted to this type, at `offset`; false when it does not fit.
  func store(_ value: SaveValue, into bytes: UnsafeMutableRawBufferPointer, at offset: Int) -> Bool {
    func put<T: FixedWidthInteger>(_ integer: T?) -> Bool {
      guard let integer else { return false }
      bytes.storeBytes(of: integer.littleEndian, toByteOffset: offset, as: T.self)
      return true
    }
    switch self {
    case .bool:
      guard case .bool(let flag) = value else { return false }
      bytes[offset] = flag ? 1 : 0
      return true
    case .int8: return put(value.int64Value.flatMap { Int8(exactly: $0) })
    case .int16: return put(value.int64Value.flatMap { Int16(exactly: $0) })
    case .int32: return put(value.int64Value.flatMap { Int32(exactly: $0) })
    case .int64: return put(value.int64Value)
    case .uint8: return put(value.uint64Value.flatMap { UInt8(exactly: $0) })
    case .uint16: return put(value.uint64Value.flatMap { UInt16(exactly: $0) })
    case .uint32: return put(value.uint64Value.flatMap { UInt32(exactly: $0) })
    case .uint64: return put(value.uint64Value)
    case .float32: return put(value.doubleValue.map { Float($0).bitPattern })
    case .float64: return put(value.doubleValue.map { $0.bitPattern })
    }
  }
}

/// One field of a plain struct stored in bulk: its name, scalar type and byte offset.
public struct BulkField: Sendable, Equatable {
  /// The field's name in the save.
  public var name: String
  /// Its scalar type.
  public var type: ScalarType
  /// Its byte offset inside one element.
  public var offset: Int

  /// Creates a field description.
  public init(name: String, type: ScalarType, offset: Int) {
    self.name = name
    self.type = type
    self.offset = offset
  }
}

/// The memory layout of a plain struct: its stride and its fields. Stored in the file next
/// to the bytes, so any tool can read the elements and a changed struct can still load.
public struct BulkLayout: Sendable, Equatable {
  /// Bytes from one element to the next (`MemoryLayout.stride`).
  public var stride: Int
  /// The saved fields, in layout order.
  public var fields: [BulkField]

  /// Creates a layout.
  public init(stride: Int, fields: [BulkField]) {
    self.stride = stride
    self.fields = fields
  }
}

/// A scalar that may be a field of a ``BulkStorable`` struct.
public protocol BulkScalar: BitwiseCopyable {
  /// The scalar's type in the format.
  static var scalarType: ScalarType { get }
}

/// `Bool` as a bulk field: one byte, 0 or 1.
extension Bool: BulkScalar { public static var scalarType: ScalarType { .bool } }
/// `Int8` as a bulk field.
extension Int8: BulkScalar { public static var scalarType: ScalarType { .int8 } }
/// `Int16` as a bulk field, little-endian.
extension Int16: BulkScalar { public static var scalarType: ScalarType { .int16 } }
/// `Int32` as a bulk field, little-endian.
extension Int32: BulkScalar { public static var scalarType: ScalarType { .int32 } }
/// `Int64` as a bulk field, little-endian.
extension Int64: BulkScalar { public static var scalarType: ScalarType { .int64 } }
/// `UInt8` as a bulk field.
extension UInt8: BulkScalar { public static var scalarType: ScalarType { .uint8 } }
/// `UInt16` as a bulk field, little-endian.
extension UInt16: BulkScalar { public static var scalarType: ScalarType { .uint16 } }
/// `UInt32` as a bulk field, little-endian.
extension UInt32: BulkScalar { public static var scalarType: ScalarType { .uint32 } }
/// `UInt64` as a bulk field, little-endian.
extension UInt64: BulkScalar { public static var scalarType: ScalarType { .uint64 } }
/// `Float` as a bulk field: IEEE 754 bits, NaN payloads kept.
extension Float: BulkScalar { public static var scalarType: ScalarType { .float32 } }
/// `Double` as a bulk field: IEEE 754 bits, NaN payloads kept.
extension Double: BulkScalar { public static var scalarType: ScalarType { .float64 } }

/// A plain struct whose arrays go to disk as their declared fields' little-endian bytes: one copy
/// out and one back in when the fields tile the struct, one pass per field when it has padding
/// (which never reaches a file or a digest), field by field by name, with conversions, when the
/// saved layout is another.
///
/// ```swift
/// struct Body: BulkStorable {
///   var x: Float = 0, y: Float = 0, id: UInt32 = 0
///   static let bulkLayout = BulkLayout(of: Body.self, [
///     .field("x", \.x), .field("y", \.y), .field("id", \.id),
///   ])
/// }
/// ```
///
/// Fields left out of the layout are not saved (making the layout logs a warning naming them);
/// on load they keep the value they have in `init()`. A struct with padding, such as
/// `struct Rock { var x: Double; var dead: UInt8 }` (stride 16), is saved as its 9 declared
/// bytes an element: equal values give equal files and digests whatever the padding held.
public protocol BulkStorable: Codable, Sendable, BitwiseCopyable {
  /// The fields to save and where they live in memory.
  static var bulkLayout: BulkLayout { get }
  /// The value fields take when a save does not have them.
  init()
}

/// Builds a ``BulkLayout`` from key paths, so offsets come from the compiler.
public struct BulkFieldPath<Root>: Sendable {
  let name: String
  let type: ScalarType
  let offset: Int

  /// The stored property at `path`, saved under `name`.
  public static func field<Value: BulkScalar>(_ name: String, _ path: KeyPath<Root, Value> & Sendable) -> Self {
    guard let offset = MemoryLayout<Root>.offset(of: path) else {
      preconditionFailure("\(name) is not a stored property of \(Root.self)")
    }
    return Self(name: name, type: Value.scalarType, offset: offset)
  }
}

extension BulkLayout {
  /// The layout of `type` from its fields' key paths. For a ``BulkStorable`` type the overload
  /// that also warns of stored properties left out is the one called.
  public init<Root>(of type: Root.Type, _ fields: [BulkFieldPath<Root>]) {
    self.init(
      stride: MemoryLayout<Root>.stride,
      fields: fields.map { BulkField(name: $0.name, type: $0.type, offset: $0.offset) })
  }
}

/// An array of plain structs: the layout, the count and the raw little-endian bytes.
public struct BulkArray: Sendable, Equatable {
  /// The element layout.
  public let layout: BulkLayout
  /// The number of elements.
  public let count: Int
  private let storage: Storage

  private enum Storage: Sendable {
    case bytes(ArraySlice<UInt8>)
    case typed(any BulkBuffer)
  }

  /// Wraps raw bytes read from a file (a slice of the file shares its storage);
  /// `bytes.count` must be `count * layout.stride`. Bytes outside the layout's fields are kept
  /// as they are; ``BulkStorable`` arrays encoded by Stasis have none.
  public init(layout: BulkLayout, count: Int, bytes: ArraySlice<UInt8>) {
    self.layout = layout
    self.count = count
    self.storage = .bytes(bytes)
  }

  /// The array's declared fields: the Swift array itself, not copied, when its layout is
  /// packed (``BulkLayout/isPacked``), else its fields gathered into ``BulkLayout/packed``, so
  /// no padding byte reaches a file or a digest.
  public init<Element: BulkStorable>(_ array: [Element]) {
    let memory = Element.bulkLayout
    if memory.isPacked {
      layout = memory
      count = array.count
      storage = .typed(array)
    } else {
      self = BulkArray(layout: memory, count: array.count, typed: array).packed()
    }
  }

  private init(layout: BulkLayout, count: Int, typed: any BulkBuffer) {
    self.layout = layout
    self.count = count
    self.storage = .typed(typed)
  }

  /// Calls `body` with the elements' bytes, `count * layout.stride` of them.
  public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    switch storage {
    case .bytes(let bytes): return try bytes.withUnsafeBytes(body)
    case .typed(let buffer): return try buffer.withRawBytes(body)
    }
  }

  /// The elements as objects of their saved fields, for tools.
  public func element(at index: Int) -> SaveObject {
    withUnsafeBytes { raw in
      let base = index * layout.stride
      return SaveObject(layout.fields.map { ($0.name, $0.type.load(from: raw, at: base + $0.offset)) })
    }
  }

  /// Copies the elements out as `Element`: one copy when the layouts match, field by field
  /// (matching names, converting types, defaults for the rest) when they do not. Fields
  /// filled from `init()` and stored fields the element no longer has go to `log`.
  func decode<Element: BulkStorable>(as _: Element.Type, path: String, log: DecodeLog) throws(SaveFileError)
    -> [Element]
  {
    let target = Element.bulkLayout
    if target == layout {
      return withUnsafeBytes { raw in
        [Element](unsafeUninitializedCapacity: count) { buffer, initialized in
          if count > 0 { UnsafeMutableRawBufferPointer(buffer).copyMemory(from: raw) }
          initialized = count
        }
      }
    }
    let removed = (Element.self as? any SaveRemovedFields.Type)?.removedSaveFields ?? []
    for field in layout.fields where !target.fields.contains(where: { $0.name == field.name }) {
      log.bulkDropped.append(("\(path)[].\(field.name)", removed.contains(field.name)))
    }
    for field in target.fields where !layout.fields.contains(where: { $0.name == field.name }) {
      log.defaulted.append("\(path)[].\(field.name)")
    }
    var result = [Element](repeating: Element(), count: count)
    var failure: SaveFileError?
    withUnsafeBytes { raw in
      result.withUnsafeMutableBytes { out in
        for field in target.fields {
          guard let source = layout.fields.first(where: { $0.name == field.name }) else { continue }
          if source.type == field.type {
            // The packed file of a padded struct, or a field that moved: its bytes, strided.
            copyField(
              size: field.type.size, count: count, from: raw, at: source.offset, stride: layout.stride, to: out,
              at: field.offset, stride: target.stride)
            continue
          }
          for index in 0..<count {
            let value = source.type.load(from: raw, at: index * layout.stride + source.offset)
            if !field.type.store(value, into: out, at: index * target.stride + field.offset) {
              failure = SaveFileError(
                .typeMismatch,
                "element \(index): \(value.typeName) \(value) does not fit \(field.type)",
                context: .init(field: field.name))
              return
            }
          }
        }
      }
    }
    if let failure { throw failure }
    return result
  }

  public static func == (lhs: BulkArray, rhs: BulkArray) -> Bool {
    lhs.layout == rhs.layout && lhs.count == rhs.count
      && lhs.withUnsafeBytes { a in
        rhs.withUnsafeBytes { b in
          // memcmp: a save's "is this state unchanged?" compares whole body arrays.
          a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
        }
      }
  }
}

/// Contiguous storage of plain structs that can lend its bytes.
protocol BulkBuffer: Sendable {
  func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
}

extension Array: BulkBuffer where Element: BulkStorable {
  func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(body)
  }
}

/// Arrays the encoder stores in bulk and the decoder reads back from bulk.
protocol BulkArrayCodable {
  var bulkArray: BulkArray { get }
  static func fromBulk(_ bulk: BulkArray, path: String, log: DecodeLog) throws(SaveFileError) -> Self
}

extension Array: BulkArrayCodable where Element: BulkStorable {
  var bulkArray: BulkArray { BulkArray(self) }
  static func fromBulk(_ bulk: BulkArray, path: String, log: DecodeLog) throws(SaveFileError) -> [Element] {
    try bulk.decode(as: Element.self, path: path, log: log)
  }
}
