import Foundation
import Stasis
import Testing

/// A struct Swift pads: 8 + 1 bytes of fields, stride 16.
struct Rock: BulkStorable, Equatable {
  var x: Double = 0
  var dead: UInt8 = 0
  static let bulkLayout = BulkLayout(of: Rock.self, [.field("x", \.x), .field("dead", \.dead)])
}

/// A struct whose layout leaves a stored property out.
private struct Shard: BulkStorable {
  var x: Float = 0
  var spin: Float = 0
  var id: UInt32 = 0
  static let bulkLayout = BulkLayout(of: Shard.self, [.field("x", \.x), .field("id", \.id)])
}

private struct Field: Codable, Equatable, Sendable {
  var rocks: [Rock] = []
  var wave = 1
}

/// `count` rocks whose padding holds `garbage` in every byte, as memory a process reused would.
func rocks(_ count: Int, padding garbage: UInt8) -> [Rock] {
  var rocks = [Rock](repeating: Rock(), count: count)
  rocks.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: garbage) }
  for index in rocks.indices {
    rocks[index].x = Double(index) * 1.5
    rocks[index].dead = UInt8(index % 2)
  }
  return rocks
}

@Suite("bulk arrays hold their declared fields' bytes, never padding")
struct BulkPaddingTests {
  private let codec = SaveCodec<Field>(game: GameIdentity(name: "rocks", build: "t", schemaVersion: 1))

  @Test("a padded struct's layout is packed for the file: 9 bytes an element, in declared order")
  func packedLayout() {
    #expect(MemoryLayout<Rock>.stride == 16)
    #expect(!Rock.bulkLayout.isPacked)
    let packed = Rock.bulkLayout.packed
    #expect(packed.stride == 9)
    #expect(packed.fields.map(\.name) == ["x", "dead"])
    #expect(packed.fields.map(\.offset) == [0, 8])
    #expect(TestBody.bulkLayout.isPacked && TestBody.bulkLayout.packed == TestBody.bulkLayout)
  }

  @Test("equal values whose padding differs encode to equal bytes, with none of the padding")
  func equalBytes() throws {
    let a = try SaveValueEncoder().encode(rocks(1_000, padding: 0xAB))
    let b = try SaveValueEncoder().encode(rocks(1_000, padding: 0x5C))
    guard case .bulk(let bulkA) = a, case .bulk(let bulkB) = b else {
      Issue.record("not bulk: \(a.typeName)")
      return
    }
    #expect(bulkA == bulkB)
    #expect(bulkA.layout.stride == 9)
    bulkA.withUnsafeBytes { bytes in
      #expect(bytes.count == 9_000)
      #expect(!bytes.contains(0xAB), "a padding byte reached the encoding")
    }
  }

  @Test("a second save of an equal state is unchanged, and its file holds no padding byte")
  func unchangedSecondSave() throws {
    let store = SaveStore(directory: makeTemporaryDirectory())
    let first = try store.save(Field(rocks: rocks(500, padding: 0xAB)), codec: codec, slot: "rocks").wait()
    #expect(first.outcome == .written)
    let second = try store.save(Field(rocks: rocks(500, padding: 0x5C)), codec: codec, slot: "rocks").wait()
    #expect(second.outcome == .unchanged)
    let file = try [UInt8](Data(contentsOf: URL(fileURLWithPath: first.path)))
    let poison = [UInt8](repeating: 0xAB, count: 7)
    #expect(!file.indices.dropLast(6).contains { file[$0..<$0 + 7].elementsEqual(poison) })
    let loaded = try store.load(codec: codec, slot: "rocks").state
    #expect(loaded.rocks == rocks(500, padding: 0))
  }

  @Test("a file written before packing, with padding in its layout, still loads")
  func oldPaddedFileLoads() throws {
    let old = rocks(10, padding: 0xEE)
    let raw = old.withUnsafeBytes { [UInt8]($0) }
    let bulk = BulkArray(layout: Rock.bulkLayout, count: old.count, bytes: raw[...])
    let decoded = try SaveValueDecoder().decode([Rock].self, from: .bulk(bulk))
    #expect(decoded == rocks(10, padding: 0))
    #expect(bulk.packed() == BulkArray(old), "the packed form of the old bytes is the encoder's")
  }

  @Test("a layout that leaves a stored property out names it; padding is never named")
  func leftOutProperties() {
    #expect(BulkLayout.propertiesLeftOut(of: Shard.self, layout: Shard.bulkLayout) == ["spin"])
    #expect(BulkLayout.propertiesLeftOut(of: Rock.self, layout: Rock.bulkLayout) == [])
    #expect(BulkLayout.propertiesLeftOut(of: TestBody.self, layout: TestBody.bulkLayout) == [])
  }
}
