import Foundation
import Stasis

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How `dump`, `diff` and `merge` print bulk arrays.
package enum BulkListing: Sendable {
  /// A summary: the count, the layout and the first elements; for a difference, the changed
  /// ranges and the first differing elements, each list capped.
  case summary
  /// Every element (every differing one, every changed range), written as it is found.
  case allElements
}

/// One element that differs between two bulk arrays (or byte strings): its fields that differ.
package struct ElementChange: Sendable {
  package var index: Int
  package var fields: [(name: String, old: SaveValue?, new: SaveValue?)]
}

/// Two bulk arrays (or byte strings: a byte is an element) compared element by element over
/// their raw bytes: blocks of equal bytes are skipped with one `memcmp`, so the cost is that
/// of reading the bytes once plus a little per differing element.
package struct BulkDifference: Sendable {
  /// One side's elements.
  package enum Elements: Sendable {
    case bulk(BulkArray)
    case bytes([UInt8])

    var count: Int {
      switch self {
      case .bulk(let array): return array.count
      case .bytes(let bytes): return bytes.count
      }
    }
  }

  /// Changed ranges a summary lists; the rest are counted.
  package static let listedRanges = 10
  /// Differing elements a summary shows field by field; the rest are counted.
  package static let listedElements = 5

  let old: Elements
  let new: Elements
  /// How many elements differ (an element only one side has counts).
  package private(set) var differing = 0
  /// How many maximal runs of differing elements there are.
  package private(set) var rangeCount = 0
  /// The first ``listedRanges`` runs, in order, end exclusive.
  package private(set) var ranges: [Range<Int>] = []
  /// The first ``listedElements`` differing elements.
  package private(set) var first: [ElementChange] = []

  package var oldCount: Int { old.count }
  package var newCount: Int { new.count }

  package init(old: Elements, new: Elements) {
    self.old = old
    self.new = new
    var differing = 0
    var ranges: [Range<Int>] = []
    var rangeCount = 0
    forEachChangedRange { range in
      differing += range.count
      rangeCount += 1
      if ranges.count < Self.listedRanges { ranges.append(range) }
    }
    self.differing = differing
    self.rangeCount = rangeCount
    self.ranges = ranges
    // The first differing elements lie in the first ranges, which are kept.
    first = Array(ranges.lazy.flatMap { $0 }.prefix(Self.listedElements)).map { changes(at: $0) }
  }

  /// Calls `body` with each maximal run of differing elements, in order.
  package func forEachChangedRange(_ body: (Range<Int>) -> Void) {
    let common = min(old.count, new.count)
    var runStart: Int?
    func element(_ index: Int, differs: Bool) {
      if differs {
        if runStart == nil { runStart = index }
      } else if let start = runStart {
        body(start..<index)
        runStart = nil
      }
    }
    switch (old, new) {
    case (.bytes(let left), .bytes(let right)):
      left.withUnsafeBytes { a in
        right.withUnsafeBytes { b in
          scan(a, b, stride: 1, count: common, differs: { _ in true }, element)
        }
      }
    case (.bulk(let left), .bulk(let right)) where left.layout == right.layout:
      let spans = FieldSpans(left.layout)
      left.withUnsafeBytes { a in
        right.withUnsafeBytes { b in
          scan(a, b, stride: left.layout.stride, count: common, differs: { spans.differ(a, b, atByte: $0) }, element)
        }
      }
    default:
      // Another layout (a field added or retyped): by field name, as the values compare.
      for index in 0..<common { element(index, differs: !changes(at: index).fields.isEmpty) }
    }
    let end = max(old.count, new.count)
    if common < end {
      body((runStart ?? common)..<end)
    } else if let start = runStart {
      body(start..<end)
    }
  }

  /// Elements `0..<count` of `a` and `b`, `stride` bytes each: a block at a time while the
  /// bytes are equal, then element by element, where `differs` settles one whose bytes differ
  /// (a difference only in padding is none).
  private func scan(
    _ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, stride: Int, count: Int,
    differs: (_ byteOffset: Int) -> Bool, _ element: (Int, Bool) -> Void
  ) {
    guard count > 0, stride > 0, let left = a.baseAddress, let right = b.baseAddress else { return }
    let block = max(1, 4096 / stride)
    var index = 0
    while index < count {
      let length = min(block, count - index)
      if memcmp(left + index * stride, right + index * stride, length * stride) == 0 {
        element(index, false)
        index += length
        continue
      }
      for current in index..<(index + length) {
        let offset = current * stride
        element(current, memcmp(left + offset, right + offset, stride) != 0 && differs(offset))
      }
      index += length
    }
  }

  /// The fields of element `index` that differ, by name (old side's order, then the new's).
  package func changes(at index: Int) -> ElementChange {
    switch (old, new) {
    case (.bytes(let left), .bytes(let right)):
      let old = index < left.count ? SaveValue.uint8(left[index]) : nil
      let new = index < right.count ? SaveValue.uint8(right[index]) : nil
      return ElementChange(index: index, fields: old == new ? [] : [("byte", old, new)])
    case (.bulk(let left), .bulk(let right)):
      let old = index < left.count ? left.element(at: index) : SaveObject()
      let new = index < right.count ? right.element(at: index) : SaveObject()
      var names = old.fields.map(\.name)
      for field in new.fields where !names.contains(field.name) { names.append(field.name) }
      return ElementChange(
        index: index,
        fields: names.compactMap { name in old[name] == new[name] ? nil : (name, old[name], new[name]) })
    default:
      return ElementChange(index: index, fields: [])
    }
  }
}

