import Logging

// A bulk array goes to a file as its declared fields' bytes and nothing else: a struct's padding
// holds whatever the process left there, and a file, a digest, an `unchanged` check or a delta
// that saw it would differ between two equal states. A struct whose fields tile its stride (the
// common case: `Float`s and `UInt32`s) is already packed, and moves with one copy.

extension BulkLayout {
  /// The layout a file holds for this one: the same fields in the same order, at offsets that
  /// follow one another in memory order with no byte between them, and a stride of their sizes.
  /// Equal to `self` when the fields already tile the stride.
  public var packed: BulkLayout {
    if isPacked { return self }
    let order = fields.indices.sorted { (fields[$0].offset, $0) < (fields[$1].offset, $1) }
    var packedFields = fields
    var next = 0
    for index in order {
      packedFields[index].offset = next
      next += fields[index].type.size
    }
    // A layout of no fields still needs a stride: one zero byte an element.
    return BulkLayout(stride: max(next, 1), fields: packedFields)
  }

  /// True when the fields cover every byte of the stride exactly once: no padding, no byte left
  /// out, so the memory is the file's bytes.
  public var isPacked: Bool {
    var total = 0
    for field in fields { total += field.type.size }
    guard total == stride, !fields.isEmpty else { return false }
    for (index, field) in fields.enumerated() {
      let end = field.offset + field.type.size
      for other in fields[(index + 1)...] where other.offset < end && field.offset < other.offset + other.type.size {
        return false
      }
    }
    return true
  }
}

extension BulkArray {
  /// The same elements in ``BulkLayout/packed``: `self` when the layout is packed already, else
  /// one pass that copies each field's bytes, field by field, into a new buffer.
  package func packed() -> BulkArray {
    let target = layout.packed
    if target == layout { return self }
    var bytes = [UInt8](repeating: 0, count: count * target.stride)
    withUnsafeBytes { source in
      bytes.withUnsafeMutableBytes { out in
        for (from, to) in zip(layout.fields, target.fields) {
          copyField(
            size: from.type.size, count: count, from: source, at: from.offset, stride: layout.stride, to: out,
            at: to.offset, stride: target.stride)
        }
      }
    }
    return BulkArray(layout: target, count: count, bytes: bytes[...])
  }
}

/// Copies one field of `count` elements from one strided buffer to another. The loops are typed
/// by the field's size so each is a load and a store, not a `memcpy` call per element.
func copyField(
  size: Int, count: Int, from source: UnsafeRawBufferPointer, at sourceOffset: Int, stride sourceStride: Int,
  to out: UnsafeMutableRawBufferPointer, at outOffset: Int, stride outStride: Int
) {
  guard count > 0, let input = source.baseAddress, let output = out.baseAddress else { return }
  func copy<T>(_: T.Type) {
    var from = input + sourceOffset
    var to = output + outOffset
    for _ in 0..<count {
      to.storeBytes(of: from.loadUnaligned(as: T.self), as: T.self)
      from += sourceStride
      to += outStride
    }
  }
  switch size {
  case 1: copy(UInt8.self)
  case 2: copy(UInt16.self)
  case 4: copy(UInt32.self)
  case 8: copy(UInt64.self)
  default:
    for index in 0..<count {
      (output + outOffset + index * outStride).copyMemory(
        from: input + sourceOffset + index * sourceStride, byteCount: size)
    }
  }
}

extension BulkLayout {
  /// The layout of `type` from its fields' key paths. A stored property of `type` that no field
  /// covers is not saved: it is logged as a warning, once, when the layout is made (a `static
  /// let`), and ``propertiesLeftOut(of:layout:)`` names them.
  public init<Root: BulkStorable>(of type: Root.Type, _ fields: [BulkFieldPath<Root>]) {
    self.init(
      stride: MemoryLayout<Root>.stride,
      fields: fields.map { BulkField(name: $0.name, type: $0.type, offset: $0.offset) })
    let leftOut = Self.propertiesLeftOut(of: type, layout: self)
    if !leftOut.isEmpty {
      Logger(label: "stasis.bulk").warning(
        "\(Root.self)'s bulk layout leaves out \(leftOut.joined(separator: ", ")): not saved, and reset to init()'s value on load"
      )
    }
  }

  /// The stored properties of `type` whose bytes no field of `layout` covers, in declaration
  /// order. Padding is never named: it is not a property, and never reaches a file.
  public static func propertiesLeftOut<Root: BulkStorable>(of type: Root.Type, layout: BulkLayout) -> [String] {
    var covered = [Bool](repeating: false, count: layout.stride)
    for field in layout.fields {
      for byte in field.offset..<min(layout.stride, field.offset + field.type.size) { covered[byte] = true }
    }
    // A plain struct's stored properties lie in declaration order, each at its alignment.
    // `_openExistential` is the one way to ask a `Mirror` child's dynamic type for its size.
    func sizeAndAlignment<T>(_: T.Type) -> (size: Int, alignment: Int) {
      (MemoryLayout<T>.size, MemoryLayout<T>.alignment)
    }
    var leftOut: [String] = []
    var offset = 0
    for (index, child) in Mirror(reflecting: Root()).children.enumerated() {
      let (size, alignment) = _openExistential(Swift.type(of: child.value), do: sizeAndAlignment)
      offset = (offset + alignment - 1) / alignment * alignment
      let bytes = offset..<min(offset + size, layout.stride)
      if !bytes.isEmpty, !bytes.contains(where: { covered[$0] }) { leftOut.append(child.label ?? "property \(index)") }
      offset += size
    }
    return leftOut
  }
}
