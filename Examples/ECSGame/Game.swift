// The asteroids game on TinyECS: a ship that turns and fires homing bullets at the nearest
// asteroid, asteroids that spawn and die, debris that fades. Its systems iterate in save order
// where the order decides the outcome, so a restored world plays exactly as the original.
import Foundation
import Stasis
import StasisTinyECS

/// One tick's input: turn left (-1), right (1) or not, and fire.
struct ShipInput: BulkStorable, Equatable {
  var turn: Int8 = 0
  var fire = false
  static let bulkLayout = BulkLayout(of: ShipInput.self, [.field("turn", \.turn), .field("fire", \.fire)])

  /// The autopilot's input at `tick` of a run with `seed`: a pure function, so a replay and a
  /// resumed run press the same keys.
  static func autopilot(seed: UInt64, tick: Int64) -> ShipInput {
    var z = seed &+ UInt64(bitPattern: tick) &* 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    z ^= z >> 31
    return ShipInput(turn: Int8(Int(z % 3) - 1), fire: (z >> 8) % 4 == 0)
  }
}

/// What a save holds: the run's seed and counters, and the world by entity.
struct AsteroidsState: Codable, Sendable {
  var seed: UInt64
  var tick: Int64
  var random: UInt64
  var score: Int64
  var world: WorldSnapshot
}

/// The playfield, in pixels.
let fieldWidth = 640.0
let fieldHeight = 360.0

/// The image of an entity's sprite, from its saved components: how a restore rebuilds it.
func spriteImage(_ world: TinyWorld, _ entity: TinyEntity) -> String {
  if world.get(Ship.self, of: entity) != nil { return "ship" }
  if world.get(Bullet.self, of: entity) != nil { return "bullet" }
  if world.get(Debris.self, of: entity) != nil { return "debris" }
  return "rock"
}

@MainActor
final class AsteroidsGame {
  let world = TinyWorld()
  let saved: SavedWorld<TinyWorld>
  private(set) var seed: UInt64
  private(set) var tick: Int64 = 0
  private(set) var score: Int64 = 0
  private var random: UInt64
  var isPaused = false
  /// A planted one-ulp drift of the ship's x at this tick (`--desync-at`).
  var desyncAt: Int64?

  init(seed: UInt64) {
    self.seed = seed
    random = seed | 1
    saved = SavedWorld(world, schema: asteroidsSchema)
    let ship = spawn()
    world.assign(Motion(x: fieldWidth / 2, y: fieldHeight / 2), to: ship)
    world.assign(Ship(), to: ship)
    world.assign(Health(5), to: ship)
    world.assign(Sprite("ship"), to: ship)
  }

  var state: AsteroidsState {
    AsteroidsState(seed: seed, tick: tick, random: random, score: score, world: saved.snapshot())
  }

  func load(_ state: AsteroidsState) throws {
    let report = try saved.restore(state.world)
    for reference in report.danglingReferences { print("restore: \(reference)") }
    (seed, tick, random, score) = (state.seed, state.tick, state.random, state.score)
  }

  /// Plays on with another autopilot: the run is another player's from here.
  func reseed(_ seed: UInt64) { self.seed = seed }

  private func spawn() -> TinyEntity { TinyEntity(UInt32(saved.spawn())) }

  private func despawn(_ entity: TinyEntity) {
    let gone = EntityRef(entity.id)
    for (_, bullet) in world.family(Bullet.self) where bullet.target == gone { bullet.target = .none }
    saved.despawn(UInt64(entity.id))
  }

  private func next() -> Double {
    random ^= random >> 12
    random ^= random << 25
    random ^= random >> 27
    return Double((random &* 2_685_821_657_736_338_717) >> 11) / Double(UInt64(1) << 53)
  }

