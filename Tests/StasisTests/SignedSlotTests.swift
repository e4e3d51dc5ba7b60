import Foundation
import Stasis
import StasisTesting
import Testing

/// Issue 27, case 8: a signature stripped from an edited save, under a policy that accepts
/// unsigned saves (the docs' own rotation recipe).
@Suite("An unsigned file never loads in a signed slot")
struct SignedSlotTests {
  static let key = SigningKey(bytes: Array("the key, thirty-two bytes long!!".utf8))

  @Test("case 8: an edited save with its signature stripped is refused, on load and on write, until reset")
  func strippedSignature() throws {
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder, signing: .signed(with: Self.key, acceptingUnsigned: true))
    let signed = try store.save(TestGameState.sample(), codec: testCodec, slot: "autosave").wait()
    #expect(store.isSigned("autosave"))

    // The player edits the score and writes the save back without a signature.
    var document = try store.readDocument(at: signed.path)
    var edited = try testCodec.state(from: document)
    edited.score.points = 999_999
    document = try testCodec.document(for: edited, summary: document.summary, createdAt: document.createdAt)
    let stripped = SaveFileFormat.encode(document)
    try Data(stripped).write(to: URL(fileURLWithPath: store.path(of: "autosave", generation: 2)))

    let refused = #expect(throws: SaveFileError.self) { try store.load(codec: testCodec, slot: "autosave") }
    #expect(refused?.kind == .unsigned)
    #expect(refused?.message.contains("unsigned in a signed slot") == true, "\(refused?.message ?? "")")
    let older = try store.load(codec: testCodec, slot: "autosave", generation: 1)
    #expect(older.state.score.points == TestGameState.sample().score.points, "the signed one still loads")

