/// Writes and reads the Stasis save-file format, byte for byte as docs/FORMAT.md lays out:
/// a checksummed header with the summary and the section table, the sections, and a
/// checksummed trailer that proves the file is complete (and, with a key, signs it).
public enum SaveFileFormat {
  /// The first 8 bytes of every save: `\x89STS\r\n\x1A\n` (catches text-mode mangling, as PNG's does).
  public static let magic: [UInt8] = [0x89, 0x53, 0x54, 0x53, 0x0D, 0x0A, 0x1A, 0x0A]
  /// The first 8 bytes of the trailer: `STSEND\0\0`.
  static let trailerMagic: [UInt8] = [0x53, 0x54, 0x53, 0x45, 0x4E, 0x44, 0x00, 0x00]
  /// Bytes of the header before its strings.
  static let fixedHeaderSize = 64
  static let signatureSize = 32
  /// The latest creation time a header may carry: 9999-12-31T23:59:59.999Z, in milliseconds.
  static let latestCreationTime: Int64 = 253_402_300_799_999

  static func trailerSize(signed: Bool) -> Int { 24 + (signed ? signatureSize : 0) + 4 }

  // MARK: Writing

  /// The bytes of `document`, signed when `key` is given.
  public static func encode(_ document: SaveDocument, signingKey key: SigningKey? = nil) -> [UInt8] {
    var bytes: [UInt8] = []
    encode(document, signingKey: key, into: &bytes)
    return bytes
  }

  /// Encodes `document` into `buffer`, replacing its contents but reusing its storage, and
  /// returns the header's section table (so the writer need not parse the header it made).
  @discardableResult
  package static func encode(
    _ document: SaveDocument, signingKey key: SigningKey? = nil, into buffer: inout [UInt8]
  ) -> [SectionEntry] {
    var writer = ByteWriter(reusing: buffer, capacity: capacity(document, bulk: true))
    buffer = []  // let the writer own the storage uniquely
    let entries = encode(document, signingKey: key, with: &writer)
    buffer = writer.bytes
    return entries
  }

  /// Encodes `document` as the store writes it: in `buffer`'s storage, reused, but for its bulk
  /// arrays, which stay where they are and are written from there. A signed file is encoded
  /// whole: its signature covers every byte, and so is one `inOnePiece` (a file a cloud upload
  /// sends as it was written). Returns the file and its header's section table;
  /// `buffer` is left empty, its storage now the file's `buffer`.
  package static func encodeFile(
    _ document: SaveDocument, signingKey key: SigningKey? = nil, reusing buffer: inout [UInt8],
    inOnePiece: Bool = false
  ) -> (file: SaveFileBytes, table: [SectionEntry]) {
    let bulkIn = key != nil || inOnePiece
    var writer = ByteWriter(reusing: buffer, capacity: capacity(document, bulk: bulkIn))
    buffer = []  // let the writer own the storage uniquely
    writer.leavesBulkOut = !bulkIn
    let entries = encode(document, signingKey: key, with: &writer)
    let inserts = writer.inserts
    return (SaveFileBytes(buffer: writer.bytes, inserts: inserts), entries)
  }

  /// The buffer an encoding needs: the header's estimate, the sections (`bulk`: with their
  /// bulk arrays' bytes), a signed trailer.
  private static func capacity(_ document: SaveDocument, bulk: Bool) -> Int {
    4096 + estimatedSize(document, bulk: bulk) + trailerSize(signed: true)
  }

