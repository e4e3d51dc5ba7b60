// The rules: a tank drives in circles and fires; bullets fly and expire. Deterministic: the
// only randomness is the xorshift state kept in `TanksState`.

final class TanksGame {
  var state = TanksState()
  var isPaused = false

  /// One fixed step of 1/60 s.
  func step() {
    state.frame += 1
    state.random ^= state.random << 13
    state.random ^= state.random >> 7
    state.random ^= state.random << 17
    state.tank.heading += 0.02
    state.tank.x += cos(state.tank.heading) * 0.1
    state.tank.y += sin(state.tank.heading) * 0.1
    if state.frame % 3 == 0, state.bullets.count < 2_000, state.inventory["shells", default: 0] > 0 {
      let spread = Float(state.random % 100) / 1000
      let angle = Float(state.tank.heading) + spread
      state.bullets.append(Bullet(x: Float(state.tank.x), y: Float(state.tank.y), dx: cos(angle), dy: sin(angle)))
      state.inventory["shells", default: 0] -= state.frame % 30 == 0 ? 1 : 0
    }
    for index in state.bullets.indices {
      state.bullets[index].x += state.bullets[index].dx
      state.bullets[index].y += state.bullets[index].dy
      state.bullets[index].age += 1
    }
    state.bullets.removeAll { $0.age > 600 }
  }

  /// A digest of the whole state, to compare runs.
  var digest: String {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    func mix(_ value: UInt64) { hash = (hash ^ value) &* 0x100_0000_01B3 }
    mix(UInt64(bitPattern: state.frame))
    mix(state.tank.x.bitPattern)
    mix(state.tank.y.bitPattern)
    mix(state.random)
    for bullet in state.bullets { mix(UInt64(bullet.x.bitPattern) << 32 | UInt64(bullet.y.bitPattern)) }
    for (item, count) in state.inventory.sorted(by: { $0.key < $1.key }) {
      mix(UInt64(item.utf8.count))
      mix(UInt64(bitPattern: Int64(count)))
    }
    return String(hash, radix: 16)
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif
