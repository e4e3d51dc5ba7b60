import Stasis

/// Everything the physics carries from step to step, and so everything it saves: gravity and
/// the bodies (velocities, sleep timers and contact flags included). The solver keeps no
/// cache between steps, so a restored world continues bit for bit.
public struct PhysicsState: Codable, Equatable, Sendable {
  /// Gravity, metres per second squared.
  public var gravity: Vector
  /// The dynamic circles; body 0 is the player.
  public var bodies: [Body]
  /// The contact cache: last step's impulses, sorted by pair, to warm-start the solver so
  /// stacks hold still (and fall asleep) instead of sinking and jittering.
  public var contactCache: [CachedImpulse]

  /// Creates a world state.
  public init(gravity: Vector = Vector(0, -20), bodies: [Body] = [], contactCache: [CachedImpulse] = []) {
    self.gravity = gravity
    self.bodies = bodies
    self.contactCache = contactCache
  }
}

/// One contact's impulses carried to the next step: 16 bytes, saved as raw bytes.
public struct CachedImpulse: BulkStorable, Equatable {
  /// The body.
  public var a: Int32 = 0
  /// The other body, or `-1 - n` for static shape `n` (boxes first, then segments).
  public var b: Int32 = 0
  /// Accumulated normal impulse, newton-seconds.
  public var normal: Float = 0
  /// Accumulated friction impulse, newton-seconds.
  public var tangent: Float = 0

  /// Creates an entry.
  public init() {}

  init(a: Int32, b: Int32, normal: Float, tangent: Float) {
    self.a = a
    self.b = b
    self.normal = normal
    self.tangent = tangent
  }

  /// The sort key: by `a`, then `b`.
  var key: Int64 { Int64(a) << 32 | Int64(UInt32(bitPattern: b)) }

  public static let bulkLayout = BulkLayout(
    of: CachedImpulse.self,
    [.field("a", \.a), .field("b", \.b), .field("normal", \.normal), .field("tangent", \.tangent)])
}

/// The level's static shapes: boxes and segments, never moving, never saved (the level file
/// has them).
public struct StaticGeometry: Sendable {
  public var boxes: [Box]
  public var segments: [Segment]
  public var material: Material

  /// Creates static geometry.
  public init(boxes: [Box] = [], segments: [Segment] = [], material: Material = Material()) {
    self.boxes = boxes
    self.segments = segments
    self.material = material
  }
}

/// The physics settings: fixed, not state.
public enum PhysicsSettings {
  /// The fixed time step, seconds.
  public static let timeStep: Float = 1.0 / 60.0
  /// Velocity iterations of the contact solver per step.
  public static let iterations = 8
  /// Contacts are found this far before shapes touch, and the solver lets them close the gap
  /// in one step but no further (speculative contacts): resting contacts never flicker.
  public static let speculativeMargin: Float = 0.05
  /// Penetration allowed before positions are corrected, metres.
  public static let slop: Float = 0.005
  /// Fraction of the remaining penetration corrected per step.
  public static let correction: Float = 0.2
  /// Closing speeds below this do not bounce, metres per second (kills resting jitter).
  public static let restitutionThreshold: Float = 1
  /// Speed below which a body counts as still, metres per second.
  public static let sleepSpeed: Float = 0.1
  /// Linear damping per second (air drag): a little, so marbles do not roll forever.
  public static let linearDamping: Float = 0.05
  /// Angular damping per second (rolling resistance).
  public static let angularDamping: Float = 0.8
  /// Seconds of stillness before a body sleeps.
  public static let timeToSleep: Float = 0.5
  /// An awake body moving faster than this wakes a sleeping one it touches, metres per second.
  public static let wakeSpeed: Float = 0.3
  /// Fastest a body may move: under one radius per step for the smallest body (0.2 m), so
  /// nothing tunnels through a segment. Metres per second.
  public static let maxSpeed: Float = 0.2 * 0.9 / timeStep
}

