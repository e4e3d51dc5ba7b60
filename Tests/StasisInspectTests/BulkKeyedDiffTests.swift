import Stasis
import StasisInspect
import StasisMerge
import Testing

/// A bullet of a shooter's bulk array: its `serial` is its identity; `x`, `y` and `ttl` change.
private struct Bullet {
  var serial: UInt32
  var x: Float
  var y: Float = 1
  var ttl: UInt16 = 30
}

/// The bullets' layout, packed: `serial` u32, `x` f32, `y` f32, `ttl` u16.
private let bulletLayout = BulkLayout(
  stride: 14,
  fields: [
    BulkField(name: "serial", type: .uint32, offset: 0), BulkField(name: "x", type: .float32, offset: 4),
    BulkField(name: "y", type: .float32, offset: 8), BulkField(name: "ttl", type: .uint16, offset: 12),
  ])

private func bulk(_ bullets: [Bullet]) -> SaveValue {
  var bytes = [UInt8](repeating: 0, count: bulletLayout.stride * bullets.count)
  bytes.withUnsafeMutableBytes { raw in
    for (index, bullet) in bullets.enumerated() {
      let base = index * bulletLayout.stride
      raw.storeBytes(of: bullet.serial.littleEndian, toByteOffset: base, as: UInt32.self)
      raw.storeBytes(of: bullet.x.bitPattern.littleEndian, toByteOffset: base + 4, as: UInt32.self)
      raw.storeBytes(of: bullet.y.bitPattern.littleEndian, toByteOffset: base + 8, as: UInt32.self)
      raw.storeBytes(of: bullet.ttl.littleEndian, toByteOffset: base + 12, as: UInt16.self)
    }
  }
  return .bulk(BulkArray(layout: bulletLayout, count: bullets.count, bytes: bytes[...]))
}

private func save(_ bullets: [Bullet]) throws -> SaveDocument {
  let document = SaveDocument(
    game: GameIdentity(name: "shooter", build: "1"), createdAt: 1_767_225_600_000, summary: SaveSummary(),
    sections: [SaveSection(name: "bullets", content: .tree(bulk(bullets)))])
  return try SaveFileFormat.decode(SaveFileFormat.encode(document))
}

/// Six bullets, serials 148 to 153, each one x apart.
private let sixBullets = (0..<6).map { Bullet(serial: 148 + UInt32($0), x: Float($0)) }

/// The next frame: bullet 148 expired, 150 moved, 157 fired; the rest shifted down one index.
private var nextFrame: [Bullet] {
  var bullets = Array(sixBullets.dropFirst())
  bullets[1].x += 0.5
  bullets.append(Bullet(serial: 157, x: 9))
  return bullets
}

@Suite("stasis diff pairs a bulk array's elements by key, as stasis merge's by-key does")
struct BulkKeyedDiffTests {
  @Test("--key serial: an expired bullet removed, a fired one added, a moved one changed; no two serials paired")
  func pairsBulkElementsByKey() throws {
    let old = try save(sixBullets)
    let new = try save(nextFrame)
    // Index by index, every element differs: the case the issue raised.
    let byIndex = SaveInspection.differences(old, new)
    #expect(byIndex.map(\.path) == ["bullets"])
    #expect(byIndex.first?.text.hasPrefix("bullets: 6 of 6 elements differ") == true)

    var warnings: [String] = []
    let byKey = SaveInspection.differences(
      old, new, alignment: DiffAlignment(keys: ["serial"]), warnings: &warnings)
    #expect(warnings.isEmpty)
    #expect(byKey.map(\.path) == ["bullets[serial=148]", "bullets[serial=150].x", "bullets[serial=157]"])
    #expect(!byKey.contains { $0.path.hasSuffix(".serial") }, "no two serials shown as one element")
    #expect(!byKey.contains { $0.text.contains("elements differ") })
    let expired = try #require(byKey.first)
    #expect(expired.old?[field: "serial"] == .uint32(148))
    #expect(expired.old?[field: "x"] == .float32(0))
    #expect(expired.new == nil)
    #expect(byKey[1].old == .float32(2) && byKey[1].new == .float32(2.5))
    let fired = try #require(byKey.last)
    #expect(fired.old == nil)
    #expect(fired.new?[field: "serial"] == .uint32(157))
    #expect(
      SaveInspection.diff(byKey) == """
        bullets[serial=148]: {4 fields} → (absent)
        bullets[serial=150].x: 2.0 → 2.5
        bullets[serial=157]: (absent) → {4 fields}
        3 differences

        """)

    // The same as a keyed array of objects: each element an object of its fields.
    let objects = { (bullets: [Bullet]) -> SaveDocument in
      guard case .bulk(let array) = bulk(bullets) else { fatalError() }
      let elements = (0..<array.count).map { SaveValue.object(array.element(at: $0)) }
      return SaveDocument(
        game: GameIdentity(name: "shooter", build: "1"), createdAt: 1_767_225_600_000, summary: SaveSummary(),
        sections: [SaveSection(name: "bullets", content: .tree(.array(elements)))])
    }
    let trees = SaveInspection.differences(
      objects(sixBullets), objects(nextFrame), alignment: DiffAlignment(keys: ["serial"]))
    #expect(trees.map(\.path) == byKey.map(\.path))
    #expect(SaveInspection.diffJSON(trees) == SaveInspection.diffJSON(byKey))
  }

  @Test("elements whose saved fields are equal are no difference, paired at any index")
  func equalElementsAnywhere() throws {
    let old = try save(sixBullets)
    let new = try save(sixBullets.reversed())
    #expect(SaveInspection.differences(old, new).first?.path == "bullets")
    #expect(SaveInspection.differences(old, new, alignment: DiffAlignment(keys: ["serial"])).isEmpty)
  }

  @Test("a serial on two bullets, or a float key: compared index by index, with a warning saying why")
  func unpairableFallsBackWithAWarning() throws {
    var twice = nextFrame
    twice[2].serial = twice[3].serial  // 151 and 152 are both 152
    var warnings: [String] = []
    let duplicate = SaveInspection.differences(
      try save(sixBullets), try save(twice), alignment: DiffAlignment(keys: ["serial"]), warnings: &warnings)
    #expect(duplicate.map(\.path) == ["bullets"])
    #expect(duplicate.first?.text.hasPrefix("bullets: 6 of 6 elements differ") == true)
    #expect(
      warnings == [
        "bullets: not paired by 'serial': serial 152 is on the new save's elements 2 and 3; compared index by index"
      ])

    warnings = []
    let float = SaveInspection.differences(
      try save(sixBullets), try save(nextFrame), alignment: DiffAlignment(keys: ["x", "serial"]),
      warnings: &warnings)
    #expect(
      warnings == [
        "bullets: not paired by 'x': it is a f32 field, and elements pair only by an integer or bool field"
      ], "then paired by the next key")
    #expect(
      float.map(\.path) == ["bullets[serial=148]", "bullets[serial=150].x", "bullets[serial=157]"], "the next key")

    warnings = []
    let absent = SaveInspection.differences(
      try save(sixBullets), try save(nextFrame), alignment: DiffAlignment(keys: ["id"]), warnings: &warnings)
    #expect(absent.map(\.path) == ["bullets"])
    #expect(warnings.isEmpty, "a layout without the field is not paired by it, in silence, as objects without it")
  }
}
