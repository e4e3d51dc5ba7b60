import Foundation
import Stasis
import Testing

@Suite("Signing policy: turning signing on and rotating keys without refusing players' saves")
struct SigningPolicyTests {
  static let oldKey = SigningKey(bytes: Array("the old key, thirty-two bytes!!!".utf8))
  static let newKey = SigningKey(bytes: Array("the new key, thirty-two bytes!!!".utf8))
  static let otherKey = SigningKey(bytes: Array("nobody's key, thirty-two bytes!!".utf8))

  private func save(_ store: SaveStore, _ state: TestGameState) throws -> SaveReceipt {
    try store.save(state, codec: testCodec, slot: "autosave", summary: state.summary).wait()
  }

  private func bytes(_ path: String) throws -> [UInt8] {
    try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
  }

  private func verify(_ bytes: [UInt8], _ policy: SigningPolicy) -> SaveFileFormat.Verification {
    bytes.withUnsafeBytes { SaveFileFormat.verify($0, signing: policy) }
  }

  private func encoded(_ state: TestGameState, signedWith key: SigningKey?) throws -> [UInt8] {
    SaveFileFormat.encode(try testCodec.document(for: state, summary: state.summary, createdAt: 0), signingKey: key)
  }

  @Test("turning signing on: an unsigned save loads under a policy that accepts unsigned, and its next save is signed")
  func unsignedSaveIsSignedOnNextSave() throws {
    let folder = makeTemporaryDirectory()
    var state = TestGameState.sample()
    let before = try save(SaveStore(directory: folder), state)  // the game before it turned signing on
    #expect(verify(try bytes(before.path), .none).signature == .unsigned)

    let store = SaveStore(directory: folder, signing: .signed(with: Self.newKey, acceptingUnsigned: true))
    let loaded = try store.load(codec: testCodec, slot: "autosave")
    #expect(loaded.state == state)
    #expect(!loaded.fellBack)

    state.score.points += 1
    let after = try save(store, state)
    #expect(after.generation == before.generation + 1)
    let written = try bytes(after.path)
    #expect(verify(written, .signed(with: Self.newKey)).signature == .valid(byCurrentKey: true))
    #expect(verify(written, .signed(with: Self.otherKey)).error?.kind == .signatureMismatch)
    #expect(try store.load(codec: testCodec, slot: "autosave").state == state)
  }

  @Test("an unsigned save under a policy that does not accept unsigned is refused with `unsigned`")
  func unsignedRefused() throws {
    let folder = makeTemporaryDirectory()
    _ = try save(SaveStore(directory: folder), .sample())
    let store = SaveStore(directory: folder, signing: .signed(with: Self.newKey))
    #expect(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: "autosave") }
    do {
      _ = try store.load(codec: testCodec, slot: "autosave")
    } catch {
      #expect(error.kind == .unsigned)
      #expect(error.context.part == "signature")
      // Told it was never signed, not to find "the build that signed it".
      #expect(error.suggestion?.hasPrefix("the save was never signed") == true, "\(error.suggestion ?? "")")
      #expect(error.suggestion?.contains("acceptingUnsigned: true") == true)
      #expect(error.suggestion?.contains("the build that signed it") == false)
    }
    // The convenience init means the same.
    let same = SaveStore(directory: folder, signingKey: Self.newKey)
    #expect(same.signing.current != nil && !same.signing.acceptsUnsigned)
    #expect(throws: SaveFileError.self) { try same.load(codec: testCodec, slot: "autosave") }
  }

  @Test("rotation: a save signed with a retired key loads, and its next save is signed with the current key")
  func retiredKeySaveLoadsAndIsResigned() throws {
    let folder = makeTemporaryDirectory()
    var state = TestGameState.sample()
    let old = try save(SaveStore(directory: folder, signing: .signed(with: Self.oldKey)), state)

    let store = SaveStore(directory: folder, signing: .signed(with: Self.newKey, retired: [Self.oldKey]))
    #expect(
      verify(try bytes(old.path), store.signing).signature == .valid(byCurrentKey: false),
      "a retired key matched")
    #expect(try store.load(codec: testCodec, slot: "autosave").state == state)

