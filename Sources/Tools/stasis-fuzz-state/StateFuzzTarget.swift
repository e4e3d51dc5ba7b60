import Foundation
import Stasis
import StasisDemoGame
import StasisFuzzDriver

/// Structure-aware fuzzing of everything after the checksums: the input is a program of value
/// edits applied to the decoded tree of a real demo save (not its bytes), so every mutated
/// save is well formed with correct checksums — what a save editor writes. Each is encoded,
/// loaded through the demo's codec (decode, level check, validation), and when it loads,
/// restored into an engine, stepped 60 times and drawn. A crash, a trap or a hang is a bug;
/// so is a real save that fails to load (the validator refusing what the game wrote).
///
/// Input: byte 0 picks the seed save; then 6 bytes per edit: a `u32` leaf index (modulo the
/// number of numeric leaves, bulk fields included), a value class and a parameter.
@_cdecl("LLVMFuzzerTestOneInput")
public func stasisStateFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let data, size > 0 else { return 0 }
  let seeds = StateFuzz.seeds
  let seed = seeds[Int(data[0]) % seeds.count]
  var tree = seed.tree
  var offset = 1
  while offset + 6 <= size {
    let leaf =
      UInt32(data[offset]) | UInt32(data[offset + 1]) << 8 | UInt32(data[offset + 2]) << 16
      | UInt32(data[offset + 3]) << 24
    StateFuzz.edit(&tree, leaf: Int(leaf % UInt32(seed.leaves)), kind: data[offset + 4], parameter: data[offset + 5])
    offset += 6
  }
  StateFuzz.exercise(tree, edited: size > 1)
  return 0
}

enum StateFuzz {
  struct Seed {
    var tree: SaveValue
    var leaves: Int
  }

  static let library: LevelLibrary = {
    guard let library = LevelLibrary.locate() else { fatalError("run from the repository: Assets/levels not found") }
    return library
  }()
  static let codec = DemoSaveFormat.codec(levels: library)

  /// Real saves: levels 1 and 2 after a few seconds of autopilot, written and read back.
  static let seeds: [Seed] = [(1, 150), (2, 90), (1, 700)].map { level, frames in
    do {
      var engine = try Engine(library: library, level: level, seed: UInt64(frames))
      for _ in 0..<frames { engine.step(engine.autopilotInput()) }
      let state = engine.snapshot()
      let bytes = SaveFileFormat.encode(try codec.document(for: state, summary: SaveSummary(), createdAt: 0))
      let tree = try SaveFileFormat.decode(bytes).tree
      var count = 0
      forEachLeaf(tree) { _ in count += 1 }
      return Seed(tree: tree, leaves: max(count, 1))
    } catch {
      fatalError("the seed save of level \(level) failed: \(error)")
    }
  }

  /// Encodes, loads, restores, steps and draws; only a crash or a refused real save is a bug.
  static func exercise(_ tree: SaveValue, edited: Bool) {
    guard case .object(let sections) = tree else { return }
    let document = SaveDocument(
      game: DemoSaveFormat.game, createdAt: 0, summary: SaveSummary(),
      sections: sections.fields.map { SaveSection(name: $0.name, content: .tree($0.value)) })
    let bytes = SaveFileFormat.encode(document)
    let state: GameState
    do {
      state = try codec.state(from: try SaveFileFormat.decode(bytes))
    } catch {
      if !edited { fatalError("a real save was refused: \(error)") }
      return
    }
    guard var engine = try? Engine(library: library, level: state.level.index, seed: 1) else { return }
    do {
      try engine.restore(state)
    } catch {
      fatalError("the codec accepted a state the engine refuses: \(error)")
    }
    for _ in 0..<60 { engine.step(engine.autopilotInput()) }
    var canvas = BoundedCanvas()
    SceneDrawing(width: 320, height: 180).draw(
      engine.state, level: engine.level, camera: engine.state.camera, on: &canvas)
  }

