import Foundation
import Stasis
import Testing

private enum Weapon: Codable, Equatable {
  case none
  case sword(damage: Int, name: String)
  case bow(arrows: UInt16, Double)
}

private struct Point: Codable, Hashable, Comparable {
  var x: Int
  var y: Int
  static func < (a: Point, b: Point) -> Bool { (a.x, a.y) < (b.x, b.y) }
}

private struct Everything: Codable, Equatable {
  var i8: Int8 = .min
  var i16: Int16 = .max
  var i32: Int32 = -123_456
  var i64: Int64 = .min
  var int: Int = .max
  var u8: UInt8 = .max
  var u16: UInt16 = 65_000
  var u32: UInt32 = .max
  var u64: UInt64 = .max
  var uint: UInt = 42
  var float: Float = -0.0
  var double: Double = .infinity
  var negativeInfinity: Float = -.infinity
  var tiny: Double = .leastNonzeroMagnitude
  var text = "héllo, 世界 🎮 \u{0}"
  var empty = ""
  var flag = true
  var maybe: Int? = nil
  var present: String? = "here"
  var nestedOptional: [Int?] = [1, nil, 3]
  var list: [String] = ["a", "b"]
  var matrix: [[Double]] = [[1, 2], [], [3]]
  var weapons: [Weapon] = [.none, .sword(damage: 5, name: "Edge"), .bow(arrows: 12, 0.5)]
  var byName: [String: Int] = ["zeta": 1, "alpha": 2, "mid": 3]
  var byNumber: [Int: String] = [10: "ten", 2: "two", -1: "minus one"]
  var byPoint: [Point: String] = [Point(x: 2, y: 1): "b", Point(x: 1, y: 5): "a"]
  var bytes: [UInt8] = [0, 255, 7]
}

private struct Holder: Codable, Equatable {
  var everything = Everything()
  var nan = NaNBox()
}

/// NaN never equals itself, so its payload is compared by bits.
private struct NaNBox: Codable, Equatable {
  var quiet = Double(nan: 0x1234, signaling: false)
  var signaling = Float(nan: 0x55, signaling: true)
  static func == (a: NaNBox, b: NaNBox) -> Bool {
    a.quiet.bitPattern == b.quiet.bitPattern && a.signaling.bitPattern == b.signaling.bitPattern
  }
}

@Suite("Codec round trips")
struct SaveCodecRoundTripTests {
  private func roundTrip<T: Codable & Sendable>(_ value: T) throws -> T {
    let codec = SaveCodec<T>(game: testGame)
    let document = try codec.document(for: value, summary: SaveSummary(), createdAt: 0)
    let bytes = SaveFileFormat.encode(document)
    let decoded = try SaveFileFormat.decode(bytes)
    #expect(decoded == document, "the file gives back the document it was made from")
    return try codec.state(from: decoded)
  }

  @Test("integers of every width, floats with NaN payloads, infinities and -0, Unicode, optionals, enums, dictionaries")
  func everything() throws {
    let value = Holder()
    let back = try roundTrip(value)
    #expect(back == value)
    #expect(back.everything.float.sign == .minus, "-0 keeps its sign")
    #expect(back.nan.quiet.bitPattern == value.nan.quiet.bitPattern)
  }

  @Test("a game-shaped state comes back equal, bodies included")
  func gameState() throws {
    let state = TestGameState.sample(bodies: 100)
    #expect(try roundTrip(state) == state)
  }

  @Test("dictionaries are written in sorted key order: the same state gives the same bytes")
  func dictionariesSorted() throws {
    var a: [String: Int] = [:]
    var b: [String: Int] = [:]
    let keys = (0..<200).map { "key\($0)" }
    for key in keys { a[key] = key.count }
    for key in keys.reversed() { b[key] = key.count }
    struct Box: Codable, Sendable {
      var map: [String: Int]
      var points: [Point: Int]
    }
    let points = Dictionary(uniqueKeysWithValues: (0..<50).map { (Point(x: $0 % 7, y: $0), $0) })
    let codec = SaveCodec<Box>(game: testGame)
    let bytesA = SaveFileFormat.encode(
      try codec.document(for: Box(map: a, points: points), summary: SaveSummary(), createdAt: 0))
    let bytesB = SaveFileFormat.encode(
      try codec.document(for: Box(map: b, points: points), summary: SaveSummary(), createdAt: 0))
    #expect(bytesA == bytesB)
    let dumped = try SaveFileFormat.decode(bytesA).tree[field: "map"]
    guard case .object(let object)? = dumped else {
      Issue.record("map is not an object")
      return
    }
    #expect(object.fields.map(\.name) == keys.sorted())
  }

