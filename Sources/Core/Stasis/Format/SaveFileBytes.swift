/// A save file's bytes as the store writes them: the encoder's buffer, with each bulk array's
/// bytes left where they are, in the snapshot, and written from there.
///
/// A 16 MB bulk array was copied into the file's buffer before it was written: a second pass
/// over the state and a second 16 MB held while the file was written. Now the buffer holds
/// everything but the bulk bytes, and `inserts` says where each array goes.
package struct SaveFileBytes: Sendable {
  /// The file's bytes, but the bulk arrays'.
  package private(set) var buffer: [UInt8]
  /// Where each bulk array's bytes go, as a position in `buffer`, in order.
  private var inserts: [(at: Int, bulk: BulkArray)]
  /// The file's length.
  package let count: Int

  /// A file whose bytes are all in `bytes`.
  package init(_ bytes: [UInt8]) {
    buffer = bytes
    inserts = []
    count = bytes.count
  }

  init(buffer: [UInt8], inserts: [(at: Int, bulk: BulkArray)]) {
    self.buffer = buffer
    self.inserts = inserts
    count = buffer.count + inserts.reduce(0) { $0 + $1.bulk.byteCount }
  }

  /// Calls `body` with each piece of the file, in order (none empty).
  package func forEachPiece(_ body: (UnsafeRawBufferPointer) throws -> Void) rethrows {
    try buffer.withUnsafeBytes { raw in
      var start = 0
      for insert in inserts {
        if insert.at > start { try body(UnsafeRawBufferPointer(rebasing: raw[start..<insert.at])) }
        try insert.bulk.withUnsafeBytes {
          // The header and the offsets after it were written for this many bytes.
          precondition($0.count == insert.bulk.byteCount, "a bulk array's bytes are its count times its stride")
          if $0.count > 0 { try body($0) }
        }
        start = insert.at
      }
      if raw.count > start { try body(UnsafeRawBufferPointer(rebasing: raw[start...])) }
    }
  }

  /// Whether the file is one array already (``contiguous`` copies nothing).
  package var isContiguous: Bool { inserts.isEmpty }

  /// The file's bytes in one array: a copy of the bulk arrays, for what needs them together
  /// (a same-state comparison, a cloud upload).
  package var contiguous: [UInt8] {
    guard !inserts.isEmpty else { return buffer }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(count)
    forEachPiece { bytes.append(contentsOf: $0) }
    return bytes
  }
}

extension BulkArray {
  /// The bytes of the elements: `count` times the layout's stride.
  var byteCount: Int { count * layout.stride }
}
