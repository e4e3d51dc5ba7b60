import Stasis
import StasisTesting
import Testing

@testable import StasisDelta

@Suite("SaveDelta: a save as its difference from another")
struct SaveDeltaTests {
  @Test("agents moved in place cost about their own bytes, and the file rebuilds byte for byte")
  func bulkEditsInPlace() throws {
    var city = SyntheticCity(agents: 100_000, side: 64, ledger: 100, seed: 1)
    let base = try city.file()
    city.tick(moving: 0.01, seed: 2)
    let target = try city.file(frame: 1)
    let delta = SaveDelta.make(from: base, to: target)
    #expect(try SaveDelta.apply(delta, to: base) == target)
    // 1,000 agents of 16 bytes moved: the bound the issue sets is 2× their bytes + 4 KiB.
    #expect(delta.count <= 2 * 1_000 * 16 + 4096, "delta of \(delta.count) bytes")
  }

  @Test("entries appended to a log in the tree cost about the entries")
  func appendToTree() throws {
    var city = SyntheticCity(agents: 1000, side: 16, ledger: 10_000, seed: 3)
    let base = try city.file()
    let before = try SaveFileFormat.decode(base).sections.first { $0.name == "ledger" }!
    for tick in 0..<100 {
      city.ledger.append(SyntheticCity.LedgerEntry(tick: 10_000 + Int64(tick), amount: 7, memo: "fine \(tick)"))
    }
    let target = try city.file()
    let after = try SaveFileFormat.decode(target).sections.first { $0.name == "ledger" }!
    let appended = try SaveFileFormat.encode(sectionOf: after).count - SaveFileFormat.encode(sectionOf: before).count
    let delta = SaveDelta.make(from: base, to: target)
    #expect(try SaveDelta.apply(delta, to: base) == target)
    #expect(delta.count <= 2 * appended + 4096, "delta of \(delta.count) bytes for \(appended) appended")
  }

  @Test("agents removed from the middle of the array shift the rest, and the delta stays small")
  func removalsShift() throws {
    var city = SyntheticCity(agents: 50_000, side: 16, ledger: 10, seed: 4)
    let base = try city.file()
    city.agents.removeSubrange(20_000..<20_100)
    city.agents.remove(at: 40_000)
    let target = try city.file()
    let delta = SaveDelta.make(from: base, to: target)
    #expect(try SaveDelta.apply(delta, to: base) == target)
    #expect(delta.count <= 4096, "delta of \(delta.count) bytes")
  }

  @Test("an unchanged save is a few dozen bytes; an unrelated one still rebuilds")
  func identicalAndUnrelated() throws {
    let base = try SyntheticCity(agents: 10_000, side: 32, ledger: 50, seed: 5).file()
    let same = SaveDelta.make(from: base, to: base)
    #expect(same.count < 128)
    #expect(try SaveDelta.apply(same, to: base) == base)
    let other = try SyntheticCity(agents: 3_000, side: 8, ledger: 5, seed: 6).file()
    #expect(try SaveDelta.apply(SaveDelta.make(from: base, to: other), to: base) == other)
    let junk: [UInt8] = Array("not a save".utf8)
    #expect(try SaveDelta.apply(SaveDelta.make(from: junk, to: base), to: junk) == base)
    #expect(try SaveDelta.apply(SaveDelta.make(from: [], to: []), to: []) == [])
  }

  @Test("applied to another base, the delta says so and builds nothing")
  func wrongBase() throws {
    var city = SyntheticCity(agents: 1000, side: 8, ledger: 5, seed: 7)
    let base = try city.file()
    city.tick(moving: 0.1, seed: 8)
    let delta = SaveDelta.make(from: base, to: try city.file())
    // Another save: its header names other sections.
    let other = try SyntheticCity(agents: 1000, side: 8, ledger: 5, seed: 70).file()
    do {
      _ = try SaveDelta.apply(delta, to: other, path: "upload 3")
      Issue.record("a delta applied to another save built a file")
    } catch {
      #expect(error.kind == .wrongBase)
      #expect(error.description.hasPrefix("upload 3: delta, at byte"))
    }
    // The same save with a byte of a section flipped (its framing intact): the file built
    // fails its own section checksums.
    var damaged = base
    damaged[damaged.count / 2] ^= 1
    do {
      _ = try SaveDelta.apply(delta, to: damaged)
      Issue.record("a delta applied to a damaged base built a file")
    } catch {
      #expect(error.kind == .resultMismatch)
    }
  }

