import StasisDemoGame
import StasisTestSupport
import Testing

@Suite("Physics invariants")
struct PhysicsTests {
  private func run(
    _ state: inout PhysicsState, _ geometry: StaticGeometry, steps: Int, _ each: (PhysicsState) -> Void = { _ in }
  ) {
    var scratch = PhysicsScratch()
    for _ in 0..<steps {
      state.step(geometry: geometry, scratch: &scratch)
      each(state)
    }
  }

  @Test("no tunnelling at the top speed: the smallest body never crosses a thin segment or a thin box")
  func noTunnelling() {
    for wall in [
      StaticGeometry(segments: [Segment(a: Vector(5, -10), b: Vector(5, 10))]),
      StaticGeometry(boxes: [Box(minX: 5, minY: -10, maxX: 5.02, maxY: 10)]),
    ] {
      var state = PhysicsState(gravity: .zero, bodies: [Body(position: Vector(0, 0), radius: 0.2)])
      state.bodies[0].vx = 1000  // clamped to the top speed
      var crossed = false
      run(&state, wall, steps: 120) { if $0.bodies[0].x > 5 { crossed = true } }
      #expect(!crossed)
      #expect(state.bodies[0].x < 5)
    }
  }

  @Test("no energy gain: bodies bouncing in a closed box never have more kinetic energy than they started with")
  func noEnergyGain() {
    var bodies: [Body] = []
    for index in 0..<60 {
      var body = Body(position: Vector(Float(index % 10) * 1.5 + 1, Float(index / 10) * 1.5 + 1), radius: 0.4)
      body.vx = Float((index * 37) % 11) - 5
      body.vy = Float((index * 53) % 13) - 6
      bodies.append(body)
    }
    var state = PhysicsState(gravity: .zero, bodies: bodies)
    let geometry = StaticGeometry(
      boxes: [
        Box(minX: -1, minY: -1, maxX: 17, maxY: 0), Box(minX: -1, minY: 10, maxX: 17, maxY: 11),
        Box(minX: -1, minY: 0, maxX: 0, maxY: 10), Box(minX: 16, minY: 0, maxX: 17, maxY: 10),
      ], material: Material(friction: 0.3, restitution: 1))
    func energy(_ state: PhysicsState) -> Float { state.bodies.reduce(0) { $0 + $1.kineticEnergy } }
    let start = energy(state)
    var highest = start
    run(&state, geometry, steps: 600) { highest = max(highest, energy($0)) }
    #expect(highest <= start * 1.0001, "energy rose from \(start) to \(highest)")
    #expect(energy(state) < start, "friction and damping take some away")
  }

  @Test("a pile settles and sleeps, and stays put")
  func pilesSleep() {
    var bodies = [Body(position: Vector(-20, 0.5), radius: 0.5)]  // the player, far away
    for row in 0..<12 {
      for column in 0..<12 {
        bodies.append(
          Body(position: Vector(Float(column) * 0.6 + Float(row % 2) * 0.3 + 1, Float(row) * 0.6 + 0.3), radius: 0.28))
      }
    }
    var state = PhysicsState(bodies: bodies)
    let geometry = StaticGeometry(boxes: [
      Box(minX: -30, minY: -1, maxX: 30, maxY: 0), Box(minX: 0, minY: 0, maxX: 0.5, maxY: 20),
      Box(minX: 9, minY: 0, maxX: 9.5, maxY: 20),
    ])
    run(&state, geometry, steps: 900)
    let asleep = state.bodies.dropFirst().filter(\.isAsleep).count
    #expect(asleep == 144, "\(asleep) of 144 asleep")
    let before = state.bodies
    run(&state, geometry, steps: 120)
    #expect(Array(state.bodies.dropFirst()) == Array(before.dropFirst()), "sleeping bodies do not move")
    #expect(state.bodies.dropFirst().allSatisfy { $0.y > 0 && $0.x > 0.5 && $0.x < 9 }, "nothing leaked out")
  }

  @Test("a moving body wakes the sleepers it hits")
  func wakes() {
    var state = PhysicsState(bodies: [
      Body(position: Vector(-5, 0.5), radius: 0.5), Body(position: Vector(0, 0.4), radius: 0.4),
    ])
    let floor = StaticGeometry(boxes: [Box(minX: -30, minY: -1, maxX: 30, maxY: 0)])
    run(&state, floor, steps: 120)
    #expect(state.bodies[1].isAsleep)
    state.bodies[0].vx = 8
    run(&state, floor, steps: 60)
    #expect(state.bodies[1].x > 0.2, "the sleeper was pushed")
  }
}