  /// Calls `body` with each numeric leaf in a fixed order (bulk fields element by element).
  static func forEachLeaf(_ value: SaveValue, _ body: (SaveValue) -> Void) {
    switch value {
    case .object(let object): for field in object.fields { forEachLeaf(field.value, body) }
    case .array(let items): for item in items { forEachLeaf(item, body) }
    case .bulk(let bulk): for _ in 0..<(bulk.count * bulk.layout.fields.count) { body(value) }
    case .string, .bytes, .null: break
    default: body(value)
    }
  }

  /// Replaces numeric leaf `leaf` (in `forEachLeaf`'s order) with a value of class `kind`.
  static func edit(_ value: inout SaveValue, leaf: Int, kind: UInt8, parameter: UInt8) {
    var remaining = leaf
    _ = edit(&value, remaining: &remaining, kind: kind, parameter: parameter)
  }

  private static func edit(_ value: inout SaveValue, remaining: inout Int, kind: UInt8, parameter: UInt8) -> Bool {
    switch value {
    case .object(var object):
      for index in object.fields.indices
      where edit(&object.fields[index].value, remaining: &remaining, kind: kind, parameter: parameter) {
        value = .object(object)
        return true
      }
      return false
    case .array(var items):
      for index in items.indices where edit(&items[index], remaining: &remaining, kind: kind, parameter: parameter) {
        value = .array(items)
        return true
      }
      return false
    case .bulk(let bulk):
      let leaves = bulk.count * bulk.layout.fields.count
      guard remaining < leaves else {
        remaining -= leaves
        return false
      }
      let field = bulk.layout.fields[remaining % bulk.layout.fields.count]
      let element = remaining / bulk.layout.fields.count
      var bytes = bulk.withUnsafeBytes { Array($0) }
      let at = element * bulk.layout.stride + field.offset
      let scalar = bytes.withUnsafeBytes { field.type.value(from: $0, at: at) }
      let replaced = mutated(scalar, kind: kind, parameter: parameter)
      bytes.withUnsafeMutableBytes { field.type.write(replaced, into: $0, at: at) }
      value = .bulk(BulkArray(layout: bulk.layout, count: bulk.count, bytes: bytes[...]))
      return true
    case .string, .bytes, .null:
      return false
    default:
      guard remaining == 0 else {
        remaining -= 1
        return false
      }
      value = mutated(value, kind: kind, parameter: parameter)
      return true
    }
  }

  /// A hostile or a plausible value of the same type.
  static func mutated(_ value: SaveValue, kind: UInt8, parameter: UInt8) -> SaveValue {
    let small = Double(Int8(bitPattern: parameter))
    switch value {
    case .float32(let number): return .float32(Float(float(Double(number), kind: kind, small: small)))
    case .float64(let number): return .float64(float(number, kind: kind, small: small))
    case .bool(let flag): return .bool(!flag)
    case .int8(let n): return .int8(Int8(truncatingIfNeeded: integer(Int64(n), kind: kind, small: small)))
    case .int16(let n): return .int16(Int16(truncatingIfNeeded: integer(Int64(n), kind: kind, small: small)))
    case .int32(let n): return .int32(Int32(truncatingIfNeeded: integer(Int64(n), kind: kind, small: small)))
    case .int64(let n): return .int64(integer(n, kind: kind, small: small))
    case .uint8(let n): return .uint8(UInt8(truncatingIfNeeded: integer(Int64(n), kind: kind, small: small)))
    case .uint16(let n): return .uint16(UInt16(truncatingIfNeeded: integer(Int64(n), kind: kind, small: small)))
    case .uint32(let n): return .uint32(UInt32(truncatingIfNeeded: integer(Int64(n), kind: kind, small: small)))
    case .uint64(let n):
      return .uint64(UInt64(bitPattern: integer(Int64(bitPattern: n), kind: kind, small: small)))
    default: return value
    }
  }

