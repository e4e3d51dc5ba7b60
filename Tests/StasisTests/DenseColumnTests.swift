import Stasis
import Testing

// An ECS of Bevy's and EnTT's shape: value components in dense arrays beside their entities'
// ids, removed by swapping with the last, saved through `register(_:_:column:set:)`.

struct Spot: BulkStorable, Equatable {
  var x = 0.0, y = 0.0
  static let bulkLayout = BulkLayout(of: Spot.self, [.field("x", \.x), .field("y", \.y)])
}

final class DenseTestWorld: EntityWorld {
  private(set) var alive: [UInt64] = []
  private var next: UInt64 = 100
  var spotIDs: [UInt32] = []  // the storage's own id type
  var spots: [Spot] = []

  func entityIDs() -> [UInt64] { alive }
  func spawnEntity() -> UInt64 {
    defer { next += 1 }
    alive.append(next)
    return next
  }
  func despawnEntity(_ id: UInt64) {
    guard let index = alive.firstIndex(of: id) else { return }
    alive.swapAt(index, alive.count - 1)
    alive.removeLast()
    removeSpot(id)
  }
  func setSpot(_ spot: Spot, _ id: UInt64) {
    if let index = spotIDs.firstIndex(of: UInt32(id)) {
      spots[index] = spot
      return
    }
    spotIDs.append(UInt32(id))
    spots.append(spot)
  }
  func removeSpot(_ id: UInt64) {
    guard let index = spotIDs.firstIndex(of: UInt32(id)) else { return }
    spotIDs.swapAt(index, spotIDs.count - 1)
    spots.swapAt(index, spots.count - 1)
    spotIDs.removeLast()
    spots.removeLast()
  }
  func spot(_ id: UInt64) -> Spot? { spotIDs.firstIndex(of: UInt32(id)).map { spots[$0] } }
}

@Suite("dense columns")
struct DenseColumnTests {
  static func dense() -> SavedWorld<DenseTestWorld> {
    var schema = WorldSchema<DenseTestWorld>()
    schema.register(
      "spot", Spot.self, column: { WorldColumn(ids: $0.spotIDs, values: $0.spots) }, set: { $0.setSpot($2, $1) })
    return SavedWorld(DenseTestWorld(), schema: schema)
  }

  static func perEntity() -> SavedWorld<DenseTestWorld> {
    var schema = WorldSchema<DenseTestWorld>()
    schema.register("spot", Spot.self, get: { $0.spot($1) }, set: { $0.setSpot($2, $1) })
    return SavedWorld(DenseTestWorld(), schema: schema)
  }

  /// Ten entities, three despawned (the storage's order is no longer identity order), one
  /// without a spot.
  static func play(_ saved: SavedWorld<DenseTestWorld>) {
    var ids: [UInt64] = []
    for index in 0..<10 {
      let id = saved.spawn()
      ids.append(id)
      if index != 4 { saved.world.setSpot(Spot(x: Double(index), y: -Double(index)), id) }
    }
    for index in [1, 2, 7] { saved.despawn(ids[index]) }
    saved.world.setSpot(Spot(x: 99, y: 99), ids[0])
  }

  @Test("a storage taken whole saves the same tree as its entities read one by one, in identity order")
  func sameTreeAsPerEntity() throws {
    let dense = Self.dense()
    let perEntity = Self.perEntity()
    Self.play(dense)
    Self.play(perEntity)
    #expect(dense.world.spotIDs != dense.world.spotIDs.sorted(), "the storage is out of identity order")
    let tree = try SaveValueEncoder().encode(dense.snapshot())
    #expect(tree == (try SaveValueEncoder().encode(perEntity.snapshot())))
    let snapshot = try WorldSnapshot(tree: tree)
    #expect(snapshot.entities.map(\.rawValue) == [1, 4, 5, 6, 7, 9, 10])
    #expect(snapshot.column("spot")?.entities.map(\.rawValue) == [1, 4, 6, 7, 9, 10], "#5 has none")
  }

  @Test("a restore gives every saved value to its entity, by identity")
  func restores() throws {
    let saved = Self.dense()
    Self.play(saved)
    let before = saved.world.alive.map { (saved.identity(of: $0)!, saved.world.spot($0)) }
    let snapshot = try WorldSnapshot(tree: try SaveValueEncoder().encode(saved.snapshot()))
    let other = Self.dense()
    _ = other.spawn()  // a live entity the restore despawns
    try other.restore(snapshot)
    let after = other.world.alive.map { (other.identity(of: $0)!, other.world.spot($0)) }
    #expect(after.map(\.0) == before.map(\.0).sorted())
    for (identity, spot) in before {
      #expect(after.first { $0.0 == identity }?.1 == spot, "\(identity)")
    }
  }

  @Test("a snapshot is the world when it was taken, though the game writes before it is encoded")
  func takenWhenTaken() throws {
    let saved = Self.dense()
    Self.play(saved)
    let expected = try SaveValueEncoder().encode(saved.snapshot())
    let snapshot = saved.snapshot()  // its column is made when first read
    saved.world.spots[0].x = -1
    saved.world.setSpot(Spot(x: 5, y: 5), saved.spawn())
    #expect(try SaveValueEncoder().encode(snapshot) == expected)
  }

  @Test("a storage that lists an entity twice fails the save, naming the component, not the game")
  func duplicateFails() {
    let saved = Self.dense()
    let id = saved.spawn()
    saved.world.spotIDs = [UInt32(id), UInt32(id)]
    saved.world.spots = [Spot(), Spot(x: 1)]
    let snapshot = saved.snapshot()
    #expect(snapshot.failure?.kind == .malformed)
    #expect(snapshot.failure?.context.field == "components.spot")
    #expect(throws: SaveFileError.self) { try SaveValueEncoder().encode(snapshot) }
  }

  @Test("consecutive identities are saved as runs, scattered ones one by one, and both read back")
  func identityRuns() throws {
    let saved = Self.dense()
    let ids = (0..<40).map { _ in saved.spawn() }
    for id in ids { saved.world.setSpot(Spot(x: 1), id) }
    let runs = try SaveValueEncoder().encode(saved.snapshot())
    #expect(runs[field: "entityRuns"] != nil && runs[field: "entities"] == nil)
    for (index, id) in ids.enumerated() where index % 2 == 1 { saved.despawn(id) }
    let scattered = try SaveValueEncoder().encode(saved.snapshot())
    #expect(scattered[field: "entities"] != nil && scattered[field: "entityRuns"] == nil)
    #expect(try WorldSnapshot(tree: runs).entities.count == 40)
    #expect(try WorldSnapshot(tree: scattered).entities.count == 20)
  }

  @Test("a run longer than a world may hold is refused, naming the field, before anything is allocated")
  func hostileRun() throws {
    let saved = Self.dense()
    for _ in 0..<8 { _ = saved.spawn() }
    var tree = try SaveValueEncoder().encode(saved.snapshot())
    struct Run: BulkStorable {
      var first: UInt64 = 0, count: UInt64 = 0
      static let bulkLayout = BulkLayout(of: Run.self, [.field("first", \.first), .field("count", \.count)])
    }
    tree[field: "entityRuns"] = .bulk(BulkArray([Run(first: 1, count: 1 << 40)]))
    tree[field: "nextIdentity"] = .uint64(1 << 41)
    #expect {
      try WorldSnapshot(tree: tree)
    } throws: { error in
      (error as? SaveFileError)?.kind == .malformed && (error as? SaveFileError)?.context.field == "entityRuns"
    }
  }
}
