import Foundation
import Stasis
import StasisTesting
import Testing

/// CRC32C bit by bit, from its definition: the reference every fast path is checked against.
private func referenceCRC32C(_ bytes: some Sequence<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
  var state = ~crc
  for byte in bytes {
    state ^= UInt32(byte)
    for _ in 0..<8 { state = (state >> 1) ^ (0x82F6_3B78 & (0 &- (state & 1))) }
  }
  return ~state
}

/// The checksum's three paths (carry-less folding for 256 bytes and more where the CPU has
/// VPCLMULQDQ, the CRC instruction in three streams, and the copy that checksums) against the
/// definition, and the encoder's reused buffer. Serialized: the tests switch the folding path.
@Suite(.serialized) struct ChecksumTests {
  /// Random bytes, the same in every run.
  private static let data: [UInt8] = SyntheticCity(agents: 0, side: 142, ledger: 0, seed: 7).grid  // 20,164 bytes

  /// Lengths around every boundary the paths have: 8-byte words, 256-byte fold steps, three
  /// 4 KiB streams.
  private static let lengths = Array(0...600) + [1023, 1024, 1025, 4095, 4096, 12_287, 12_288, 12_289, 12_544, 19_990]

  @Test(
    "every path equals the definition at every length and alignment, from any running CRC", arguments: [true, false])
  func checksumPaths(folding: Bool) {
    Self.data.withUnsafeBytes { all in
      for length in Self.lengths {
        for offset in [0, 1, 3, 8, 13] where offset + length <= all.count {
          let bytes = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
          let running = UInt32(truncatingIfNeeded: length &* 0x9E37_79B9)
          let expected = referenceCRC32C(bytes, continuing: running)
          #expect(
            CRC32C.checksum(bytes, continuing: running, folding: folding) == expected, "length \(length) at \(offset)")
          var copy = [UInt8](repeating: 0xAA, count: length + 2)
          let copied = copy.withUnsafeMutableBytes {
            CRC32C.copy(bytes, to: $0.baseAddress! + 1, continuing: running, folding: folding)
          }
          #expect(copied == expected, "copy of length \(length) at \(offset)")
          #expect(Array(copy[1..<(length + 1)]) == Array(bytes), "the bytes copied, length \(length)")
          #expect(copy.first == 0xAA && copy.last == 0xAA, "nothing written around the copy, length \(length)")
        }
      }
    }
  }

  @Test("the standard check value, on both paths")
  func checkValue() {
    for folding in [true, false] {
      let checksum = { (bytes: [UInt8]) in bytes.withUnsafeBytes { CRC32C.checksum($0, folding: folding) } }
      #expect(checksum(Array("123456789".utf8)) == 0xE306_9283)
      // 32 bytes of zeros and of ones: RFC 3720's iSCSI test vectors.
      #expect(checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
      #expect(checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
      let large = [UInt8](repeating: 0, count: 1 << 20)
      #expect(checksum(large) == referenceCRC32C(large))
    }
  }

  @Test("a file encoded into a reused buffer, larger or smaller before, equals a fresh encoding")
  func reusedBuffer() throws {
    let small = SyntheticCity(agents: 100, side: 8, ledger: 5, seed: 1)
    let large = SyntheticCity(agents: 5_000, side: 64, ledger: 200, seed: 2)
    let codec = SaveCodec<SyntheticCity>(game: SyntheticCity.game)
    var buffer: [UInt8] = []
    var pieces: [UInt8] = []
    for city in [large, small, small, large, small] {
      let document = try codec.document(for: city, summary: SaveSummary(frame: 3), createdAt: 5)
      let fresh = SaveFileFormat.encode(document)
      SaveFileFormat.encode(document, into: &buffer)
      #expect(buffer == fresh)
      #expect(try codec.state(from: SaveFileFormat.decode(buffer)) == city)
      // As the store writes it: the agents left where they are, the same bytes in the end.
      let (file, table) = SaveFileFormat.encodeFile(document, reusing: &pieces)
      #expect(file.buffer.count < fresh.count - city.agents.count * 16 + 64, "the agents are not copied")
      #expect(file.count == fresh.count)
      #expect(file.contiguous == fresh)
      let header = try fresh.withUnsafeBytes { raw throws(SaveFileError) in try SaveFileFormat.readHeader(raw) }
      #expect(table == header.sections)
      pieces = file.buffer
    }
  }

  @Test("a signed file is encoded whole, and the same as the contiguous encoding")
  func signedFileIsWhole() throws {
    let city = SyntheticCity(agents: 3_000, side: 16, ledger: 10, seed: 4)
    let codec = SaveCodec<SyntheticCity>(game: SyntheticCity.game)
    let document = try codec.document(for: city, summary: SaveSummary(), createdAt: 1)
    let key = SigningKey(bytes: [UInt8](repeating: 7, count: 32))
    var buffer: [UInt8] = []
    let (file, _) = SaveFileFormat.encodeFile(document, signingKey: key, reusing: &buffer)
    #expect(file.buffer.count == file.count)
    #expect(file.contiguous == SaveFileFormat.encode(document, signingKey: key))
  }
}
