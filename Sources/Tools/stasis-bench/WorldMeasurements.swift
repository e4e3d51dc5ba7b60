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

/// One component's storage in an ECS of Bevy's and EnTT's shape: its values in one array,
/// beside the ids of the entities that have it, removed by swapping with the last.
struct DenseStorage<Value> {
  var ids: [UInt64] = []
  var values: [Value] = []
  private var slot: [UInt64: Int] = [:]  // lookup only

  mutating func set(_ value: Value, for id: UInt64) {
    if let index = slot[id] {
      values[index] = value
      return
    }
    slot[id] = ids.count
    ids.append(id)
    values.append(value)
  }

  mutating func remove(_ id: UInt64) {
    guard let index = slot.removeValue(forKey: id) else { return }
    let last = ids.count - 1
    if index != last {
      (ids[index], values[index]) = (ids[last], values[last])
      slot[ids[index]] = index
    }
    ids.removeLast()
    values.removeLast()
  }
}

/// An ECS whose components are values in dense arrays: saved through the schema's column path.
final class DenseWorld: EntityWorld {
  private(set) var alive: [UInt64] = []
  private var slot: [UInt64: Int] = [:]
  private var next: UInt64 = 0
  var positions = DenseStorage<BenchPair>()
  var velocities = DenseStorage<BenchPair>()
  var health = DenseStorage<BenchPoints>()

  func entityIDs() -> [UInt64] { alive }

  func spawnEntity() -> UInt64 {
    defer { next += 1 }
    slot[next] = alive.count
    alive.append(next)
    return next
  }

  func despawnEntity(_ id: UInt64) {
    guard let index = slot.removeValue(forKey: id) else { return }
    if index != alive.count - 1 {
      alive[index] = alive[alive.count - 1]
      slot[alive[index]] = index
    }
    alive.removeLast()
    positions.remove(id)
    velocities.remove(id)
    health.remove(id)
  }
}

extension StasisBench {
  func measureWorld(count: Int, folder: String) throws {
    let runs = 21
    // FirebladeECS's shape: class components, read entity by entity.
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
    // Bevy's and EnTT's shape: value components in dense arrays, taken whole.
    var denseSchema = WorldSchema<DenseWorld>()
    denseSchema.register(
      "position", BenchPair.self, column: { WorldColumn(ids: $0.positions.ids, values: $0.positions.values) },
      set: { $0.positions.set($2, for: $1) })
    denseSchema.register(
      "velocity", BenchPair.self, column: { WorldColumn(ids: $0.velocities.ids, values: $0.velocities.values) },
      set: { $0.velocities.set($2, for: $1) })
    denseSchema.register(
      "health", BenchPoints.self, column: { WorldColumn(ids: $0.health.ids, values: $0.health.values) },
      set: { $0.health.set($2, for: $1) })
    let dense = DenseWorld()
    let savedDense = SavedWorld(dense, schema: denseSchema)
    var plain = BenchPlainWorld(positions: [], velocities: [], health: [])
    for index in 0..<count {
      let id = saved.spawn()
      let value = Double(index)
      world.assign(BenchPosition(x: value, y: value * 0.5), to: entity(id))
      world.assign(BenchVelocity(dx: 1, dy: -1), to: entity(id))
      world.assign(BenchHealth(points: Int32(index % 100)), to: entity(id))
      let denseID = savedDense.spawn()
      dense.positions.set(BenchPair(a: value, b: value * 0.5), for: denseID)
      dense.velocities.set(BenchPair(a: 1, b: -1), for: denseID)
      dense.health.set(BenchPoints(points: Int32(index % 100)), for: denseID)
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
    // The dense world's snapshot takes its arrays without copying them: the game's next write
    // to each storage copies it, on the game's thread. Both are timed: the snapshot, then the
    // frame's first write to each component (kept for the next run's snapshot to be taken of).
    var denseSnapshots: [WorldSnapshot] = []
    var wave = 0.0
    let denseSnapshotMs = median(runs: runs) {
      denseSnapshots.append(savedDense.snapshot())
      wave += 1
      dense.positions.values[0].a = wave
      dense.velocities.values[0].a = wave
      dense.health.values[0].points = Int32(wave)
    }
    let denseSnapshot = denseSnapshots.removeLast()
    denseSnapshots.removeAll()
    // The snapshot alone, the world left as it is (nothing copied after it either).
    var kept = WorldSnapshot()
    let denseAloneMs = median(runs: runs) { kept = savedDense.snapshot() }
    consume(kept)
    // After an entity spawned and died: the identities are looked up again, entity by entity.
    let denseChangedMs = median(runs: runs) {
      savedDense.despawn(savedDense.spawn())
      kept = savedDense.snapshot()
    }
    consume(kept)

    let game = GameIdentity(name: "stasis-bench", build: "1", schemaVersion: 1)
    let worldCodec = SaveCodec<BenchWorldState>(game: game)
    let plainCodec = SaveCodec<BenchPlainWorld>(game: game)
    var state = BenchWorldState(world: snapshot)
    var denseState = BenchWorldState(world: denseSnapshot)
    let store = SaveStore(directory: folder, generationsToKeep: 4 * runs)
    let worldSlot = try SaveSlot("world-\(count)")
    let denseSlot = try SaveSlot("dense-\(count)")
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
    // The dense world saved from a fresh snapshot each time: its columns are made on the worker.
    let (denseSaveMs, plainSaveMs2) = medians(
      runs: runs,
      {
        denseState.wave += 1
        denseState.world = savedDense.snapshot()
        _ = store.save(denseState, codec: worldCodec, slot: denseSlot).waitForResult()
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
      "| durable save, class components | \(ms(worldSaveMs)) | \(ms(plainSaveMs)) as plain bulk arrays | \(ratio(worldSaveMs, plainSaveMs)) | ≤ 1.25× |"
    )
    print(
      "| durable save, dense columns (snapshot included) | \(ms(denseSaveMs)) | \(ms(plainSaveMs2)) as plain bulk arrays | \(ratio(denseSaveMs, plainSaveMs2)) | ≤ 1.25× |"
    )
    print(
      "| snapshot on the game's thread, dense columns | \(ms(denseAloneMs)) | \(ms(memcpyMs)): `memcpy` of the components' \(bytes) bytes | \(ratio(denseAloneMs, memcpyMs)) | ≤ 2× |"
    )
    print(
      "| the same, after an entity spawned and died (identities looked up again) | \(ms(denseChangedMs)) | \(ms(memcpyMs)) | \(ratio(denseChangedMs, memcpyMs)) | |"
    )
    print(
      "| the same, with the game's next write copying each storage (new memory: page faults included) | \(ms(denseSnapshotMs)) | \(ms(memcpyMs)): `memcpy` of the components' \(bytes) bytes | \(ratio(denseSnapshotMs, memcpyMs)) | |"
    )
    print(
      "| snapshot on the game's thread, class components read one by one | \(ms(snapshotMs)) | \(ms(memcpyMs)) | \(ratio(snapshotMs, memcpyMs)) | |"
    )
  }
}
