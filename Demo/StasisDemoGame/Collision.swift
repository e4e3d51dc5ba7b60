/// Finding contacts: a uniform grid for body pairs (rebuilt every step, iterated in body
/// order, so the contact order — and with it the result — is deterministic), and a plain
/// loop over the level's few static shapes.
extension PhysicsState {
  /// Grid cell size, metres: twice the largest radius the levels use.
  static let cellSize: Float = 1.2

  /// The grid cell of a coordinate, checked: NaN goes to cell 0 and anything beyond
  /// `Int32`'s range to its ends, so no position, however wrong, traps the broad phase.
  static func gridCoordinate(_ value: Float) -> Int32 {
    let cell = (value / cellSize).rounded(.down)
    guard !cell.isNaN else { return 0 }
    if cell >= Float(Int32.max) { return .max }
    if cell <= Float(Int32.min) { return .min }
    return Int32(cell)
  }

  mutating func findContacts(geometry: StaticGeometry, scratch: inout PhysicsScratch) {
    scratch.contacts.removeAll(keepingCapacity: true)
    let count = bodies.count
    guard count > 0 else { return }
    let tableSize = Int32(1 << max(4, (count * 2).bitWidth - (count * 2).leadingZeroBitCount))
    let mask = tableSize - 1
    func cell(_ x: Float, _ y: Float) -> (Int32, Int32) {
      (Self.gridCoordinate(x), Self.gridCoordinate(y))
    }
    func hash(_ cx: Int32, _ cy: Int32) -> Int32 {
      Int32(truncatingIfNeeded: (UInt32(bitPattern: cx) &* 73_856_093) ^ (UInt32(bitPattern: cy) &* 19_349_663)) & mask
    }
    // Counting sort of the bodies by cell hash: stable, so each bucket is in body order.
    scratch.cellOfBody.removeAll(keepingCapacity: true)
    scratch.cellStart = [Int32](repeating: 0, count: Int(tableSize) + 1)
    for body in bodies {
      let (cx, cy) = cell(body.x, body.y)
      let h = hash(cx, cy)
      scratch.cellOfBody.append(h)
      scratch.cellStart[Int(h) + 1] += 1
    }
    for index in 0..<Int(tableSize) { scratch.cellStart[index + 1] += scratch.cellStart[index] }
    scratch.sortedBodies = [Int32](repeating: 0, count: count)
    var fill = scratch.cellStart
    for index in 0..<count {
      let h = Int(scratch.cellOfBody[index])
      scratch.sortedBodies[Int(fill[h])] = Int32(index)
      fill[h] += 1
    }

    var neighbours: [Int32] = []
    neighbours.reserveCapacity(9)
    for index in 0..<count {
      let a = bodies[index]
      let (cx, cy) = cell(a.x, a.y)
      neighbours.removeAll(keepingCapacity: true)
      for dy: Int32 in -1...1 {
        for dx: Int32 in -1...1 {
          let h = hash(cx &+ dx, cy &+ dy)
          if !neighbours.contains(h) { neighbours.append(h) }
        }
      }
      for h in neighbours {
        for slot in Int(scratch.cellStart[Int(h)])..<Int(scratch.cellStart[Int(h) + 1]) {
          let other = Int(scratch.sortedBodies[slot])
          guard other > index else { continue }
          let b = bodies[other]
          if a.isAsleep && b.isAsleep { continue }
          let delta = a.position - b.position
          let reach = a.radius + b.radius
          let distanceSquared = delta.lengthSquared
          let detect = reach + PhysicsSettings.speculativeMargin
          guard distanceSquared < detect * detect else { continue }
          let distance = distanceSquared.squareRoot()
          let normal = distance > 1e-6 ? delta * (1 / distance) : Vector(0, 1)
          // Sleeping bodies wake when hit hard, and otherwise hold like static ground.
          var first = index
          var second = other
          var bAsStatic = false
          if a.isAsleep || b.isAsleep {
            let sleeper = a.isAsleep ? index : other
            let mover = a.isAsleep ? other : index
            if bodies[mover].velocity.length > PhysicsSettings.wakeSpeed {
              wake(sleeper)
            } else {
              first = mover
              second = sleeper
              bAsStatic = true
            }
          }
          let n = first == index ? normal : -normal
          if n.y > 0.5 { bodies[first].isGrounded = true }
          if n.y < -0.5 && !bAsStatic { bodies[second].isGrounded = true }
          scratch.contacts.append(
            Contact(
              a: Int32(first), b: Int32(second), key: Int32(second), normal: n, penetration: reach - distance,
              ra: -n * bodies[first].radius, rb: n * bodies[second].radius, friction: 0.4, restitution: 0.2,
              bAsStatic: bAsStatic))
        }
      }
    }

    // Bodies against the static shapes.
    let material = geometry.material
    for index in 0..<count where !bodies[index].isAsleep {
      let body = bodies[index]
      for (shape, box) in geometry.boxes.enumerated() {
        let reach = body.radius + PhysicsSettings.speculativeMargin
        guard body.x + reach > box.minX, body.x - reach < box.maxX, body.y + reach > box.minY, body.y - reach < box.maxY
        else { continue }
        let closest = box.clamp(body.position)
        var delta = body.position - closest
        var distance = delta.length
        var penetration = body.radius - distance
        if box.contains(body.position) {
          // The centre is inside: push out through the nearest face.
          let faces = [
            (body.x - box.minX, Vector(-1, 0)), (box.maxX - body.x, Vector(1, 0)),
            (body.y - box.minY, Vector(0, -1)), (box.maxY - body.y, Vector(0, 1)),
          ]
          let nearest = faces.min { $0.0 < $1.0 }!
          delta = nearest.1
          distance = 1
          penetration = body.radius + nearest.0
        }
        guard penetration > -PhysicsSettings.speculativeMargin else { continue }
        addStaticContact(
          index, shape: shape, normal: distance > 1e-6 ? delta * (1 / distance) : Vector(0, 1), penetration, material,
          &scratch)
      }
      for (number, segment) in geometry.segments.enumerated() {
        let edge = segment.b - segment.a
        let t = min(max((body.position - segment.a).dot(edge) / max(edge.lengthSquared, 1e-9), 0), 1)
        let closest = segment.a + edge * t
        let delta = body.position - closest
        let distance = delta.length
        guard distance < body.radius + PhysicsSettings.speculativeMargin else { continue }
        let normal = distance > 1e-6 ? delta * (1 / distance) : edge.perpendicular * (1 / max(edge.length, 1e-6))
        addStaticContact(
          index, shape: geometry.boxes.count + number, normal: normal, body.radius - distance, material, &scratch)
      }
    }
  }

  private mutating func addStaticContact(
    _ index: Int, shape: Int, normal: Vector, _ penetration: Float, _ material: Material,
    _ scratch: inout PhysicsScratch
  ) {
    if normal.y > 0.5 && penetration > -0.02 { bodies[index].isGrounded = true }
    scratch.contacts.append(
      Contact(
        a: Int32(index), b: -1, key: Int32(-1 - shape), normal: normal, penetration: penetration,
        ra: -normal * bodies[index].radius,
        rb: .zero, friction: material.friction, restitution: material.restitution))
  }
}