/// One contact between a body and another body or a static shape, for one step.
struct Contact {
  var a: Int32
  var b: Int32  // -1: static
  var key: Int32  // b, or -1 - n for static shape n: the contact cache's key
  var normal: Vector  // from b towards a
  var penetration: Float
  var ra: Vector
  var rb: Vector
  var normalMass: Float = 0
  var tangentMass: Float = 0
  var normalImpulse: Float = 0
  var tangentImpulse: Float = 0
  var bounce: Float = 0
  var friction: Float
  var restitution: Float
  var bAsStatic = false
  var invMassA: Float = 0
  var invMassB: Float = 0
  var invInertiaA: Float = 0
  var invInertiaB: Float = 0
}

/// Working memory reused between steps. Not state: rebuilt from the bodies every step.
public struct PhysicsScratch: Sendable {
  var contacts: [Contact] = []
  var cellOfBody: [Int32] = []
  var cellStart: [Int32] = []
  var sortedBodies: [Int32] = []

  /// Creates empty scratch space.
  public init() {}
}

extension PhysicsState {
  /// Advances the world by one fixed step of 1/60 s.
  public mutating func step(geometry: StaticGeometry, scratch: inout PhysicsScratch) {
    let dt = PhysicsSettings.timeStep
    // Integrate forces: gravity on awake bodies.
    for index in bodies.indices { bodies[index].isGrounded = false }
    // Contacts first: the wake test must see last step's velocities, not this step's gravity.
    findContacts(geometry: geometry, scratch: &scratch)
    // Integrate forces: gravity and damping on awake bodies.
    let linear = 1 / (1 + dt * PhysicsSettings.linearDamping)
    let angular = 1 / (1 + dt * PhysicsSettings.angularDamping)
    for index in bodies.indices where !bodies[index].isAsleep {
      bodies[index].vx = (bodies[index].vx + gravity.x * dt) * linear
      bodies[index].vy = (bodies[index].vy + gravity.y * dt) * linear
      bodies[index].angularVelocity *= angular
    }
    prepare(&scratch.contacts)
    for _ in 0..<PhysicsSettings.iterations { solve(&scratch.contacts) }
    storeImpulses(scratch.contacts)
    // Integrate velocities, with the speed limit that keeps bodies from tunnelling.
    let maxSpeed = PhysicsSettings.maxSpeed
    for index in bodies.indices where !bodies[index].isAsleep {
      var body = bodies[index]
      let speed = body.velocity.length
      if speed > maxSpeed { body.velocity = body.velocity * (maxSpeed / speed) }
      body.x += body.vx * dt
      body.y += body.vy * dt
      body.angle += body.angularVelocity * dt
      bodies[index] = body
    }
    correctPositions(scratch.contacts)
    updateSleep(dt)
  }

  private func inverseMass(_ index: Int32, _ contact: Contact? = nil) -> Float {
    guard index >= 0 else { return 0 }
    if let contact, contact.bAsStatic, index == contact.b { return 0 }
    let body = bodies[Int(index)]
    return body.isAsleep ? 0 : 1 / body.mass
  }

  private func inverseInertia(_ index: Int32, _ contact: Contact) -> Float {
    guard index >= 0, !(contact.bAsStatic && index == contact.b) else { return 0 }
    let body = bodies[Int(index)]
    return body.isAsleep ? 0 : 1 / body.inertia
  }

