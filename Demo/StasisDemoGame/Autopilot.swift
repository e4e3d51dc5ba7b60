/// A seeded player for headless runs and tests: heads for the nearest collectible ahead, then
/// the goal, and jumps when the target is above, when stuck, or now and then at random. Its
/// state is part of the game state, so a resumed autopilot plays on exactly as before.
extension Engine {
  /// The autopilot's input for the next step (advancing its generator).
  public mutating func autopilotInput() -> Input {
    var pilot = state.autopilot
    guard let player = state.physics.bodies.first else { return Input() }
    var target = Vector((level.goal.minX + level.goal.maxX) / 2, level.goal.minY + 0.5)
    var best = Float.infinity
    for (index, item) in level.collectibles.enumerated()
    where index < state.level.collected.count && !state.level.collected[index] {
      let dx = item.x - player.x
      guard dx > -1.5, dx < best else { continue }
      best = dx
      target = Vector(item.x, item.y)
    }
    let dx = target.x - player.x
    var input = Input(left: dx < -0.3, right: dx > 0.3)
    pilot.stuckFrames = abs(player.x - pilot.lastX) < 0.01 ? pilot.stuckFrames &+ 1 : 0
    pilot.lastX = player.x
    let roll = Self.next(&pilot.random) % 90
    if pilot.jumpCooldown > 0 {
      pilot.jumpCooldown &-= 1
    } else if player.isGrounded && ((target.y > player.y + 1 && abs(dx) < 4) || pilot.stuckFrames > 20 || roll == 0) {
      input.jump = true
      pilot.jumpCooldown = 20
    }
    withState { $0.autopilot = pilot }
    return input
  }

  /// xorshift64*: small, fast and the same everywhere.
  static func next(_ state: inout UInt64) -> UInt64 {
    state ^= state >> 12
    state ^= state << 25
    state ^= state >> 27
    return state &* 2_685_821_657_736_338_717
  }
}
