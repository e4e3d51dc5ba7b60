import Foundation
import Stasis
import StasisTinyECS

#if canImport(Glibc)
  import Glibc
#endif

// A 100,000-entity world with three components, saved by entity, against the same data as three
// plain bulk arrays, and its snapshot on the game's thread against a `memcpy` of the
// components' bytes. The world is TinyECS's: class components, as FirebladeECS's are.

final class BenchPosition: TinyComponent {
  var x: Double, y: Double
  init(x: Double, y: Double) { (self.x, self.y) = (x, y) }
}
final class BenchVelocity: TinyComponent {
  var dx: Double, dy: Double
  init(dx: Double, dy: Double) { (self.dx, self.dy) = (dx, dy) }
}
final class BenchHealth: TinyComponent {
  var points: Int32
  init(points: Int32) { self.points = points }
}

struct BenchPair: BulkStorable {
  var a = 0.0, b = 0.0
  static let bulkLayout = BulkLayout(of: BenchPair.self, [.field("a", \.a), .field("b", \.b)])
}
struct BenchPoints: BulkStorable {
  var points: Int32 = 0
  static let bulkLayout = BulkLayout(of: BenchPoints.self, [.field("points", \.points)])
}

/// The same data as plain bulk arrays: what a game that keeps values would save.
struct BenchPlainWorld: Codable, Sendable {
  var wave = 0
  var positions: [BenchPair]
  var velocities: [BenchPair]
  var health: [BenchPoints]
}

struct BenchWorldState: Codable, Sendable {
  var wave = 0
  var world: WorldSnapshot
}

extension TinyWorld: EntityWorld {
  public func entityIDs() -> [UInt64] { entities.map { UInt64($0.id) } }
  public func spawnEntity() -> UInt64 { UInt64(createEntity().id) }
  public func despawnEntity(_ id: UInt64) { destroy(TinyEntity(UInt32(id))) }
}

extension StasisBench {
  func measureWorld(count: Int, folder: String) throws {
    let runs = 21
    var schema = WorldSchema<TinyWorld>()
    func entity(_ id: UInt64) -> TinyEntity { TinyEntity(UInt32(id)) }
    schema.register(
      "position", BenchPair.self,
      get: { world, id in world.get(BenchPosition.self, of: entity(id)).map { BenchPair(a: $0.x, b: $0.y) } },
      set: { world, id, p in world.assign(BenchPosition(x: p.a, y: p.b), to: entity(id)) })
    schema.register(
      "velocity", BenchPair.self,
      get: { world, id in world.get(BenchVelocity.self, of: entity(id)).map { BenchPair(a: $0.dx, b: $0.dy) } },
      set: { world, id, v in world.assign(BenchVelocity(dx: v.a, dy: v.b), to: entity(id)) })
    schema.register(
      "health", BenchPoints.self,
      get: { world, id in world.get(BenchHealth.self, of: entity(id)).map { BenchPoints(points: $0.points) } },
      set: { world, id, h in world.assign(BenchHealth(points: h.points), to: entity(id)) })
    let world = TinyWorld()
    let saved = SavedWorld(world, schema: schema)
    var plain = BenchPlainWorld(positions: [], velocities: [], health: [])
    for index in 0..<count {
      let id = saved.spawn()
      let value = Double(index)
      world.assign(BenchPosition(x: value, y: value * 0.5), to: entity(id))
      world.assign(BenchVelocity(dx: 1, dy: -1), to: entity(id))
      world.assign(BenchHealth(points: Int32(index % 100)), to: entity(id))
      plain.positions.append(BenchPair(a: value, b: value * 0.5))
      plain.velocities.append(BenchPair(a: 1, b: -1))
      plain.health.append(BenchPoints(points: Int32(index % 100)))
    }

    let bytes = count * (2 * MemoryLayout<BenchPair>.stride + MemoryLayout<BenchPoints>.stride)
    var destination = [UInt8](repeating: 0, count: bytes)
    let memcpyMs = median(runs: runs) {
      destination.withUnsafeMutableBytes { out in
        var offset = 0
        for array in [plain.positions, plain.velocities] {
          array.withUnsafeBytes { (out.baseAddress! + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
          offset += array.count * MemoryLayout<BenchPair>.stride
        }
        plain.health.withUnsafeBytes {
          (out.baseAddress! + offset).copyMemory(from: $0.baseAddress!, byteCount: $0.count)
        }
      }
      consume(destination)
    }
    var snapshot = WorldSnapshot()
    let snapshotMs = median(runs: runs) { snapshot = saved.snapshot() }

    let game = GameIdentity(name: "stasis-bench", build: "1", schemaVersion: 1)
    let worldCodec = SaveCodec<BenchWorldState>(game: game)
    let plainCodec = SaveCodec<BenchPlainWorld>(game: game)
    var state = BenchWorldState(world: snapshot)
    let store = SaveStore(directory: folder, generationsToKeep: 4 * runs)
    let worldSlot = try SaveSlot("world-\(count)")
    let plainSlot = try SaveSlot("plain-\(count)")
    let (worldSaveMs, plainSaveMs) = medians(
      runs: runs,
      {
        state.wave += 1
        _ = store.save(state, codec: worldCodec, slot: worldSlot).waitForResult()
      },
      {
        plain.wave += 1
        _ = store.save(plain, codec: plainCodec, slot: plainSlot).waitForResult()
      })
    let worldFile = SaveFileFormat.encode(try worldCodec.document(for: state, summary: SaveSummary(), createdAt: 0))
    let plainFile = SaveFileFormat.encode(try plainCodec.document(for: plain, summary: SaveSummary(), createdAt: 0))

    func ms(_ value: Double) -> String { String(format: "%.3f ms", value) }
    func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2f×", a / b) }
    print("| \(count) entities, 3 components (medians) | measured | against | ratio | target |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(
      "| file | \(worldFile.count) bytes | \(plainFile.count) bytes as plain bulk arrays | \(ratio(Double(worldFile.count), Double(plainFile.count))) | |"
    )
    print(
      "| durable save | \(ms(worldSaveMs)) | \(ms(plainSaveMs)) as plain bulk arrays | \(ratio(worldSaveMs, plainSaveMs)) | ≤ 1.25× |"
    )
    print(
      "| snapshot on the game's thread | \(ms(snapshotMs)) | \(ms(memcpyMs)): `memcpy` of the components' \(bytes) bytes | \(ratio(snapshotMs, memcpyMs)) | ≤ 2× |"
    )
  }
}
