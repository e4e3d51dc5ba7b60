extension SaveFileFormat {
  /// What a damaged file still holds: each section of its table, decoded when its bytes are
  /// all there and its checksum matches, else why not. For tools that show what survives
  /// (`stasis dump` of a damaged save); a game loads only whole files.
  package enum SectionState: Sendable, Equatable {
    /// The section is whole: its checksum matches and it decodes.
    case whole(SaveSection)
    /// The file ends before the section does (a truncation).
    case missing(SaveFileError)
    /// The bytes are there but fail their checksum or do not decode.
    case damaged(SaveFileError)
  }

  /// Every section of `bytes`'s table, whole or not, in table order; nil when even the header
  /// fails its checks (then nothing in the file can be located).
  package static func salvage(_ bytes: [UInt8], path: String? = nil) -> [(entry: SectionEntry, state: SectionState)]? {
    bytes.withUnsafeBytes { raw -> [(entry: SectionEntry, state: SectionState)]? in
      let verification = verify(raw, path: path)
      guard verification.header != nil else { return nil }
      return verification.sections.map { entry, checksumOK in
        func located(_ error: SaveFileError) -> SaveFileError { path.map { error.inFile($0) } ?? error }
        guard entry.offset + entry.length <= raw.count else {
          return (
            entry,
            .missing(
              located(
                SaveFileError(
                  .truncated,
                  "the file ends at byte \(raw.count), before the section's end at \(entry.offset + entry.length)",
                  context: .init(part: entry.name), offset: raw.count)))
          )
        }
        guard checksumOK else {
          return (
            entry,
            .damaged(
              located(
                SaveFileError(
                  .checksumMismatch, "the section's bytes do not match its checksum", context: .init(part: entry.name),
                  offset: entry.offset)))
          )
        }
        let slice = UnsafeRawBufferPointer(rebasing: raw[entry.offset..<(entry.offset + entry.length)])
        switch entry.encoding {
        case .raw: return (entry, .whole(SaveSection(name: entry.name, content: .raw(Array(slice)))))
        case .tree:
          var reader = ByteReader(slice, base: entry.offset, context: .init(file: path, part: entry.name))
          reader.owner = bytes
          do throws(SaveFileError) {
            return (entry, .whole(SaveSection(name: entry.name, content: .tree(try SectionCoding.decode(&reader)))))
          } catch {
            return (entry, .damaged(error))
          }
        }
      }
    }
  }
}