  private static func encode(
    _ document: SaveDocument, signingKey key: SigningKey?, with writer: inout ByteWriter
  ) -> [SectionEntry] {
    let summary = document.summary
    var details = ByteWriter()
    if summary.details != .null { SectionCoding.encode(summary.details, into: &details) }
    precondition(
      details.count <= FormatLimits.maxSummaryDetailsBytes,
      "the summary's details exceed FormatLimits.maxSummaryDetailsBytes: SaveCodec.document and SaveStore check this")
    let sectionTableSize = document.sections.reduce(0) { $0 + 2 + $1.name.utf8.count + 2 + 8 + 8 + 4 }
    let strings = [document.game.name, document.game.build, summary.slot, summary.device].map(headerString)
    let stringsSize = strings.reduce(0) { $0 + 2 + $1.utf8.count }
    let headerLength = fixedHeaderSize + stringsSize + 4 + details.count + sectionTableSize + 4
    _ = writer.reserve(headerLength)

    // Offsets and lengths are the file's (`fileCount`): bulk arrays left out count.
    var entries: [SectionEntry] = []
    for section in document.sections {
      let start = writer.fileCount
      writer.beginChecksum()
      switch section.content {
      case .tree(let value): SectionCoding.encode(value, into: &writer)
      case .raw(let bytes): writer.write(bytes: bytes)
      }
      entries.append(
        SectionEntry(
          name: section.name, encoding: section.encoding, offset: start, length: writer.fileCount - start,
          checksum: writer.endChecksum()))
    }

    var header = ByteWriter(capacity: headerLength)
    header.write(bytes: magic)
    header.write(FormatLimits.formatVersion)
    header.write(UInt16(key == nil ? 0 : 1))
    header.write(UInt32(headerLength))
    header.write(document.game.schemaVersion)
    header.write(UInt32(entries.count))
    header.write(document.createdAt)
    header.write(summary.frame)
    header.write(summary.playTime)
    header.write(summary.progress.flatMap { $0.isNaN ? nil : min(max($0, 0), 1) } ?? .nan)
    header.write(UInt64(0))
    for string in strings { header.writeShortString(string) }
    header.write(UInt32(details.count))
    header.write(bytes: details.bytes)
    for entry in entries {
      header.writeShortString(entry.name)
      header.write(entry.encoding.rawValue)
      header.write(UInt8(0))
      header.write(UInt64(entry.offset))
      header.write(UInt64(entry.length))
      header.write(entry.checksum)
    }
    let headerCRC = header.checksum(0..<header.count)
    header.write(headerCRC)
    precondition(header.count == headerLength, "header length computed wrongly")
    writer.overwrite(at: 0, with: header.bytes)

    // The trailer follows every section: in the storage, after the last bulk array left out.
    let trailerStart = writer.count
    let fileLength = writer.fileCount + trailerSize(signed: key != nil)
    writer.write(bytes: trailerMagic)
    writer.write(UInt64(fileLength))
    writer.write(UInt32(entries.count))
    writer.write(UInt32(key == nil ? 0 : 1))
    if let key {
      precondition(!writer.leavesBulkOut, "a signed file is encoded whole")
      let signature = writer.withUnsafeBytes { key.signature(of: $0) }
      writer.write(bytes: signature)
    }
    writer.write(writer.checksum(trailerStart..<writer.count, continuing: headerCRC))
    return entries
  }

  /// `string` cut to the header's limit at a character boundary, so a long build label or
  /// device name never makes a file its own reader refuses.
  private static func headerString(_ string: String) -> String {
    guard string.utf8.count > FormatLimits.maxHeaderStringBytes else { return string }
    var cut = ""
    for character in string {
      guard cut.utf8.count + character.utf8.count <= FormatLimits.maxHeaderStringBytes else { break }
      cut.append(character)
    }
    return cut
  }

  private static func estimatedSize(_ document: SaveDocument, bulk withBulk: Bool) -> Int {
    func size(_ value: SaveValue) -> Int {
      switch value {
      case .bulk(let bulk): return 16 + (withBulk ? bulk.byteCount : 0)
      case .string(let string): return 5 + string.utf8.count
      case .bytes(let bytes): return 5 + bytes.count
      case .array(let items): return 5 + items.reduce(0) { $0 + size($1) }
      case .object(let object): return 5 + object.fields.reduce(0) { $0 + 16 + size($1.value) }
      default: return 9
      }
    }
    return document.sections.reduce(0) { total, section in
      switch section.content {
      case .tree(let value): return total + size(value)
      case .raw(let bytes): return total + bytes.count
      }
    }
  }

  // MARK: Reading

  /// Reads and checks the header alone (magic, version, length, checksum, table): what a
  /// slot list needs. `bytes` may be just the file's first bytes.
  public static func readHeader(_ bytes: UnsafeRawBufferPointer, path: String? = nil) throws(SaveFileError)
    -> SaveHeader
  {
    do {
      return try parseHeader(bytes)
    } catch {
      throw path.map { error.inFile($0) } ?? error
    }
  }

