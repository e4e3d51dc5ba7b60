// The asteroids game's components: classes, as an ECS game's are. Nothing here knows Stasis
// except `EntityRef`, the field type of a reference to another entity.
import Stasis
import StasisTinyECS

/// Where an entity is and where it goes, in pixels and pixels per tick.
final class Motion: TinyComponent {
  var x: Double, y: Double, dx: Double, dy: Double
  init(x: Double, y: Double, dx: Double = 0, dy: Double = 0) { (self.x, self.y, self.dx, self.dy) = (x, y, dx, dy) }
}

/// The player's ship.
final class Ship: TinyComponent, Codable {
  var heading = 0.0
  var cooldown: Int32 = 0
}

/// A live asteroid's collision radius: removed when it dies, as FirebladeECS games remove
/// `Collision`, so a dead asteroid saves none.
final class Rock: TinyComponent, Codable {
  var radius: Double
  init(radius: Double) { self.radius = radius }
}

/// Hits an entity can take.
final class Health: TinyComponent, Codable {
  var points: Int32
  init(_ points: Int32) { self.points = points }
}

/// A bullet: who fired it, what it homes on, and ticks left to live.
final class Bullet: TinyComponent, Codable {
  var shooter: EntityRef
  var target: EntityRef
  var life: Int32
  init(shooter: EntityRef, target: EntityRef, life: Int32) {
    (self.shooter, self.target, self.life) = (shooter, target, life)
  }
}

/// What is left of a dead asteroid, for a few ticks.
final class Debris: TinyComponent, Codable {
  var ticks: Int32
  init(ticks: Int32) { self.ticks = ticks }
}

/// Transient: what would be drawn, and a closure, as a real game's sprite and sound hold; never
/// saved, rebuilt on restore from the entity's saved components.
final class Sprite: TinyComponent {
  let image: String
  let onDraw: () -> Void
  init(_ image: String) { (self.image, onDraw) = (image, {}) }
}
