import Stasis
import Testing

@Suite("Corrupt and hostile files")
struct CorruptionTests {
  /// A small but complete reference save: every section kind, a thumbnail, a bulk array.
  static let reference: [UInt8] = {
    let state = TestGameState.sample(bodies: 3)
    let document = try! testCodec.document(
      for: state, summary: state.summary, createdAt: 1_700_000_000_000, rawSections: [("thumbnail", [1, 2, 3, 4])])
    return SaveFileFormat.encode(document)
  }()

  static func decodeState(_ bytes: [UInt8]) throws(SaveFileError) -> TestGameState {
    try testCodec.state(from: try SaveFileFormat.decode(bytes, path: "reference.stasis"), path: "reference.stasis")
  }

  @Test("the reference save decodes")
  func referenceDecodes() throws {
    #expect(try Self.decodeState(Self.reference) == TestGameState.sample(bodies: 3))
  }

  @Test("truncated at every byte offset: a typed error each time, never a crash or a value")
  func truncatedEverywhere() {
    var kinds: [SaveFileError.Kind: Int] = [:]
    for length in 0..<Self.reference.count {
      do {
        _ = try Self.decodeState(Array(Self.reference[0..<length]))
        Issue.record("a save truncated to \(length) bytes decoded")
      } catch {
        kinds[error.kind, default: 0] += 1
        #expect(error.context.file == "reference.stasis")
        #expect(error.offset != nil || error.kind == .truncated)
      }
    }
    #expect(kinds.values.reduce(0, +) == Self.reference.count)
    print("truncations refused: \(Self.reference.count) of \(Self.reference.count)")
  }

  @Test("every single bit flipped in turn: a typed error each time, never a wrong value")
  func everyBitFlipped() {
    var refused = 0
    for index in 0..<Self.reference.count {
      for bit in 0..<8 {
        var bytes = Self.reference
        bytes[index] ^= UInt8(1 << bit)
        do {
          _ = try Self.decodeState(bytes)
          Issue.record("byte \(index) bit \(bit) flipped and the save still decoded")
        } catch {
          refused += 1
          #expect(error.offset != nil, "\(error)")
        }
      }
    }
    #expect(refused == Self.reference.count * 8)
    print("bit flips refused: \(refused) of \(Self.reference.count * 8)")
  }

  @Test("a flipped bit in a section names that section and its offset")
  func namesTheSection() throws {
    let header = try Self.reference.withUnsafeBytes { try SaveFileFormat.readHeader($0) }
    let physics = try #require(header.sections.first { $0.name == "physics" })
    var bytes = Self.reference
    bytes[physics.offset + 5] ^= 0x10
    do {
      _ = try Self.decodeState(bytes)
      Issue.record("decoded")
    } catch {
      #expect(error.kind == .checksumMismatch)
      #expect(error.context.part == "physics")
      #expect(error.offset == physics.offset)
      #expect(
        error.description.hasPrefix(
          "reference.stasis: checksum mismatch in section 'physics' at byte \(physics.offset)"))
    }
  }

  @Test("wrong magic, an empty file, a newer format and a newer schema each get their own error")
  func specificErrors() throws {
    func kind(_ bytes: [UInt8]) -> SaveFileError.Kind? {
      do {
        _ = try Self.decodeState(bytes)
        return nil
      } catch { return error.kind }
    }
    #expect(kind([]) == .truncated)
    #expect(kind(Array("{\"score\": 1}".utf8)) == .badMagic)
    var newer = Self.reference
    newer[8] = 3  // format version 3
    #expect(kind(newer) == .newerFormat)

    let future = SaveCodec<TestGameState>(game: GameIdentity(name: testGame.name, schemaVersion: 9))
    let bytes = SaveFileFormat.encode(try future.document(for: .sample(), summary: SaveSummary(), createdAt: 0))
    do {
      _ = try Self.decodeState(bytes)
      Issue.record("a newer schema decoded")
    } catch {
      #expect(error.kind == .newerSchema)
      #expect(error.message.contains("schema version 9"))
    }
  }

  @Test("a signed save edited with recomputed checksums is refused with a signature error")
  func tamperEvidence() throws {
    let key = SigningKey(bytes: Array("a secret of thirty-two bytes!!!!".utf8))
    let state = TestGameState.sample()
    var document = try testCodec.document(for: state, summary: state.summary, createdAt: 0)
    let signed = SaveFileFormat.encode(document, signingKey: key)
    #expect(try testCodec.state(from: try SaveFileFormat.decode(signed, signingKey: key)) == state)

    // The cheat edits the score and re-encodes: every checksum is right, the signature is not.
    document.sections[document.sections.firstIndex { $0.name == "score" }!] =
      SaveSection(
        name: "score",
        content: .tree(try SaveValueEncoder().encode(TestScore(points: 999_999, combo: 9, best: 999_999))))
    let forged = SaveFileFormat.encode(
      document, signingKey: SigningKey(bytes: Array("not the game's key at all........".utf8)))
    #expect(forged.withUnsafeBytes { SaveFileFormat.verify($0).isValid }, "every checksum of the forgery is right")
    do {
      _ = try SaveFileFormat.decode(forged, signingKey: key)
      Issue.record("a forged save was accepted")
    } catch {
      #expect(error.kind == .signatureMismatch)
      #expect(error.context.part == "signature")
    }
    let unsigned = SaveFileFormat.encode(document)
    #expect(
      throws: SaveFileError(
        .unsigned, "a signing key was given but the save is not signed", context: .init(part: "signature"),
        suggestion: "a game that turns signing on keeps its players' saves with a policy that accepts unsigned ones")
    ) {
      try SaveFileFormat.decode(unsigned, signingKey: key)
    }
  }
}