  private mutating func prepare(_ contacts: inout [Contact]) {
    for index in contacts.indices {
      var contact = contacts[index]
      let invMassA = inverseMass(contact.a, contact)
      let invMassB = inverseMass(contact.b, contact)
      let invInertiaA = inverseInertia(contact.a, contact)
      let invInertiaB = inverseInertia(contact.b, contact)
      contact.invMassA = invMassA
      contact.invMassB = invMassB
      contact.invInertiaA = invInertiaA
      contact.invInertiaB = invInertiaB
      let tangent = contact.normal.perpendicular
      let rnA = contact.ra.cross(contact.normal)
      let rnB = contact.rb.cross(contact.normal)
      let rtA = contact.ra.cross(tangent)
      let rtB = contact.rb.cross(tangent)
      let kNormal = invMassA + invMassB + invInertiaA * rnA * rnA + invInertiaB * rnB * rnB
      let kTangent = invMassA + invMassB + invInertiaA * rtA * rtA + invInertiaB * rtB * rtB
      contact.normalMass = kNormal > 0 ? 1 / kNormal : 0
      contact.tangentMass = kTangent > 0 ? 1 / kTangent : 0
      let closing = relativeVelocity(contact).dot(contact.normal)
      contact.bounce = closing < -PhysicsSettings.restitutionThreshold ? -contact.restitution * closing : 0
      if contact.penetration < 0 {
        // A gap: approaching is fine as long as it does not close the gap within this step.
        contact.bounce = contact.penetration / PhysicsSettings.timeStep
      }
      contacts[index] = contact
    }
    // Warm start, in a pass of its own: restitution above must see the velocities before any
    // cached impulse is applied, or the warm start itself would look like an impact.
    for index in contacts.indices {
      guard let cached = cachedImpulse(contacts[index].a, contacts[index].key) else { continue }
      let contact = contacts[index]
      contacts[index].normalImpulse = cached.normal
      contacts[index].tangentImpulse = cached.tangent
      let impulse = contact.normal * cached.normal + contact.normal.perpendicular * cached.tangent
      apply(impulse, to: contact.a, at: contact.ra, contact)
      if contact.b >= 0 { apply(-impulse, to: contact.b, at: contact.rb, contact) }
    }
  }

  /// Last step's impulses for a pair: a binary search of the sorted cache.
  private func cachedImpulse(_ a: Int32, _ b: Int32) -> CachedImpulse? {
    let key = CachedImpulse(a: a, b: b, normal: 0, tangent: 0).key
    var low = 0
    var high = contactCache.count
    while low < high {
      let middle = (low + high) / 2
      if contactCache[middle].key < key { low = middle + 1 } else { high = middle }
    }
    return low < contactCache.count && contactCache[low].key == key ? contactCache[low] : nil
  }

  /// Keeps this step's impulses, sorted by pair, for the next step's warm start.
  private mutating func storeImpulses(_ contacts: [Contact]) {
    contactCache.removeAll(keepingCapacity: true)
    for contact in contacts where contact.normalImpulse != 0 || contact.tangentImpulse != 0 {
      contactCache.append(
        CachedImpulse(a: contact.a, b: contact.key, normal: contact.normalImpulse, tangent: contact.tangentImpulse))
    }
    contactCache.sort { $0.key < $1.key }
  }

  private func velocity(_ index: Int32, at offset: Vector) -> Vector {
    guard index >= 0 else { return .zero }
    let body = bodies[Int(index)]
    return body.velocity + offset.perpendicular * body.angularVelocity
  }

  private func relativeVelocity(_ contact: Contact) -> Vector {
    velocity(contact.a, at: contact.ra) - (contact.bAsStatic ? .zero : velocity(contact.b, at: contact.rb))
  }

  private mutating func apply(_ impulse: Vector, to index: Int32, at offset: Vector, _ contact: Contact) {
    let invMass = inverseMass(index, contact)
    guard invMass > 0 else { return }
    let invInertia = inverseInertia(index, contact)
    bodies[Int(index)].vx += impulse.x * invMass
    bodies[Int(index)].vy += impulse.y * invMass
    bodies[Int(index)].angularVelocity += offset.cross(impulse) * invInertia
  }