  private static func parseHeader(_ bytes: UnsafeRawBufferPointer) throws(SaveFileError) -> SaveHeader {
    var reader = ByteReader(bytes, context: .init(part: "header"))
    guard bytes.count > 0 else { throw reader.failure(.truncated, "the file is empty") }
    let prefix = try reader.readBytes(min(8, bytes.count), "magic")
    guard prefix.elementsEqual(magic.prefix(prefix.count)) else {
      throw reader.failure(.badMagic, "the file does not start with the Stasis magic number", at: 0)
    }
    guard prefix.count == 8 else { throw reader.failure(.truncated, "the file ends inside the magic number") }
    let version = try reader.read(UInt16.self, "format version")
    guard version <= FormatLimits.formatVersion else {
      throw reader.failure(
        .newerFormat, "format version \(version); this reader knows up to \(FormatLimits.formatVersion)", at: 8)
    }
    guard version >= 1 else { throw reader.failure(.malformed, "format version 0 does not exist", at: 8) }
    let flags = try reader.read(UInt16.self, "header flags")
    let length = Int(try reader.read(UInt32.self, "header length"))
    guard length >= fixedHeaderSize + 4, length <= FormatLimits.maxHeaderSize else {
      throw reader.failure(
        .limitExceeded, "header length \(length) is outside \(fixedHeaderSize + 4)...\(FormatLimits.maxHeaderSize)",
        at: 12)
    }
    guard length <= bytes.count else {
      throw reader.failure(.truncated, "the header is \(length) bytes but the file has \(bytes.count)", at: bytes.count)
    }
    let stored = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self))
    let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<(length - 4)]))
    guard stored == computed else {
      throw reader.failure(
        .checksumMismatch, "header checksum is \(hex(stored)), the bytes give \(hex(computed))", at: length - 4)
    }
    guard flags & ~1 == 0 else { throw reader.failure(.malformed, "unknown header flags \(flags)", at: 10) }
    var header = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[0..<(length - 4)]), context: .init(part: "header"))
    try header.skip(16, "fixed header")
    let schema = try header.read(UInt32.self, "schema version")
    let sectionCount = Int(try header.read(UInt32.self, "section count"))
    guard sectionCount <= FormatLimits.maxSections else {
      throw header.failure(.limitExceeded, "\(sectionCount) sections; the limit is \(FormatLimits.maxSections)", at: 20)
    }
    let createdAt = try header.read(Int64.self, "creation time")
    // Every field of the summary is checked here, in the one reader `stasis verify`, the game
    // and the server share, so they all refuse the same files.
    guard (0...latestCreationTime).contains(createdAt) else {
      throw header.failure(
        .malformed, "creation time \(createdAt) ms is outside 1970...9999", at: header.fileOffset - 8)
    }
    let limit = FormatLimits.maxHeaderStringBytes
    var summary = SaveSummary()
    summary.frame = try header.read(Int64.self, "frame")
    guard summary.frame >= 0 else {
      throw header.failure(.malformed, "frame \(summary.frame) is negative", at: header.fileOffset - 8)
    }
    // Play time in seconds: finite and not negative.
    func readPlayTime(_ header: inout ByteReader) throws(SaveFileError) -> Double {
      let at = header.fileOffset
      let playTime = try header.readDouble("play time")
      guard playTime.isFinite, playTime >= 0 else {
        throw header.failure(.malformed, "play time \(playTime) s is not a finite, non-negative number", at: at)
      }
      return playTime
    }
    if version == 1 {
      // Format 1 kept the demo's level and score in the header; they become details.
      let score = try header.read(Int64.self, "score")
      summary.playTime = try readPlayTime(&header)
      let level = try header.read(UInt32.self, "level")
      _ = try header.read(UInt32.self, "reserved")
      summary.details = .object(SaveObject([("level", .int64(Int64(level))), ("score", .int64(score))]))
    } else {
      summary.playTime = try readPlayTime(&header)
      let progressAt = header.fileOffset
      let progress = try header.readDouble("progress")
      guard progress.isNaN || (0...1).contains(progress) else {
        throw header.failure(.malformed, "progress \(progress) is outside 0...1", at: progressAt)
      }
      summary.progress = progress.isNaN ? nil : progress
      _ = try header.read(UInt64.self, "reserved")
    }
    let game = try header.readShortString("game name", limit: limit)
    let build = try header.readShortString("game build", limit: limit)
    summary.slot = try header.readShortString("slot name", limit: limit)
    if version >= 2 {
      summary.device = try header.readShortString("device name", limit: limit)
      let detailsAt = header.fileOffset
      let detailsLength = Int(try header.read(UInt32.self, "summary length"))
      guard detailsLength <= FormatLimits.maxSummaryDetailsBytes else {
        throw header.failure(
          .limitExceeded,
          "the game's summary is \(detailsLength) bytes; the limit is \(FormatLimits.maxSummaryDetailsBytes)",
          at: detailsAt)
      }
      if detailsLength > 0 {
        let start = header.fileOffset
        let slice = try header.readBytes(detailsLength, "summary")
        var reader = ByteReader(slice, base: start, context: .init(part: "summary"))
        summary.details = try SectionCoding.decode(&reader)
      }
    }
    var entries: [SectionEntry] = []
    var expectedOffset = length
    for index in 0..<sectionCount {
      let at = header.fileOffset
      let name = try header.readShortString("section \(index) name", limit: FormatLimits.maxSectionNameBytes)
      let rawEncoding = try header.read(UInt8.self, "section encoding")
      _ = try header.read(UInt8.self, "section flags")
      let offset = try header.read(UInt64.self, "section offset")
      let size = try header.read(UInt64.self, "section length")
      let checksum = try header.read(UInt32.self, "section checksum")
      guard let encoding = SectionEncoding(rawValue: rawEncoding) else {
        throw header.failure(.malformed, "section '\(name)' has unknown encoding \(rawEncoding)", at: at)
      }
      guard !name.isEmpty, !entries.contains(where: { $0.name == name }) else {
        throw header.failure(.malformed, "section name '\(name)' is empty or repeated", at: at)
      }
      guard offset == UInt64(expectedOffset), size <= UInt64(FormatLimits.maxFileSize) else {
        throw header.failure(
          .malformed,
          "section '\(name)' claims bytes \(offset)+\(size); sections must follow each other from \(expectedOffset)",
          at: at)
      }
      expectedOffset += Int(size)
      guard expectedOffset <= FormatLimits.maxFileSize else {
        throw header.failure(.limitExceeded, "sections run past the \(FormatLimits.maxFileSize)-byte limit", at: at)
      }
      entries.append(
        SectionEntry(name: name, encoding: encoding, offset: Int(offset), length: Int(size), checksum: checksum))
    }
    guard header.isAtEnd else {
      throw header.failure(.malformed, "\(header.remaining) unexplained bytes at the end of the header")
    }
    return SaveHeader(
      formatVersion: version, game: GameIdentity(name: game, build: build, schemaVersion: schema),
      createdAt: createdAt, summary: summary,
      isSigned: flags & 1 != 0, sections: entries, length: length)
  }

  /// The result of checking a whole file: the header when it could be read, each section's
  /// checksum verdict, the signature's, and the first failure.
  public struct Verification: Sendable {
    /// The header, when it passed its own checks.
    public var header: SaveHeader?
    /// Each section of the table with whether its checksum matched.
    public var sections: [(entry: SectionEntry, checksumOK: Bool)]
    /// What became of the signature under the policy; nil when the file failed before its
    /// signature was reached (a bad header, a section's checksum, a broken trailer).
    public var signature: SignatureStatus?
    /// The first failure, or nil when the file is whole.
    public var error: SaveFileError?
    /// True when every check passed. A signed file verified under a policy without keys is
    /// valid with `signature == .notChecked`: its signature was not checked.
    public var isValid: Bool { error == nil }
  }

  /// Checks every byte: header, each section's checksum, the trailer, and the signature as
  /// `signing` says (see ``SigningPolicy``; with ``SigningPolicy/none`` signatures are not
  /// checked). Never throws; reports every section's verdict, the signature's and the first
  /// failure.
  public static func verify(_ bytes: UnsafeRawBufferPointer, path: String? = nil, signing: SigningPolicy = .none)
    -> Verification
  {
    let header: SaveHeader
    do {
      header = try parseHeader(bytes)
    } catch {
      return Verification(header: nil, sections: [], signature: nil, error: path.map { error.inFile($0) } ?? error)
    }
    var verdicts: [(entry: SectionEntry, checksumOK: Bool)] = []
    var firstError: SaveFileError?
    func fail(_ error: SaveFileError) {
      if firstError == nil { firstError = path.map { error.inFile($0) } ?? error }
    }
    let sectionsEnd = header.sections.last.map { $0.offset + $0.length } ?? header.length
    for entry in header.sections {
      guard entry.offset + entry.length <= bytes.count else {
        verdicts.append((entry, false))
        fail(
          SaveFileError(
            .truncated, "the section needs bytes up to \(entry.offset + entry.length) but the file has \(bytes.count)",
            context: .init(part: entry.name), offset: bytes.count))
        continue
      }
      let computed = CRC32C.checksum(
        UnsafeRawBufferPointer(rebasing: bytes[entry.offset..<(entry.offset + entry.length)]))
      let ok = computed == entry.checksum
      verdicts.append((entry, ok))
      if !ok {
        fail(
          SaveFileError(
            .checksumMismatch, "checksum is \(hex(entry.checksum)), the bytes give \(hex(computed))",
            context: .init(part: entry.name), offset: entry.offset))
      }
    }
    var signature: SignatureStatus?
    if firstError == nil {
      do {
        signature = try verifyTrailer(bytes, header: header, sectionsEnd: sectionsEnd, policy: signing)
      } catch {
        switch error.kind {
        case .signatureMismatch: signature = .invalid
        case .unsigned: signature = .unsigned
        default: break
        }
        fail(error)
      }
    }
    return Verification(header: header, sections: verdicts, signature: signature, error: firstError)
  }

  /// The same as `verify(_:path:signing:)` with `.signed(with: key)` (unsigned files refused),
  /// or `.none` when `key` is nil.
  package static func verify(_ bytes: UnsafeRawBufferPointer, path: String? = nil, signingKey key: SigningKey?)
    -> Verification
  {
    verify(bytes, path: path, signing: key.map { .signed(with: $0) } ?? .none)
  }

  /// Checks the trailer, then the signature under `policy`; returns what became of the signature.
  private static func verifyTrailer(
    _ bytes: UnsafeRawBufferPointer, header: SaveHeader, sectionsEnd: Int, policy: SigningPolicy
  ) throws(SaveFileError) -> SignatureStatus {
    let size = trailerSize(signed: header.isSigned)
    let context = SaveFileError.Context(part: "trailer")
    guard bytes.count >= sectionsEnd + size else {
      throw SaveFileError(
        .truncated, "the file ends \(sectionsEnd + size - bytes.count) bytes before the end of its trailer",
        context: context, offset: bytes.count)
    }
    guard bytes.count == sectionsEnd + size else {
      throw SaveFileError(
        .malformed, "\(bytes.count - sectionsEnd - size) unexpected bytes after the trailer", context: context,
        offset: sectionsEnd + size)
    }
    var reader = ByteReader(
      UnsafeRawBufferPointer(rebasing: bytes[sectionsEnd...]), base: sectionsEnd, context: context)
    let trailerMagicBytes = try reader.readBytes(8, "trailer magic")
    guard trailerMagicBytes.elementsEqual(trailerMagic) else {
      throw reader.failure(.malformed, "the trailer's magic number is missing: the file is incomplete", at: sectionsEnd)
    }
    let length = try reader.read(UInt64.self, "file length")
    let count = try reader.read(UInt32.self, "section count")
    let flags = try reader.read(UInt32.self, "trailer flags")
    let storedSignature = header.isSigned ? try reader.readBytes(signatureSize, "signature") : nil
    let crcOffset = reader.fileOffset
    let stored = try reader.read(UInt32.self, "trailer checksum")
    let headerCRC = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: header.length - 4, as: UInt32.self))
    let computed = CRC32C.checksum(
      UnsafeRawBufferPointer(rebasing: bytes[sectionsEnd..<crcOffset]), continuing: headerCRC)
    guard stored == computed else {
      throw SaveFileError(
        .checksumMismatch, "trailer checksum is \(hex(stored)), the bytes give \(hex(computed))", context: context,
        offset: crcOffset)
    }
    guard length == UInt64(bytes.count), count == UInt32(header.sections.count), flags == (header.isSigned ? 1 : 0)
    else {
      throw SaveFileError(
        .malformed,
        "the trailer says \(length) bytes and \(count) sections; the file has \(bytes.count) and \(header.sections.count)",
        context: context, offset: sectionsEnd)
    }
    let signatureContext = SaveFileError.Context(part: "signature")
    guard let storedSignature else {
      guard !policy.checksSignatures || policy.acceptsUnsigned else {
        throw SaveFileError(
          .unsigned, "a signing key was given but the save is not signed", context: signatureContext,
          suggestion: "a game that turns signing on keeps its players' saves with a policy that accepts unsigned ones")
      }
      return .unsigned
    }
    guard policy.checksSignatures else { return .notChecked }
    let signed = UnsafeRawBufferPointer(rebasing: bytes[0..<(crcOffset - signatureSize)])
    if let current = policy.current, current.isValid(storedSignature, for: signed) {
      return .valid(byCurrentKey: true)
    }
    if policy.retired.contains(where: { $0.isValid(storedSignature, for: signed) }) {
      return .valid(byCurrentKey: false)
    }
    let keys = policy.verifyingKeys.count
    throw SaveFileError(
      .signatureMismatch,
      keys == 1
        ? "the HMAC-SHA256 signature does not match: the save was edited or signed with another key"
        : "the HMAC-SHA256 signature matches none of the \(keys) keys: the save was edited or signed with another key",
      context: signatureContext, offset: crcOffset - signatureSize)
  }

  /// Checks every byte (the signature as `signing` says), then decodes every section. The
  /// first failure throws.
  public static func decode(_ bytes: UnsafeRawBufferPointer, path: String? = nil, signing: SigningPolicy = .none)
    throws(SaveFileError) -> SaveDocument
  {
    try decode(bytes, owner: nil, path: path, signing: signing).document
  }

  /// The same as `decode(_:path:signing:)` with `.signed(with: key)`, or `.none` when `key` is nil.
  package static func decode(_ bytes: UnsafeRawBufferPointer, path: String? = nil, signingKey key: SigningKey?)
    throws(SaveFileError) -> SaveDocument
  {
    try decode(bytes, path: path, signing: key.map { .signed(with: $0) } ?? .none)
  }

  private static func decode(
    _ bytes: UnsafeRawBufferPointer, owner: [UInt8]?, path: String?, signing: SigningPolicy
  ) throws(SaveFileError) -> (document: SaveDocument, signature: SignatureStatus) {
    let verification = verify(bytes, path: path, signing: signing)
    if let error = verification.error { throw error }
    let header = verification.header!
    var sections: [SaveSection] = []
    for entry in header.sections {
      let slice = UnsafeRawBufferPointer(rebasing: bytes[entry.offset..<(entry.offset + entry.length)])
      switch entry.encoding {
      case .raw:
        sections.append(SaveSection(name: entry.name, content: .raw(Array(slice))))
      case .tree:
        var reader = ByteReader(slice, base: entry.offset, context: .init(file: path, part: entry.name))
        reader.owner = owner
        sections.append(SaveSection(name: entry.name, content: .tree(try SectionCoding.decode(&reader))))
      }
    }
    let document = SaveDocument(
      game: header.game, createdAt: header.createdAt, summary: header.summary, sections: sections)
    return (document, verification.signature!)
  }

  /// Decodes the body of one tree section (description tables and value), with no header or
  /// checksum around it: for fuzzing the tree decoder, and tools that carry sections alone.
  package static func decodeTreeSection(_ bytes: [UInt8]) throws(SaveFileError) -> SaveValue {
    let result = bytes.withUnsafeBytes { raw in
      Result { () throws(SaveFileError) in
        var reader = ByteReader(raw, context: .init(part: "section"))
        reader.owner = bytes
        return try SectionCoding.decode(&reader)
      }
    }
    return try result.get()
  }

  /// Checks and decodes a file held in an array; bulk arrays share the array's storage.
  public static func decode(_ bytes: [UInt8], path: String? = nil, signing: SigningPolicy = .none)
    throws(SaveFileError) -> SaveDocument
  {
    try decodeWithSignature(bytes, path: path, signing: signing).document
  }

  /// The same as `decode(_:path:signing:)` with `.signed(with: key)`, or `.none` when `key` is nil.
  package static func decode(_ bytes: [UInt8], path: String? = nil, signingKey key: SigningKey?)
    throws(SaveFileError) -> SaveDocument
  {
    try decode(bytes, path: path, signing: key.map { .signed(with: $0) } ?? .none)
  }

  /// Checks and decodes a file held in an array, and says what became of its signature: for
  /// a store or a tool that reports a save signed with a retired key, or not signed at all.
  package static func decodeWithSignature(_ bytes: [UInt8], path: String? = nil, signing: SigningPolicy)
    throws(SaveFileError) -> (document: SaveDocument, signature: SignatureStatus)
  {
    let result = bytes.withUnsafeBytes { raw in
      Result { () throws(SaveFileError) in try decode(raw, owner: bytes, path: path, signing: signing) }
    }
    return try result.get()
  }
}

func hex(_ value: UInt32) -> String {
  let digits = String(value, radix: 16)
  return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
}
