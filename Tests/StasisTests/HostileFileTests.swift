import Foundation
import Stasis
import Testing

/// Builds save files byte by byte from docs/FORMAT.md, independently of `SaveFileFormat`, with
/// correct checksums over whatever the sections hold: hostile files that pass every CRC.
private func forge(
  sections: [(name: String, encoding: UInt8, bytes: [UInt8])], version: UInt16 = 2, offsets: [UInt64]? = nil,
  progress: Double = .nan, summary: [UInt8] = [], summaryLength: UInt32? = nil, createdAt: Int64 = 0,
  frame: Int64 = 0, playTime: Double = 0
) -> [UInt8] {
  func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
  func short(_ text: String) -> [UInt8] { le(UInt16(text.utf8.count)) + Array(text.utf8) }
  var strings = short("hostile") + short("1") + short("slot")
  if version >= 2 { strings += short("device") + le(summaryLength ?? UInt32(summary.count)) + summary }
  let tableSize = sections.reduce(0) { $0 + 2 + $1.name.utf8.count + 22 }
  let headerLength = 64 + strings.count + tableSize + 4
  var header: [UInt8] = [0x89, 0x53, 0x54, 0x53, 0x0D, 0x0A, 0x1A, 0x0A] + le(version) + le(UInt16(0))
  header += le(UInt32(headerLength)) + le(UInt32(1)) + le(UInt32(sections.count))
  if version == 1 {  // created at, frame, score, play time, level, reserved
    header += le(createdAt) + le(frame) + le(Int64(77)) + le(playTime.bitPattern) + le(UInt32(3)) + le(UInt32(0))
  } else {  // created at, frame, play time, progress, reserved
    header += le(createdAt) + le(frame) + le(playTime.bitPattern) + le(progress.bitPattern) + le(UInt64(0))
  }
  header += strings
  var offset = UInt64(headerLength)
  for (index, section) in sections.enumerated() {
    header +=
      short(section.name) + [section.encoding, 0] + le(offsets?[index] ?? offset) + le(UInt64(section.bytes.count))
    header += le(CRC32C.checksum(section.bytes))
    offset += UInt64(section.bytes.count)
  }
  let headerCRC = CRC32C.checksum(header)
  header += le(headerCRC)
  var file = header
  for section in sections { file += section.bytes }
  var trailer: [UInt8] =
    Array("STSEND".utf8) + [0, 0] + le(UInt64(file.count + 28)) + le(UInt32(sections.count)) + le(UInt32(0))
  trailer += le(CRC32C.checksum(trailer, continuing: headerCRC))
  return file + trailer
}

/// A tree section's bytes: no names, shapes or layouts, then `value`.
private func tree(_ value: [UInt8], names: [String] = []) -> [UInt8] {
  var bytes = withUnsafeBytes(of: UInt32(names.count).littleEndian) { Array($0) }
  for name in names {
    bytes += withUnsafeBytes(of: UInt16(name.utf8.count).littleEndian) { Array($0) } + Array(name.utf8)
  }
  return bytes + [0, 0, 0, 0] + [0, 0, 0, 0] + value
}

@Suite("Hostile files")
struct HostileFileTests {
  private func kind(_ bytes: [UInt8]) -> SaveFileError.Kind? {
    do {
      _ = try SaveFileFormat.decode(bytes, path: "hostile.stasis")
      return nil
    } catch { return error.kind }
  }

  @Test("the forger follows FORMAT.md: a well-formed forged file decodes")
  func forgerIsRight() throws {
    let document = try SaveFileFormat.decode(
      forge(sections: [("score", 1, tree([0x06] + Array(repeating: 0, count: 8)))]))
    #expect(document[section: "score"]?.content == .tree(.int64(0)))
    #expect(document.game.name == "hostile")
  }