  private static func float(_ number: Double, kind: UInt8, small: Double) -> Double {
    switch kind % 12 {
    case 0: return .nan
    case 1: return .infinity
    case 2: return -.infinity
    case 3: return 0
    case 4: return -0.0
    case 5: return 1.4e-38 * (small == 0 ? 1 : small)  // subnormal for Float
    case 6: return 1.6e33 * (small == 0 ? 1 : small)
    case 7: return -number
    case 8: return number * (1 + small / 64)  // plausible: a few percent either way
    case 9: return number + small / 16
    case 10: return small
    default: return number * 1e6
    }
  }

  private static func integer(_ number: Int64, kind: UInt8, small: Double) -> Int64 {
    switch kind % 8 {
    case 0: return .max
    case 1: return .min
    case 2: return -1
    case 3: return 0
    case 4: return number &+ Int64(small)
    case 5: return Int64(small)
    case 6: return number &* 1_000
    default: return Int64(Int32.max) &+ Int64(small)
    }
  }
}

extension ScalarType {
  /// The value at `offset` of a bulk array's bytes.
  func value(from bytes: UnsafeRawBufferPointer, at offset: Int) -> SaveValue {
    switch self {
    case .bool: return .bool(bytes[offset] != 0)
    case .int8: return .int8(Int8(bitPattern: bytes[offset]))
    case .int16: return .int16(bytes.loadUnaligned(fromByteOffset: offset, as: Int16.self))
    case .int32: return .int32(bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self))
    case .int64: return .int64(bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    case .uint8: return .uint8(bytes[offset])
    case .uint16: return .uint16(bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    case .uint32: return .uint32(bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    case .uint64: return .uint64(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    case .float32: return .float32(bytes.loadUnaligned(fromByteOffset: offset, as: Float.self))
    case .float64: return .float64(bytes.loadUnaligned(fromByteOffset: offset, as: Double.self))
    }
  }

  /// Writes `value` (of this type) at `offset`.
  func write(_ value: SaveValue, into bytes: UnsafeMutableRawBufferPointer, at offset: Int) {
    switch value {
    case .bool(let v): bytes[offset] = v ? 1 : 0
    case .int8(let v): bytes.storeBytes(of: v, toByteOffset: offset, as: Int8.self)
    case .int16(let v): bytes.storeBytes(of: v, toByteOffset: offset, as: Int16.self)
    case .int32(let v): bytes.storeBytes(of: v, toByteOffset: offset, as: Int32.self)
    case .int64(let v): bytes.storeBytes(of: v, toByteOffset: offset, as: Int64.self)
    case .uint8(let v): bytes[offset] = v
    case .uint16(let v): bytes.storeBytes(of: v, toByteOffset: offset, as: UInt16.self)
    case .uint32(let v): bytes.storeBytes(of: v, toByteOffset: offset, as: UInt32.self)
    case .uint64(let v): bytes.storeBytes(of: v, toByteOffset: offset, as: UInt64.self)
    case .float32(let v): bytes.storeBytes(of: v, toByteOffset: offset, as: Float.self)
    case .float64(let v): bytes.storeBytes(of: v, toByteOffset: offset, as: Double.self)
    default: break
    }
  }
}

/// A canvas that draws nothing and counts spans: the drawing must stay bounded by the picture.
struct BoundedCanvas: Canvas {
  var calls = 0
  mutating func setColor(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8) {}
  mutating func fillRect(x: Float, y: Float, width: Float, height: Float) { count() }
  mutating func drawLine(x1: Float, y1: Float, x2: Float, y2: Float) { count() }
  private mutating func count() {
    calls += 1
    if calls > 1_000_000 { fatalError("the drawing did not stay bounded by the picture") }
  }
}

/// Under libFuzzer, fuzzes; built normally, replays the files given.
@main
enum StateFuzzMain {
  static func main() throws {
    // The seeds are built before the first input, so their memory is not taken for a leak.
    _ = StateFuzz.seeds
    try runFuzzTarget { stasisStateFuzzOneInput($0, $1) }
  }
}