/// The bytes each saved field of a layout occupies: two elements whose bytes differ only
/// outside them (padding) are equal, and so are two `bool`s that are both non-zero.
struct FieldSpans {
  let fields: [BulkField]
  /// The fields cover every byte of the stride and none is a `bool`: a byte difference is one.
  let coversStride: Bool

  init(_ layout: BulkLayout) {
    fields = layout.fields
    var covered = [Bool](repeating: false, count: layout.stride)
    for field in layout.fields {
      for byte in field.offset..<min(layout.stride, field.offset + field.type.size) { covered[byte] = true }
    }
    coversStride = covered.allSatisfy { $0 } && !layout.fields.contains { $0.type == .bool }
  }

  /// Whether the saved fields of the elements at byte `start` of `a` and `b`, whose bytes
  /// differ, differ.
  func differ(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, atByte start: Int) -> Bool {
    if coversStride { return true }
    return differ(a, atByte: start, b, atByte: start)
  }

  /// Whether element `i` of `a` and element `j` of `b`, two arrays of this layout, differ in a
  /// saved field.
  func differ(_ a: BulkArray, at i: Int, _ b: BulkArray, at j: Int) -> Bool {
    a.withUnsafeBytes { left in
      b.withUnsafeBytes { right in
        let stride = a.layout.stride
        guard memcmp(left.baseAddress! + i * stride, right.baseAddress! + j * stride, stride) != 0 else { return false }
        return coversStride || differ(left, atByte: i * stride, right, atByte: j * stride)
      }
    }
  }

  private func differ(
    _ a: UnsafeRawBufferPointer, atByte aStart: Int, _ b: UnsafeRawBufferPointer, atByte bStart: Int
  ) -> Bool {
    fields.contains { field in
      let (left, right) = (aStart + field.offset, bStart + field.offset)
      if field.type == .bool { return (a[left] != 0) != (b[right] != 0) }
      return memcmp(a.baseAddress! + left, b.baseAddress! + right, field.type.size) != 0
    }
  }
}

// MARK: - Text

extension BulkDifference {
  /// `path: 3 of 10 elements differ, in 2 ranges: 4, 8..<10`, then the first differing
  /// elements a line each (every one with `.allElements`), each line after `indent`.
  package func writeText(path: String, indent: String = "", listing: BulkListing, to out: TextOutput) {
    let noun = rangeCount == 1 ? "range" : "ranges"
    out.write(
      indent + out.paint(path, .bold) + ": \(differing) of \(max(oldCount, newCount)) elements differ"
        + (oldCount != newCount ? " (count \(oldCount) → \(newCount))" : "") + ", in \(rangeCount) \(noun): ")
    switch listing {
    case .summary:
      out.write(ranges.map(rangeText).joined(separator: ", "))
      if rangeCount > ranges.count { out.write(" and \(rangeCount - ranges.count) more") }
      out.write("\n")
      for change in first { out.line(indent + "  " + changeText(change)) }
      if differing > first.count { out.line(indent + "  … and \(differing - first.count) more") }
    case .allElements:
      var separator = ""
      forEachChangedRange { range in
        out.write(separator + rangeText(range))
        separator = ", "
      }
      out.write("\n")
      forEachChangedRange { range in
        for index in range { out.line(indent + "  " + changeText(changes(at: index))) }
      }
    }
  }

  private func rangeText(_ range: Range<Int>) -> String {
    range.count == 1 ? "\(range.lowerBound)" : "\(range.lowerBound)..<\(range.upperBound)"
  }

  private func changeText(_ change: ElementChange) -> String {
    "[\(change.index)] "
      + change.fields.map { "\($0.name) \(shortText($0.old)) → \(shortText($0.new))" }
      .joined(separator: ", ")
  }
}