  @Test("lengths that claim gigabytes are refused before anything is allocated")
  func gigabyteLengths() {
    let string: [UInt8] = [0x0D, 0xFF, 0xFF, 0xFF, 0xFF]  // a string of 4 GiB
    let array: [UInt8] = [0x0F, 0xFF, 0xFF, 0xFF, 0x7F]  // 2 billion values
    let names: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF]  // 4 billion field names
    #expect(kind(forge(sections: [("a", 1, tree(string))])) == .truncated)
    #expect(kind(forge(sections: [("a", 1, tree(array))])) == .truncated)
    #expect(kind(forge(sections: [("a", 1, names)])) == .truncated)
    var bulk = tree([0x11, 0, 0, 0, 0] + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F])
    bulk.replaceSubrange(8..<12, with: [1, 0, 0, 0])  // one layout...
    bulk.insert(contentsOf: [40, 0, 0, 0, 0, 0, 0, 0], at: 12)  // ...of stride 40, no fields
    #expect(kind(forge(sections: [("a", 1, bulk)])) == .truncated)
  }

  @Test("nesting deeper than the limit is refused, not recursed into")
  func deepNesting() {
    let deep =
      [UInt8](repeating: 0, count: 0) + Array(repeating: [0x0F, 1, 0, 0, 0], count: 10_000).flatMap { $0 } + [0x00]
    #expect(kind(forge(sections: [("a", 1, tree(deep))])) == .limitExceeded)
  }

  @Test("duplicate sections, sections out of order or overlapping, and unknown encodings are malformed")
  func sectionTable() {
    let value = tree([0x00])
    #expect(kind(forge(sections: [("a", 1, value), ("a", 1, value)])) == .malformed)
    let header = 64 + 16 + 2 * (2 + 1 + 22) + 4
    let swapped = [UInt64(header + value.count), UInt64(header)]
    #expect(kind(forge(sections: [("a", 1, value), ("b", 1, value)], offsets: swapped)) == .malformed)
    let overlapping = [UInt64(header), UInt64(header)]
    #expect(kind(forge(sections: [("a", 1, value), ("b", 1, value)], offsets: overlapping)) == .malformed)
    #expect(kind(forge(sections: [("a", 7, value)])) == .malformed)
  }

  @Test("a correct checksum over wrong data is still refused: bad tags, bad indices, bad UTF-8, leftovers")
  func checksummedGarbage() {
    #expect(kind(forge(sections: [("a", 1, tree([0x42]))])) == .malformed, "unknown tag")
    #expect(kind(forge(sections: [("a", 1, tree([0x10, 5, 0, 0, 0]))])) == .malformed, "object shape out of range")
    #expect(kind(forge(sections: [("a", 1, tree([0x0D, 2, 0, 0, 0, 0xC3, 0x28]))])) == .malformed, "invalid UTF-8")
    #expect(kind(forge(sections: [("a", 1, tree([0x00, 0x00]))])) == .malformed, "bytes after the value")
    #expect(kind(forge(sections: [("a", 1, tree([0x00], names: ["x", "x"]) + [])])) == nil, "repeated names are fine")
  }

  @Test("a header from a newer version is refused with its own error")
  func newerVersion() {
    #expect(kind(forge(sections: [("a", 1, tree([0x00]))], version: 3)) == .newerFormat)
  }

  @Test("a format-1 header still reads: its level and score become the summary's details")
  func formatOne() throws {
    let document = try SaveFileFormat.decode(forge(sections: [("a", 1, tree([0x00]))], version: 1))
    #expect(document.summary.details == .object(SaveObject([("level", .int64(3)), ("score", .int64(77))])))
    #expect(document.summary.progress == nil)
    #expect(document.summary.device == "")
  }

  @Test("a summary with hostile values (play time, progress, frame, creation time, details) is refused in the header")
  func hostileSummary() throws {
    let section = [("a", UInt8(1), tree([0x00]))]
    let good = try SaveFileFormat.decode(
      forge(sections: section, progress: 0.5, summary: tree([0x0D, 1, 0, 0, 0, 0x41])))
    #expect(good.summary.details == .string("A"))
    #expect(good.summary.progress == 0.5)
    #expect(good.summary.device == "device")
    #expect(try SaveFileFormat.decode(forge(sections: section)).summary.progress == nil, "NaN is no progress")
    for progress in [1.5, -0.1, .infinity, -.infinity] {
      #expect(kind(forge(sections: section, progress: progress)) == .malformed, "progress \(progress)")
    }
    for playTime in [Double.nan, .infinity, -.infinity, -1] {
      #expect(kind(forge(sections: section, playTime: playTime)) == .malformed, "play time \(playTime)")
      #expect(kind(forge(sections: section, version: 1, playTime: playTime)) == .malformed, "format 1, \(playTime)")
    }
    #expect(kind(forge(sections: section, frame: -1)) == .malformed, "a negative frame")
    for createdAt in [Int64(-1), 253_402_300_800_000, .max, .min] {
      #expect(kind(forge(sections: section, createdAt: createdAt)) == .malformed, "created at \(createdAt)")
    }
    let edges = try SaveFileFormat.decode(
      forge(sections: section, createdAt: 253_402_300_799_999, frame: .max, playTime: 1e9))
    #expect(edges.createdAt == 253_402_300_799_999 && edges.summary.frame == .max && edges.summary.playTime == 1e9)
    let deep = tree(Array(repeating: [0x0F, 1, 0, 0, 0], count: 100).flatMap { $0 } + [0x00])
    #expect(kind(forge(sections: section, summary: deep)) == .limitExceeded, "nesting past the depth limit")
    let large = tree([0x0E, 0x90, 0x13, 0, 0] + Array(repeating: 7, count: 5_008))
    #expect(kind(forge(sections: section, summary: large)) == .limitExceeded, "a 5 KB summary")
    #expect(kind(forge(sections: section, summary: tree([0x42]))) == .malformed, "an unknown tag")
    #expect(kind(forge(sections: section, summary: tree([0x0D, 9, 0, 0, 0, 0x41]))) == .truncated, "a short string")
    #expect(
      kind(forge(sections: section, summary: tree([0x00]), summaryLength: 0x7FFF_FFFF)) == .limitExceeded,
      "a length past the limit")
    #expect(
      kind(forge(sections: section, summary: tree([0x00]), summaryLength: 4000)) == .truncated,
      "a length past the header's end")
  }
}
