/// Writes and reads the `tree` encoding of a section: the description tables (field names,
/// object shapes, bulk layouts) followed by one tagged value. See docs/FORMAT.md.
enum SectionCoding {
  // MARK: Writing

  /// The tables of names, shapes and layouts, built in first-seen order.
  private struct Tables {
    var names: [String] = []
    var nameIndex: [String: UInt32] = [:]  // lookup only; order comes from `names`
    var shapes: [[UInt32]] = []
    var shapeIndex: [[UInt32]: UInt32] = [:]
    var layouts: [BulkLayout] = []

    mutating func name(_ name: String) -> UInt32 {
      if let index = nameIndex[name] { return index }
      let index = UInt32(names.count)
      names.append(name)
      nameIndex[name] = index
      return index
    }

    /// The field names of the shape found last, and its index: an array of objects repeats one
    /// shape, and comparing names costs less than hashing them (a 1,000-entry ledger hashed
    /// 6,000 names and 2,000 shapes to write).
    var lastShapeNames: [String] = []
    var lastShape: UInt32?

    mutating func shape(of object: SaveObject) -> UInt32 {
      if let lastShape, object.fields.count == lastShapeNames.count,
        zip(object.fields, lastShapeNames).allSatisfy({ $0.name == $1 })
      {
        return lastShape
      }
      let key = object.fields.map { name($0.name) }
      let index: UInt32
      if let known = shapeIndex[key] {
        index = known
      } else {
        index = UInt32(shapes.count)
        shapes.append(key)
        shapeIndex[key] = index
      }
      lastShapeNames = object.fields.map(\.name)
      lastShape = index
      return index
    }

    mutating func layout(_ layout: BulkLayout) -> UInt32 {
      if let index = layouts.firstIndex(of: layout) { return UInt32(index) }
      for field in layout.fields { _ = name(field.name) }
      layouts.append(layout)
      return UInt32(layouts.count - 1)
    }

    mutating func collect(_ value: SaveValue) {
      switch value {
      case .array(let items): for item in items { collect(item) }
      case .object(let object):
        _ = shape(of: object)
        for field in object.fields { collect(field.value) }
      case .bulk(let bulk): _ = layout(bulk.layout)
      default: break
      }
    }
  }

  /// The bytes of a section holding `value`.
  static func encode(_ value: SaveValue, into writer: inout ByteWriter) {
    var tables = Tables()
    tables.collect(value)
    writer.write(UInt32(tables.names.count))
    for name in tables.names { writer.writeShortString(name) }
    writer.write(UInt32(tables.shapes.count))
    for shape in tables.shapes {
      writer.write(UInt32(shape.count))
      for name in shape { writer.write(name) }
    }
    writer.write(UInt32(tables.layouts.count))
    for layout in tables.layouts {
      writer.write(UInt32(layout.stride))
      writer.write(UInt32(layout.fields.count))
      for field in layout.fields {
        writer.write(tables.name(field.name))
        writer.write(field.type.tag.rawValue)
        writer.write(UInt32(field.offset))
      }
    }
    write(value, tables: &tables, into: &writer)
  }

  private static func write(_ value: SaveValue, tables: inout Tables, into writer: inout ByteWriter) {
    switch value {
    case .null: writer.write(ValueTag.null.rawValue)
    case .bool(let flag): writer.write((flag ? ValueTag.trueValue : ValueTag.falseValue).rawValue)
    case .int8(let v):
      writer.write(ValueTag.int8.rawValue)
      writer.write(v)
    case .int16(let v):
      writer.write(ValueTag.int16.rawValue)
      writer.write(v)
    case .int32(let v):
      writer.write(ValueTag.int32.rawValue)
      writer.write(v)
    case .int64(let v):
      writer.write(ValueTag.int64.rawValue)
      writer.write(v)
    case .uint8(let v):
      writer.write(ValueTag.uint8.rawValue)
      writer.write(v)
    case .uint16(let v):
      writer.write(ValueTag.uint16.rawValue)
      writer.write(v)
    case .uint32(let v):
      writer.write(ValueTag.uint32.rawValue)
      writer.write(v)
    case .uint64(let v):
      writer.write(ValueTag.uint64.rawValue)
      writer.write(v)
    case .float32(let v):
      writer.write(ValueTag.float32.rawValue)
      writer.write(v)
    case .float64(let v):
      writer.write(ValueTag.float64.rawValue)
      writer.write(v)
    case .string(let string):
      writer.write(ValueTag.string.rawValue)
      writer.writeString(string)
    case .bytes(let bytes):
      writer.write(ValueTag.bytes.rawValue)
      writer.write(UInt32(bytes.count))
      writer.write(bytes: bytes)
    case .array(let items):
      writer.write(ValueTag.array.rawValue)
      writer.write(UInt32(items.count))
      for item in items { write(item, tables: &tables, into: &writer) }
    case .object(let object):
      writer.write(ValueTag.object.rawValue)
      writer.write(tables.shape(of: object))
      for field in object.fields { write(field.value, tables: &tables, into: &writer) }
    case .bulk(let bulk):
      writer.write(ValueTag.bulk.rawValue)
      writer.write(tables.layout(bulk.layout))
      writer.write(UInt64(bulk.count))
      writer.write(bulk: bulk)
    }
  }