    state.score.points += 1
    let resigned = try save(store, state)
    let written = try bytes(resigned.path)
    #expect(verify(written, .signed(with: Self.newKey)).signature == .valid(byCurrentKey: true))
    #expect(verify(written, .signed(with: Self.oldKey)).error?.kind == .signatureMismatch, "not the old key")
    // Once every player has saved again, the old key can go.
    let withoutOld = SaveStore(directory: folder, signing: .signed(with: Self.newKey))
    #expect(try withoutOld.load(codec: testCodec, slot: "autosave").state == state)
  }

  @Test("under rotation an edited save is still refused with signatureMismatch, whichever key forged it")
  func tamperedUnderRotation() throws {
    let policy = SigningPolicy.signed(with: Self.newKey, retired: [Self.oldKey], acceptingUnsigned: true)
    var document = try testCodec.document(for: .sample(), summary: TestGameState.sample().summary, createdAt: 0)
    document.sections[document.sections.firstIndex { $0.name == "score" }!] = SaveSection(
      name: "score", content: .tree(try SaveValueEncoder().encode(TestScore(points: 999_999, combo: 9, best: 1))))
    let forged = SaveFileFormat.encode(document, signingKey: Self.otherKey)
    #expect(verify(forged, .none).isValid, "every checksum of the forgery is right")
    let verification = verify(forged, policy)
    #expect(verification.signature == .invalid)
    #expect(verification.error?.kind == .signatureMismatch)
    #expect(verification.error?.message.contains("none of the 2 keys") == true)
    #expect(throws: SaveFileError.self) { try SaveFileFormat.decode(forged, signing: policy) }

    // The same policy accepts a genuine save signed with the retired key.
    let genuine = try encoded(.sample(), signedWith: Self.oldKey)
    #expect(verify(genuine, policy).isValid)

    // In the store, under rotation, with unsigned accepted: still refused.
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder, signing: policy)
    let receipt = try save(store, .sample())
    try Data(forged).write(to: URL(fileURLWithPath: receipt.path))
    do {
      _ = try store.load(codec: testCodec, slot: "autosave")
      Issue.record("a forged save loaded")
    } catch {
      #expect(error.kind == .signatureMismatch)
    }
  }

  @Test("the signature status: unsigned, not checked without keys, valid by the current or a retired key, invalid")
  func signatureStatus() throws {
    let unsigned = try encoded(.sample(), signedWith: nil)
    let signedOld = try encoded(.sample(), signedWith: Self.oldKey)
    let rotation = SigningPolicy.signed(with: Self.newKey, retired: [Self.oldKey])

    #expect(verify(unsigned, .none).signature == .unsigned)
    #expect(verify(unsigned, .none).isValid)
    #expect(verify(signedOld, .none).signature == .notChecked, "no key: the signature is not checked")
    #expect(verify(signedOld, .none).isValid)
    #expect(verify(signedOld, .signed(with: Self.oldKey)).signature == .valid(byCurrentKey: true))
    #expect(verify(signedOld, rotation).signature == .valid(byCurrentKey: false))
    #expect(verify(signedOld, .signed(with: Self.otherKey)).signature == .invalid)
    #expect(verify(unsigned, rotation).signature == .unsigned)
    #expect(verify(unsigned, rotation).error?.kind == .unsigned)
    #expect(verify(unsigned, .signed(with: Self.newKey, acceptingUnsigned: true)).isValid)
    // A verify-only policy (signing turned off, old saves still checked).
    let verifyOnly = SigningPolicy(current: nil, retired: [Self.oldKey], acceptsUnsigned: true)
    #expect(verify(signedOld, verifyOnly).signature == .valid(byCurrentKey: false))
    #expect(verify(try encoded(.sample(), signedWith: Self.otherKey), verifyOnly).signature == .invalid)
    // A file that fails before its trailer has no signature verdict.
    var flipped = signedOld
    flipped[flipped.count / 2] ^= 1
    #expect(verify(flipped, rotation).signature == nil)
    // decodeWithSignature says which.
    let decoded = try SaveFileFormat.decodeWithSignature(signedOld, signing: rotation)
    #expect(decoded.signature == .valid(byCurrentKey: false))
    #expect(try testCodec.state(from: decoded.document) == .sample())
    // The signingKey: overloads mean `.signed(with:)` and `.none`.
    #expect(try SaveFileFormat.decode(signedOld, signingKey: Self.oldKey) == decoded.document)
    #expect(throws: SaveFileError.self) { try SaveFileFormat.decode(unsigned, signingKey: Self.oldKey) }
    #expect(try SaveFileFormat.decode(signedOld, signingKey: nil) == decoded.document)
  }

  @Test("a key never appears in a description, a reflection, or an error")
  func keysAreNeverPrinted() throws {
    let secret = "a very secret key, do not print!"
    let key = SigningKey(bytes: Array(secret.utf8))
    let policy = SigningPolicy.signed(with: key, retired: [Self.oldKey], acceptingUnsigned: true)
    var dumped = ""
    dump(policy, to: &dumped)
    var dumpedKey = ""
    dump(key, to: &dumpedKey)
    let texts = [
      String(describing: key), String(reflecting: key), String(describing: policy), String(reflecting: policy),
      "\(policy)", dumped, dumpedKey,
    ]
    let secretBytes = Array(secret.utf8).map(String.init).joined(separator: ", ")
    for text in texts {
      #expect(!text.contains(secret), "\(text)")
      #expect(!text.contains("very secret"), "\(text)")
      #expect(!text.contains(secretBytes), "\(text)")
    }
    #expect(String(describing: policy) == "SigningPolicy(current key, 1 retired key, accepts unsigned)")
    #expect(String(describing: SigningPolicy.none) == "SigningPolicy.none")
    #expect(String(describing: key) == "SigningKey(32 bytes, redacted)")

    let forged = try encoded(.sample(), signedWith: Self.otherKey)
    let error = try #require(verify(forged, policy).error)
    #expect(!error.description.contains(secret))
    let unsignedError = try #require(verify(try encoded(.sample(), signedWith: nil), .signed(with: key)).error)
    #expect(!unsignedError.description.contains(secret))
  }
}
