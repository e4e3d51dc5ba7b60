import Stasis

/// Which part of the base each part of the target is diffed against: the header against the
/// header, each section against the section of the same name, the trailer against the trailer.
/// Bytes that are not two readable save files are one part against the whole base.
enum DeltaPlan {
  struct Part {
    /// The part's bytes in the target.
    var target: Range<Int>
    /// The bytes of the base it is diffed against; nil when the base has no such part.
    var base: Range<Int>?
  }

  static func parts(base: UnsafeRawBufferPointer, target: UnsafeRawBufferPointer) -> [Part] {
    parts(base: base, target: target, old: layout(base), new: layout(target))
  }

  static func parts(
    base: UnsafeRawBufferPointer, target: UnsafeRawBufferPointer, old: [(name: String, range: Range<Int>)]?,
    new: [(name: String, range: Range<Int>)]?
  ) -> [Part] {
    guard let new, let old else {
      return [Part(target: 0..<target.count, base: 0..<base.count)]
    }
    var byName: [String: Range<Int>] = [:]
    for (name, range) in old { byName[name] = range }
    // Parts in the target's order, so the operations rebuild it front to back.
    return new.map { Part(target: $0.range, base: byName[$0.name]) }
  }

  /// The file's parts by name, in file order, covering it exactly; nil when the header does
  /// not read or the parts would not cover the bytes.
  static func layout(_ bytes: UnsafeRawBufferPointer) -> [(name: String, range: Range<Int>)]? {
    guard let header = try? SaveFileFormat.readHeader(bytes) else { return nil }
    // Section names are 1-64 bytes of UTF-8 and never empty: these two cannot collide.
    var parts: [(name: String, range: Range<Int>)] = [("", 0..<header.length)]
    var end = header.length
    for section in header.sections {
      guard section.offset == end, section.length >= 0, section.offset + section.length <= bytes.count else {
        return nil
      }
      parts.append((section.name, section.offset..<(section.offset + section.length)))
      end = section.offset + section.length
    }
    parts.append(("\u{0}trailer", end..<bytes.count))
    return parts
  }
}

extension DeltaPlan {
  /// What names a save file in a delta without reading all of it: the CRC32C of its header
  /// and its trailer. The header holds every section's checksum and the trailer the file's
  /// length, so two files with the same framing differ only in bytes whose checksums disagree,
  /// which the reader that applies the delta checks (``SaveDelta`` does, on the file it builds).
  static func framing(_ bytes: UnsafeRawBufferPointer, _ layout: [(name: String, range: Range<Int>)]) -> UInt32 {
    let header = layout.first!.range
    let trailer = layout.last!.range
    let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[header]))
    return CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[trailer]), continuing: crc)
  }
}