  // MARK: Reading

  private struct ReadTables {
    var names: [String] = []
    var shapes: [[Int]] = []
    var layouts: [BulkLayout] = []
  }

  /// Reads a section's value; every count is checked against the bytes that remain.
  static func decode(_ reader: inout ByteReader) throws(SaveFileError) -> SaveValue {
    var tables = ReadTables()
    let nameCount = Int(try reader.read(UInt32.self, "name count"))
    try reader.require(nameCount * 2, for: "\(nameCount) field names")
    tables.names.reserveCapacity(nameCount)
    for _ in 0..<nameCount {
      tables.names.append(try reader.readShortString("field name", limit: FormatLimits.maxFieldNameBytes))
    }
    let shapeCount = Int(try reader.read(UInt32.self, "shape count"))
    try reader.require(shapeCount * 4, for: "\(shapeCount) object shapes")
    for _ in 0..<shapeCount {
      let start = reader.fileOffset
      let fieldCount = Int(try reader.read(UInt32.self, "shape field count"))
      guard fieldCount <= FormatLimits.maxFieldsPerShape else {
        throw reader.failure(.limitExceeded, "a shape has \(fieldCount) fields", at: start)
      }
      try reader.require(fieldCount * 4, for: "\(fieldCount) shape fields")
      var shape: [Int] = []
      var seen = Set<Int>()
      for _ in 0..<fieldCount {
        let at = reader.fileOffset
        let index = Int(try reader.read(UInt32.self, "shape field name"))
        guard index < tables.names.count else {
          throw reader.failure(.malformed, "shape names field \(index) of \(tables.names.count)", at: at)
        }
        guard seen.insert(index).inserted else {
          throw reader.failure(.malformed, "shape repeats field '\(tables.names[index])'", at: at)
        }
        shape.append(index)
      }
      tables.shapes.append(shape)
    }
    let layoutCount = Int(try reader.read(UInt32.self, "layout count"))
    try reader.require(layoutCount * 8, for: "\(layoutCount) bulk layouts")
    for _ in 0..<layoutCount {
      tables.layouts.append(try readLayout(&reader, names: tables.names))
    }
    let value = try readValue(&reader, tables: tables, depth: 0)
    guard reader.isAtEnd else {
      throw reader.failure(.malformed, "\(reader.remaining) unexpected bytes after the section's value")
    }
    return value
  }

  private static func readLayout(_ reader: inout ByteReader, names: [String]) throws(SaveFileError) -> BulkLayout {
    let start = reader.fileOffset
    let stride = Int(try reader.read(UInt32.self, "layout stride"))
    let fieldCount = Int(try reader.read(UInt32.self, "layout field count"))
    guard fieldCount <= FormatLimits.maxFieldsPerShape, stride > 0, stride <= 1 << 16 else {
      throw reader.failure(.limitExceeded, "a bulk layout has stride \(stride) and \(fieldCount) fields", at: start)
    }
    try reader.require(fieldCount * 9, for: "\(fieldCount) layout fields")
    var fields: [BulkField] = []
    for _ in 0..<fieldCount {
      let at = reader.fileOffset
      let index = Int(try reader.read(UInt32.self, "layout field name"))
      let tag = try reader.read(UInt8.self, "layout field type")
      let offset = Int(try reader.read(UInt32.self, "layout field offset"))
      guard index < names.count, let type = ValueTag(rawValue: tag).flatMap(ScalarType.init(tag:)),
        offset + type.size <= stride
      else {
        throw reader.failure(.malformed, "bulk field \(index) (type \(tag), offset \(offset)) does not fit", at: at)
      }
      guard !fields.contains(where: { $0.name == names[index] }) else {
        throw reader.failure(.malformed, "bulk layout repeats field '\(names[index])'", at: at)
      }
      fields.append(BulkField(name: names[index], type: type, offset: offset))
    }
    return BulkLayout(stride: stride, fields: fields)
  }