  private mutating func solve(_ contacts: inout [Contact]) {
    bodies.withUnsafeMutableBufferPointer { bodies in
      contacts.withUnsafeMutableBufferPointer { contacts in
        for index in contacts.indices {
          var contact = contacts[index]
          let a = Int(contact.a)
          let b = Int(contact.b)
          let hasB = contact.b >= 0 && !contact.bAsStatic
          func relative() -> Vector {
            var v = bodies[a].velocity + contact.ra.perpendicular * bodies[a].angularVelocity
            if hasB { v = v - (bodies[b].velocity + contact.rb.perpendicular * bodies[b].angularVelocity) }
            return v
          }
          func push(_ impulse: Vector) {
            if contact.invMassA > 0 {
              bodies[a].vx += impulse.x * contact.invMassA
              bodies[a].vy += impulse.y * contact.invMassA
              bodies[a].angularVelocity += contact.ra.cross(impulse) * contact.invInertiaA
            }
            if hasB && contact.invMassB > 0 {
              bodies[b].vx -= impulse.x * contact.invMassB
              bodies[b].vy -= impulse.y * contact.invMassB
              bodies[b].angularVelocity -= contact.rb.cross(impulse) * contact.invInertiaB
            }
          }
          // Normal: push apart, never pull; the accumulated impulse is clamped, not each one.
          let vn = relative().dot(contact.normal)
          let previous = contact.normalImpulse
          contact.normalImpulse = max(previous - contact.normalMass * (vn - contact.bounce), 0)
          push(contact.normal * (contact.normalImpulse - previous))
          // Friction, within the Coulomb cone of the accumulated normal impulse.
          let tangent = contact.normal.perpendicular
          let vt = relative().dot(tangent)
          let limit = contact.friction * contact.normalImpulse
          let previousFriction = contact.tangentImpulse
          contact.tangentImpulse = min(max(previousFriction - contact.tangentMass * vt, -limit), limit)
          push(tangent * (contact.tangentImpulse - previousFriction))
          contacts[index] = contact
        }
      }
    }
  }

  /// Moves overlapping bodies apart without touching velocities, so correction adds no energy.
  private mutating func correctPositions(_ contacts: [Contact]) {
    for contact in contacts {
      let invMassA = inverseMass(contact.a, contact)
      let invMassB = inverseMass(contact.b, contact)
      let total = invMassA + invMassB
      guard total > 0 else { continue }
      // Re-measure: earlier corrections in this pass may already have separated the pair.
      var penetration = contact.penetration
      if contact.b >= 0 {
        let a = bodies[Int(contact.a)]
        let b = bodies[Int(contact.b)]
        penetration = a.radius + b.radius - (a.position - b.position).length
      }
      let amount = max(penetration - PhysicsSettings.slop, 0) * PhysicsSettings.correction / total
      guard amount > 0 else { continue }
      let push = contact.normal * amount
      if invMassA > 0 { bodies[Int(contact.a)].position = bodies[Int(contact.a)].position + push * invMassA }
      if invMassB > 0 { bodies[Int(contact.b)].position = bodies[Int(contact.b)].position - push * invMassB }
    }
  }

  private mutating func updateSleep(_ dt: Float) {
    let still = PhysicsSettings.sleepSpeed * PhysicsSettings.sleepSpeed
    for index in bodies.indices where !bodies[index].isAsleep {
      var body = bodies[index]
      let spin = body.angularVelocity * body.radius
      if body.velocity.lengthSquared < still && spin * spin < still {
        body.sleepTime += dt
        if body.sleepTime >= PhysicsSettings.timeToSleep && index != 0 {  // the player never sleeps
          body.isAsleep = true
          body.velocity = .zero
          body.angularVelocity = 0
        }
      } else {
        body.sleepTime = 0
      }
      bodies[index] = body
    }
  }

  /// Wakes a body (the player's input does, and fast neighbours do).
  public mutating func wake(_ index: Int) {
    bodies[index].isAsleep = false
    bodies[index].sleepTime = 0
  }
}