  /// One fixed step of 1/60 s.
  func step(_ input: ShipInput) {
    tick += 1
    // The ship turns, cools down and fires at the nearest live asteroid.
    for (entity, ship, motion) in world.family(Ship.self, Motion.self) {
      ship.heading += Double(input.turn) * 0.06
      ship.cooldown = max(0, ship.cooldown - 1)
      if tick == desyncAt { motion.x = motion.x.nextUp }
      guard input.fire, ship.cooldown == 0 else { continue }
      ship.cooldown = 6
      let rocks = saved.inSaveOrder(world.family(Rock.self, Motion.self)) { UInt64($0.0.id) }
      let nearest = rocks.min {
        hypot($0.2.x - motion.x, $0.2.y - motion.y) < hypot($1.2.x - motion.x, $1.2.y - motion.y)
      }
      let bullet = spawn()
      world.assign(
        Motion(x: motion.x, y: motion.y, dx: 4 * cos(ship.heading), dy: 4 * sin(ship.heading)), to: bullet)
      world.assign(
        Bullet(shooter: EntityRef(entity.id), target: nearest.map { EntityRef($0.0.id) } ?? .none, life: 90), to: bullet
      )
      world.assign(Sprite("bullet"), to: bullet)
    }
    // An asteroid every 25 ticks, from the edge.
    if tick % 25 == 0 {
      let rock = spawn()
      let angle = next() * 2 * .pi
      world.assign(
        Motion(
          x: next() * fieldWidth, y: 0, dx: cos(angle) * (0.5 + next()), dy: sin(angle) * (0.5 + next())), to: rock)
      world.assign(Rock(radius: 8 + 12 * next()), to: rock)
      world.assign(Health(Int32(1 + next() * 3)), to: rock)
      world.assign(Sprite("rock"), to: rock)
    }
    // Bullets home on their targets (a reference: the target's motion, wherever it is now).
    for (_, bullet, motion) in world.family(Bullet.self, Motion.self) {
      guard let id = bullet.target.id, let target = world.get(Motion.self, of: TinyEntity(UInt32(id))) else { continue }
      let (ax, ay) = (target.x - motion.x, target.y - motion.y)
      let length = max(hypot(ax, ay), 1)
      motion.dx = 0.9 * motion.dx + 0.4 * ax / length
      motion.dy = 0.9 * motion.dy + 0.4 * ay / length
    }
    for (_, motion) in world.family(Motion.self) {
      motion.x += motion.dx
      motion.y += motion.dy
      if motion.x < 0 { motion.x += fieldWidth } else if motion.x >= fieldWidth { motion.x -= fieldWidth }
      if motion.y < 0 { motion.y += fieldHeight } else if motion.y >= fieldHeight { motion.y -= fieldHeight }
    }
    // Hits, in save order: which bullet takes which asteroid depends on the order.
    var gone: [TinyEntity] = []
    let rocks = saved.inSaveOrder(world.family(Rock.self, Motion.self)) { UInt64($0.0.id) }
    for (bulletEntity, bullet, motion) in saved.inSaveOrder(
      world.family(Bullet.self, Motion.self), id: { UInt64($0.0.id) })
    {
      bullet.life -= 1
      for (rockEntity, rock, rockMotion) in rocks where world.get(Rock.self, of: rockEntity) != nil {
        guard hypot(rockMotion.x - motion.x, rockMotion.y - motion.y) < rock.radius else { continue }
        bullet.life = 0
        if let health = world.get(Health.self, of: rockEntity) {
          health.points -= 1
          if health.points <= 0 {  // dies: no collision radius, no health; debris for a while
            world.remove(Rock.self, from: rockEntity)
            world.remove(Health.self, from: rockEntity)
            world.assign(Debris(ticks: 30), to: rockEntity)
            world.assign(Sprite("debris"), to: rockEntity)
            score += 1
          }
        }
        break
      }
      if bullet.life <= 0 { gone.append(bulletEntity) }
    }
    for (entity, debris) in saved.inSaveOrder(world.family(Debris.self), id: { UInt64($0.0.id) }) {
      debris.ticks -= 1
      if debris.ticks <= 0 { gone.append(entity) }
    }
    for entity in gone { despawn(entity) }
  }
}
