import Foundation
import Stasis
import Testing

/// A roguelike's tile map and a blob of its own, as a game writes them.
private struct TileMap: Codable, Equatable, Sendable {
  var width: Int
  var tiles: [UInt8]
  var blob: Data
}

@Suite("Byte arrays")
struct ByteArrayEncodingTests {
  @Test("[UInt8] and Data encode as the format's bytes value, not as an array of numbers")
  func encodedAsBytes() throws {
    let map = TileMap(width: 3, tiles: [0, 1, 2, 255, 7, 9], blob: Data([0xDE, 0xAD]))
    let tree = try SaveValueEncoder().encode(map)
    #expect(tree[field: "tiles"] == .bytes([0, 1, 2, 255, 7, 9]))
    #expect(tree[field: "blob"] == .bytes([0xDE, 0xAD]))
    #expect(try SaveValueEncoder().encode([UInt8]([4, 5])) == .bytes([4, 5]), "a byte array on its own too")

    // Through a file and back.
    let codec = SaveCodec<TileMap>(game: testGame)
    let document = try codec.document(for: map, summary: SaveSummary(), createdAt: 0)
    let decoded = try SaveFileFormat.decode(SaveFileFormat.encode(document))
    #expect(try codec.state(from: decoded) == map)
    // One byte a tile, where an array of numbers costs a tag and a byte each.
    let big = TileMap(width: 256, tiles: [UInt8](repeating: 3, count: 65_536), blob: Data())
    let bigBytes = SaveFileFormat.encode(try codec.document(for: big, summary: SaveSummary(), createdAt: 0))
    #expect(bigBytes.count < 65_536 + 1024)
  }

  @Test("a save that stored byte arrays as arrays of numbers (older builds) still loads")
  func olderArraysOfNumbersStillLoad() throws {
    let old: SaveValue = .object(
      SaveObject([
        ("blob", .array([.uint8(0xDE), .uint8(0xAD)])), ("tiles", .array([.uint8(1), .uint8(2), .uint8(3)])),
        ("width", .int64(3)),
      ]))
    let map = try SaveValueDecoder().decode(TileMap.self, from: old)
    #expect(map == TileMap(width: 3, tiles: [1, 2, 3], blob: Data([0xDE, 0xAD])))
  }
}
