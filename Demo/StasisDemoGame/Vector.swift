/// A 2D vector in metres (y up). Plain `Float` arithmetic, evaluated in a fixed order, so the
/// same binary gives the same bits on every run.
public struct Vector: Codable, Equatable, Sendable {
  public var x: Float
  public var y: Float

  /// Creates a vector.
  public init(_ x: Float, _ y: Float) {
    self.x = x
    self.y = y
  }

  public static let zero = Vector(0, 0)

  public static func + (a: Vector, b: Vector) -> Vector { Vector(a.x + b.x, a.y + b.y) }
  public static func - (a: Vector, b: Vector) -> Vector { Vector(a.x - b.x, a.y - b.y) }
  public static func * (a: Vector, s: Float) -> Vector { Vector(a.x * s, a.y * s) }
  public static prefix func - (a: Vector) -> Vector { Vector(-a.x, -a.y) }

  /// Dot product.
  public func dot(_ other: Vector) -> Float { x * other.x + y * other.y }
  /// 2D cross product (the z of the 3D one).
  public func cross(_ other: Vector) -> Float { x * other.y - y * other.x }
  /// Length squared.
  public var lengthSquared: Float { x * x + y * y }
  /// Length.
  public var length: Float { lengthSquared.squareRoot() }
  /// The perpendicular (rotated +90°).
  public var perpendicular: Vector { Vector(-y, x) }
}

/// An axis-aligned box in metres.
public struct Box: Codable, Equatable, Sendable {
  public var minX: Float
  public var minY: Float
  public var maxX: Float
  public var maxY: Float

  /// Creates a box.
  public init(minX: Float, minY: Float, maxX: Float, maxY: Float) {
    self.minX = minX
    self.minY = minY
    self.maxX = maxX
    self.maxY = maxY
  }

  /// True when `point` is inside or on the edge.
  public func contains(_ point: Vector) -> Bool {
    point.x >= minX && point.x <= maxX && point.y >= minY && point.y <= maxY
  }

  /// The nearest point of the box to `point`.
  public func clamp(_ point: Vector) -> Vector {
    Vector(min(max(point.x, minX), maxX), min(max(point.y, minY), maxY))
  }
}