    // The same bytes as a download: refused before anything is written.
    try FileManager.default.removeItem(atPath: store.path(of: "autosave", generation: 2))
    let copy = SaveStore(directory: makeTemporaryDirectory(), signing: .signed(with: Self.key, acceptingUnsigned: true))
    _ = try copy.save(TestGameState.sample(), codec: testCodec, slot: "autosave").wait()
    let download = #expect(throws: SaveFileError.self) {
      try copy.save(fileBytes: stripped, slot: "autosave").wait()
    }
    #expect(download?.kind == .signingRequired, "a write refused: nothing of the file was written")
    #expect(try copy.generations(of: "autosave") == [1])

    // A game that stops signing on purpose resets the slot; then an unsigned save is one again.
    try copy.resetSigning(of: "autosave")
    #expect(!copy.isSigned("autosave"))
    _ = try copy.save(fileBytes: stripped, slot: "autosave").wait()
    #expect(try copy.load(codec: testCodec, slot: "autosave").state.score.points == 999_999)
  }

  @Test(
    "a signed save whose folder flush failed, then a kill: the next save, unchanged, marks the slot (seed 613357420)")
  func unchangedSaveMarksTheSlot() throws {
    let disk = SimulatedDisk()
    let signing = SigningPolicy.signed(with: Self.key, acceptingUnsigned: true)
    let store = SaveStore(directory: "/saves", signing: signing, fileSystem: disk)
    let state = TestGameState.sample()
    // The seed's first save failed in both its attempts (the slot's folder is made), its
    // second after its rename, when the folder's flush failed.
    disk.fail(.fsync, times: 2, with: .noSpace)
    #expect(throws: SaveFileError.self) { try store.save(state, codec: testCodec, slot: "autosave").wait() }
    disk.fail(.fsyncDirectory, times: 1, with: .ioError)
    let failed = store.save(state, codec: testCodec, slot: "autosave").waitForResult()
    guard case .failure(let error) = failed else {
      Issue.record("the folder's flush failed, so the save did: \(failed)")
      return
    }
    #expect(error.kind == .io)
    // A kill in which the disk kept the renamed generation: it is there, signed, unmarked.
    let rebooted = disk.crash { $0 - 1 }.disk
    #expect(rebooted.contents(of: "/saves/autosave/0000000001.stasis") != nil, "the crash kept generation 1")
    let next = SaveStore(directory: "/saves", signing: signing, fileSystem: rebooted)
    #expect(!next.isSigned("autosave"), "the failed write never marked it")
    let again = try next.save(state, codec: testCodec, slot: "autosave").wait()
    #expect(again.outcome == .unchanged, "the same state, already signed with the current key")
    #expect(next.isSigned("autosave"), "an unchanged signed save marks the slot it finds unmarked")

    // A tool writes generation 1 back unsigned: refused, as in any signed slot.
    let unsigned = SaveFileFormat.encode(try next.readDocument(at: again.path))
    rebooted.overwrite(again.path, with: unsigned)
    let refused = #expect(throws: SaveFileError.self) { try next.load(codec: testCodec, slot: "autosave") }
    #expect(refused?.kind == .unsigned)
  }

  @Test("a save signed with a retired key is signed again with the current one, even when its state is unchanged")
  func retiredKeyIsResigned() throws {
    let folder = makeTemporaryDirectory()
    let old = SigningKey(bytes: Array("the old key, thirty-two bytes!!!".utf8))
    let state = TestGameState.sample()
    _ = try SaveStore(directory: folder, signing: .signed(with: old)).save(state, codec: testCodec, slot: "autosave")
      .wait()
    let rotating = SaveStore(directory: folder, signing: .signed(with: Self.key, retired: [old]))
    #expect(try rotating.load(codec: testCodec, slot: "autosave").state == state)
    let again = try rotating.save(state, codec: testCodec, slot: "autosave").wait()
    #expect(again.outcome == .written, "the same state, written again to be signed with the current key")
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: again.path)))
    #expect(bytes.withUnsafeBytes { SaveFileFormat.verify($0, signing: .signed(with: Self.key)) }.error == nil)
    let third = try rotating.save(state, codec: testCodec, slot: "autosave").wait()
    #expect(third.outcome == .unchanged, "now signed with the current key: written once")
  }

  @Test("turning signing on still loads the unsigned saves made before it")
  func turningSigningOn() throws {
    let folder = makeTemporaryDirectory()
    _ = try SaveStore(directory: folder).save(TestGameState.sample(), codec: testCodec, slot: "autosave").wait()
    let store = SaveStore(directory: folder, signing: .signed(with: Self.key, acceptingUnsigned: true))
    #expect(!store.isSigned("autosave"))
    #expect(try store.load(codec: testCodec, slot: "autosave").generation == 1)
    var next = TestGameState.sample()
    next.score.points += 1
    _ = try store.save(next, codec: testCodec, slot: "autosave").wait()
    #expect(store.isSigned("autosave"), "its first signed save marks the slot")
    #expect(
      try store.load(codec: testCodec, slot: "autosave", generation: 1).generation == 1, "older unsigned ones too")
  }
}

/// Issue 27, case 9: the same state is never written twice in a row.
@Suite("A state is written once, by any path")
struct WrittenOnceTests {
  @Test("case 9: a new process that did not load saves the newest generation's state: nothing is written")
  func newProcessWithoutLoad() throws {
    let folder = makeTemporaryDirectory()
    let state = TestGameState.sample()
    _ = try SaveStore(directory: folder).save(state, codec: testCodec, slot: "autosave").wait()
    for _ in 0..<3 {
      let receipt = try SaveStore(directory: folder).save(state, codec: testCodec, slot: "autosave").wait()
      #expect(receipt.outcome == .unchanged)
    }
    #expect(try SaveStore(directory: folder).generations(of: "autosave") == [1])
  }

  @Test("case 9: after a download is written, a save of its state writes nothing")
  func afterDownload() throws {
    let folder = makeTemporaryDirectory()
    let store = SaveStore(directory: folder)
    var state = TestGameState.sample()
    _ = try store.save(state, codec: testCodec, slot: "autosave").wait()
    state.score.points += 5
    let bytes = SaveFileFormat.encode(try testCodec.document(for: state, summary: SaveSummary(), createdAt: 1))
    let written = try store.save(fileBytes: bytes, slot: "autosave").wait()
    let again = try store.save(state, codec: testCodec, slot: "autosave").wait()
    #expect(again.outcome == .unchanged)
    #expect(again.generation == written.generation)
    #expect(try store.generations(of: "autosave") == [2, 1])
  }
}
