import Stasis

/// A dynamic circle: 40 bytes of plain data, saved as raw bytes (`BulkStorable`).
public struct Body: BulkStorable, Equatable {
  /// Position, metres.
  public var x: Float = 0
  public var y: Float = 0
  /// Velocity, metres per second.
  public var vx: Float = 0
  public var vy: Float = 0
  /// Rotation, radians.
  public var angle: Float = 0
  /// Angular velocity, radians per second.
  public var angularVelocity: Float = 0
  /// Radius, metres.
  public var radius: Float = 0.5
  /// Mass, kilograms (density 1 per square metre).
  public var mass: Float = 1
  /// Seconds the body has been nearly still; it sleeps after `PhysicsWorld.timeToSleep`.
  public var sleepTime: Float = 0
  /// Bit 0: asleep. Bit 1: touched ground facing up in the last step (for the player's jump).
  public var flags: UInt32 = 0

  /// Creates a body at rest.
  public init() {}

  /// A circle of `radius` at `position`, density 1.
  public init(position: Vector, radius: Float) {
    x = position.x
    y = position.y
    self.radius = radius
    mass = Float.pi * radius * radius
  }

  public var position: Vector {
    get { Vector(x, y) }
    set {
      x = newValue.x
      y = newValue.y
    }
  }

  public var velocity: Vector {
    get { Vector(vx, vy) }
    set {
      vx = newValue.x
      vy = newValue.y
    }
  }

  public var isAsleep: Bool {
    get { flags & 1 != 0 }
    set { flags = newValue ? flags | 1 : flags & ~1 }
  }

  public var isGrounded: Bool {
    get { flags & 2 != 0 }
    set { flags = newValue ? flags | 2 : flags & ~2 }
  }

  /// Moment of inertia of a solid disc.
  var inertia: Float { 0.5 * mass * radius * radius }

  /// Kinetic energy, joules: linear and rotational.
  public var kineticEnergy: Float {
    0.5 * mass * velocity.lengthSquared + 0.5 * inertia * angularVelocity * angularVelocity
  }

  public static let bulkLayout = BulkLayout(
    of: Body.self,
    [
      .field("x", \.x), .field("y", \.y), .field("vx", \.vx), .field("vy", \.vy), .field("angle", \.angle),
      .field("angularVelocity", \.angularVelocity), .field("radius", \.radius), .field("mass", \.mass),
      .field("sleepTime", \.sleepTime), .field("flags", \.flags),
    ])
}

/// A static line segment (a ramp, a thin wall).
public struct Segment: Codable, Equatable, Sendable {
  public var a: Vector
  public var b: Vector

  /// Creates a segment.
  public init(a: Vector, b: Vector) {
    self.a = a
    self.b = b
  }
}

/// A static shape's surface.
public struct Material: Codable, Equatable, Sendable {
  /// Coulomb friction coefficient.
  public var friction: Float = 0.6
  /// Bounciness, 0...1.
  public var restitution: Float = 0.1

  /// Creates a material.
  public init(friction: Float = 0.6, restitution: Float = 0.1) {
    self.friction = friction
    self.restitution = restitution
  }
}