  @Test("the fast path and the field-by-field path give identical values")
  func fastAndSlowPathsAgree() throws {
    let state = TestGameState.sample(bodies: 257, seed: 7)
    let codec = testCodec
    let bytes = SaveFileFormat.encode(try codec.document(for: state, summary: SaveSummary(), createdAt: 0))
    let document = try SaveFileFormat.decode(bytes)
    let fast = try codec.state(from: document)

    // The same bodies saved with a different layout (another field order, f64 positions)
    // must load field by field into the current layout.
    struct WideBody: BulkStorable {
      var id: UInt32 = 0
      var flags: UInt32 = 0
      var x: Double = 0
      var y: Double = 0
      var vx: Float = 0
      var vy: Float = 0
      var angle: Float = 0
      var spin: Float = 0
      var radius: Float = 0
      var mass: Float = 0
      static let bulkLayout = BulkLayout(
        of: WideBody.self,
        [
          .field("id", \.id), .field("flags", \.flags), .field("x", \.x), .field("y", \.y), .field("vx", \.vx),
          .field("vy", \.vy), .field("angle", \.angle), .field("spin", \.spin), .field("radius", \.radius),
          .field("mass", \.mass),
        ])
    }
    struct WidePhysics: Codable {
      var gravity: Float
      var bodies: [WideBody]
      var rngState: UInt64
    }
    struct WideState: Codable, Sendable {
      var score: TestScore
      var level: TestLevel
      var camera: TestCamera
      var physics: WidePhysics
    }
    let wide = WideState(
      score: state.score, level: state.level, camera: state.camera,
      physics: WidePhysics(
        gravity: state.physics.gravity,
        bodies: state.physics.bodies.map {
          WideBody(
            id: $0.id, flags: $0.flags, x: Double($0.x), y: Double($0.y), vx: $0.vx, vy: $0.vy, angle: $0.angle,
            spin: $0.spin, radius: $0.radius, mass: $0.mass)
        }, rngState: state.physics.rngState))
    let wideBytes = SaveFileFormat.encode(
      try SaveCodec<WideState>(game: testGame).document(for: wide, summary: SaveSummary(), createdAt: 0))
    let slow = try codec.state(from: try SaveFileFormat.decode(wideBytes))
    #expect(fast == state)
    #expect(slow == fast)

    // And bodies saved as plain Codable objects (no bulk) load into the bulk type too.
    struct PlainPhysics: Codable {
      var gravity: Float
      var bodies: [PlainBody]
      var rngState: UInt64
    }
    struct PlainBody: Codable {
      var x, y, vx, vy, angle, spin, radius, mass: Float
      var id, flags: UInt32
    }
    struct PlainState: Codable, Sendable {
      var score: TestScore
      var level: TestLevel
      var camera: TestCamera
      var physics: PlainPhysics
    }
    let plain = PlainState(
      score: state.score, level: state.level, camera: state.camera,
      physics: PlainPhysics(
        gravity: state.physics.gravity,
        bodies: state.physics.bodies.map {
          PlainBody(
            x: $0.x, y: $0.y, vx: $0.vx, vy: $0.vy, angle: $0.angle, spin: $0.spin, radius: $0.radius, mass: $0.mass,
            id: $0.id, flags: $0.flags)
        }, rngState: state.physics.rngState))
    let plainBytes = SaveFileFormat.encode(
      try SaveCodec<PlainState>(game: testGame).document(for: plain, summary: SaveSummary(), createdAt: 0))
    #expect(try codec.state(from: try SaveFileFormat.decode(plainBytes)) == state)
  }

  @Test("bulk bodies take about their raw size on disk")
  func bulkSize() throws {
    let state = TestGameState.sample(bodies: 10_000)
    let bytes = SaveFileFormat.encode(try testCodec.document(for: state, summary: SaveSummary(), createdAt: 0))
    let raw = 10_000 * MemoryLayout<TestBody>.stride
    #expect(MemoryLayout<TestBody>.stride == 40)
    #expect(Double(bytes.count) <= Double(raw) * 1.1)
  }

  @Test("a save is refused when it comes from another game")
  func otherGame() throws {
    let other = SaveCodec<TestGameState>(game: GameIdentity(name: "someone-else"))
    let bytes = SaveFileFormat.encode(try other.document(for: .sample(), summary: SaveSummary(), createdAt: 0))
    #expect(throws: SaveFileError.self) { try testCodec.state(from: try SaveFileFormat.decode(bytes)) }
  }

  @Test("a value that does not fit its field is a typeMismatch naming the section and field")
  func typeMismatchNamesField() throws {
    struct Wrong: Codable, Sendable {
      var score: [String: String]
      var level: TestLevel
      var camera: TestCamera
      var physics: TestPhysics
    }
    let state = TestGameState.sample()
    let wrong = Wrong(score: ["points": "many"], level: state.level, camera: state.camera, physics: state.physics)
    let bytes = SaveFileFormat.encode(
      try SaveCodec<Wrong>(game: testGame).document(for: wrong, summary: SaveSummary(), createdAt: 0))
    do {
      _ = try testCodec.state(from: try SaveFileFormat.decode(bytes), path: "slot.stasis")
      Issue.record("decoded a string as a number")
    } catch {
      #expect(error.kind == .typeMismatch)
      #expect(error.context.part == "score")
      #expect(error.context.field == "points")
      #expect(error.description.hasPrefix("slot.stasis: type mismatch in section 'score', field 'points'"))
    }
  }

  @Test("CRC32C matches the standard check value and the hardware path matches the table")
  func crc() {
    #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
    var generator = SystemRandomNumberGenerator()
    let data = (0..<50_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
    // Split anywhere, the running CRC equals the one-shot CRC (covers the 3-stream path).
    let whole = CRC32C.checksum(data)
    for split in [0, 1, 7, 4096, 12_289, 49_999] {
      let first = CRC32C.checksum(data[0..<split])
      #expect(CRC32C.checksum(data[split...], continuing: first) == whole)
    }
  }
}