  private static func readValue(_ reader: inout ByteReader, tables: ReadTables, depth: Int) throws(SaveFileError)
    -> SaveValue
  {
    let start = reader.fileOffset
    guard depth <= FormatLimits.maxDepth else {
      throw reader.failure(.limitExceeded, "nesting deeper than \(FormatLimits.maxDepth)")
    }
    let raw = try reader.read(UInt8.self, "value tag")
    guard let tag = ValueTag(rawValue: raw) else {
      throw reader.failure(.malformed, "unknown value tag 0x\(String(raw, radix: 16))", at: start)
    }
    switch tag {
    case .null: return .null
    case .falseValue: return .bool(false)
    case .trueValue: return .bool(true)
    case .int8: return .int8(try reader.read(Int8.self, "i8"))
    case .int16: return .int16(try reader.read(Int16.self, "i16"))
    case .int32: return .int32(try reader.read(Int32.self, "i32"))
    case .int64: return .int64(try reader.read(Int64.self, "i64"))
    case .uint8: return .uint8(try reader.read(UInt8.self, "u8"))
    case .uint16: return .uint16(try reader.read(UInt16.self, "u16"))
    case .uint32: return .uint32(try reader.read(UInt32.self, "u32"))
    case .uint64: return .uint64(try reader.read(UInt64.self, "u64"))
    case .float32: return .float32(try reader.readFloat("f32"))
    case .float64: return .float64(try reader.readDouble("f64"))
    case .string:
      let length = Int(try reader.read(UInt32.self, "string length"))
      return .string(try reader.readString(length, "string"))
    case .bytes:
      let length = Int(try reader.read(UInt32.self, "bytes length"))
      return .bytes(Array(try reader.readBytes(length, "bytes")))
    case .array:
      let count = Int(try reader.read(UInt32.self, "array count"))
      try reader.require(count, for: "an array of \(count) values")  // each value takes a byte at least
      var items: [SaveValue] = []
      items.reserveCapacity(count)
      for _ in 0..<count { items.append(try readValue(&reader, tables: tables, depth: depth + 1)) }
      return .array(items)
    case .object:
      let index = Int(try reader.read(UInt32.self, "object shape"))
      guard index < tables.shapes.count else {
        throw reader.failure(.malformed, "object names shape \(index) of \(tables.shapes.count)", at: start)
      }
      let shape = tables.shapes[index]
      try reader.require(shape.count, for: "an object of \(shape.count) fields")
      var fields: [(name: String, value: SaveValue)] = []
      fields.reserveCapacity(shape.count)
      for name in shape {
        fields.append((tables.names[name], try readValue(&reader, tables: tables, depth: depth + 1)))
      }
      return .object(SaveObject(fields))
    case .bulk:
      let index = Int(try reader.read(UInt32.self, "bulk layout"))
      guard index < tables.layouts.count else {
        throw reader.failure(.malformed, "bulk array names layout \(index) of \(tables.layouts.count)", at: start)
      }
      let layout = tables.layouts[index]
      let count = try reader.read(UInt64.self, "bulk count")
      let (size, overflow) = count.multipliedReportingOverflow(by: UInt64(layout.stride))
      guard !overflow, size <= UInt64(reader.remaining) else {
        throw reader.failure(
          .truncated, "a bulk array of \(count) × \(layout.stride) bytes needs more than the \(reader.remaining) left")
      }
      let bytes = try reader.readByteArray(Int(size), "bulk bytes")
      return .bulk(BulkArray(layout: layout, count: Int(count), bytes: bytes))
    }
  }
}