  @Test("every truncation and every flipped byte of a delta is a typed error, never a wrong file")
  func damagedDeltas() throws {
    var city = SyntheticCity(agents: 2000, side: 8, ledger: 20, seed: 9)
    let base = try city.file()
    city.tick(moving: 0.05, seed: 10)
    city.ledger.append(SyntheticCity.LedgerEntry(tick: 99, amount: 1, memo: "new"))
    let target = try city.file()
    let delta = SaveDelta.make(from: base, to: target)
    for length in stride(from: 0, to: delta.count, by: max(1, delta.count / 300)) {
      #expect(throws: SaveDeltaError.self) { try SaveDelta.apply(Array(delta.prefix(length)), to: base) }
    }
    for index in 0..<delta.count {
      var damaged = delta
      damaged[index] ^= 0x20
      #expect(throws: SaveDeltaError.self) { try SaveDelta.apply(damaged, to: base) }
    }
  }

  @Test("a hostile delta with a valid checksum is refused by its bounds, not trusted")
  func hostileOperations() throws {
    let base = try SyntheticCity(agents: 100, side: 4, ledger: 2, seed: 11).file()
    // Copies beyond the base, runs beyond their part, unknown operations, more than announced.
    let hostile: [[UInt8]] = [
      [1, 0x80, 0x80, 0x80, 0x01, 10],  // copy from far past the base
      [3, 0, 8, 1, 6, 4, 1, 2, 3, 4],  // a run past the end of its 8-byte part
      [9],  // no such operation
      [2, 4, 1, 2, 3, 4, 2, 4, 1, 2, 3, 4],  // 8 bytes where 4 are announced
      [2, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],  // a literal longer than the delta
      [4, 0, 4, 4, 3, 1, 2, 3],  // a zstd frame that is not one
    ]
    for operations in hostile {
      let delta = SaveDelta.forged(base: base, resultLength: 4, operations: operations)
      #expect(throws: SaveDeltaError.self) { try SaveDelta.apply(delta, to: base) }
    }
    let bomb = SaveDelta.forged(base: base, resultLength: 1 << 29, operations: [2, 1, 0])
    do {
      _ = try SaveDelta.apply(bomb, to: base, limit: 16 << 20)
      Issue.record("a delta building 512 MiB was applied under a 16 MiB limit")
    } catch {
      #expect(error.kind == .limitExceeded)
    }
  }
}

extension SaveFileFormat {
  /// A section's bytes as the file stores them, for measuring what an edit adds.
  static func encode(sectionOf section: SaveSection) throws -> [UInt8] {
    let document = SaveDocument(
      game: GameIdentity(name: "x"), createdAt: 0, summary: SaveSummary(), sections: [section])
    return encode(document)
  }
}

extension SaveDelta {
  /// A delta with a valid header and checksum around `operations`, stored uncompressed.
  static func forged(base: [UInt8], resultLength: Int, operations: [UInt8]) -> [UInt8] {
    var delta = magic
    append(version, to: &delta)
    append(flagStored, to: &delta)
    append(UInt64(base.count), to: &delta)
    append(CRC32C.checksum(base), to: &delta)
    append(UInt64(resultLength), to: &delta)
    append(UInt32(0), to: &delta)
    append(UInt64(operations.count), to: &delta)
    append(UInt64(operations.count), to: &delta)
    delta += operations
    append(CRC32C.checksum(delta), to: &delta)
    return delta
  }
}
