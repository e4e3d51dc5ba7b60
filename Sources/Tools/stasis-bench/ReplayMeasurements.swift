import Foundation
import Stasis
import StasisDemoGame
import StasisReplay
import StasisTesting

/// A racing game's state, the size the issue measured (3 KB): a clock and 96 cars.
struct BenchCar: BulkStorable {
  var x: Float = 0, y: Float = 0, vx: Float = 0, vy: Float = 0
  var heading: Float = 0, steer: Float = 0, throttle: Float = 0, lap: UInt32 = 0
  static let bulkLayout = BulkLayout(
    of: BenchCar.self,
    [
      .field("x", \.x), .field("y", \.y), .field("vx", \.vx), .field("vy", \.vy), .field("heading", \.heading),
      .field("steer", \.steer), .field("throttle", \.throttle), .field("lap", \.lap),
    ])
}

struct BenchRace: Codable, Sendable {
  var tick: Int64 = 0
  var cars = (0..<96).map { BenchCar(x: Float($0), y: 0, vx: 1, vy: 0.5) }

  mutating func step(_ input: BenchInput) {
    tick += 1
    cars[0].throttle = Float(input.throttle)
    for index in cars.indices {
      cars[index].x += cars[index].vx / 60
      cars[index].y += cars[index].vy / 60
    }
  }
}

struct BenchInput: BulkStorable {
  var throttle: Int8 = 0, steer: Int8 = 0, buttons: UInt16 = 0
  static let bulkLayout = BulkLayout(
    of: BenchInput.self, [.field("throttle", \.throttle), .field("steer", \.steer), .field("buttons", \.buttons)])
}

extension StasisBench {
  /// What replays cost: a tick's recording on the game's thread, the digest of a 3 KB state, and
  /// the digest of the city's 16 MB against a `memcpy` of the same bytes. Medians, one run.
  func measureReplays(folder: String) throws {
    let codec = SaveCodec<BenchRace>(game: GameIdentity(name: "bench-race", build: "1", schemaVersion: 1))
    let scope = DigestScope<BenchRace>("cars and clock") { race, hasher in
      hasher.combine(race.tick)
      hasher.combine(contentsOf: race.cars)
    }
    let race = BenchRace()
    let stateBytes = 8 + race.cars.count * MemoryLayout<BenchCar>.stride
    let hasher = StateHasher()
    let raceDigestMs =
      median(runs: 101) {
        for _ in 0..<1000 { consume(scope.digest(of: race, using: hasher)) }
      } / 1000

    // Recording: an append a tick (digests every 3,600 ticks), and an append and a digest.
    func recordingMs(digestInterval: Int) throws -> Double {
      let store = SaveStore(directory: folder + "/replays-\(digestInterval)")
      var state = BenchRace()
      let ticks = 36_000
      let recorder = try ReplayRecorder<BenchRace, BenchInput>(
        "bench", store: store, codec: codec, start: state, seed: 1, digest: scope, keyframeInterval: ticks + 1,
        digestInterval: digestInterval)
      let inputs = (0..<ticks).map { BenchInput(throttle: Int8($0 % 3), steer: 0, buttons: 0) }
      var states: [BenchRace] = []
      states.reserveCapacity(ticks)
      for input in inputs {
        state.step(input)
        states.append(state)
      }
      let clock = SystemClock()
      let start = clock.now()
      for (index, input) in inputs.enumerated() { recorder.record(input, reaching: states[index]) }
      let elapsed = (clock.now() - start).inMilliseconds
      recorder.flush()
      try recorder.waitUntilWritten()
      return elapsed / Double(ticks)
    }
    let appendMs = try recordingMs(digestInterval: 3_600)
    let appendAndDigestMs = try recordingMs(digestInterval: 1)

    // The city: 16 MB of agents, a grid and a ledger, against a memcpy of its arrays' bytes.
    let city = SyntheticCity(agents: cityAgents, side: 512, ledger: 1000, seed: 1)
    let cityScope = DigestScope<SyntheticCity>("city") { city, hasher in
      hasher.combine(contentsOf: city.agents)
      hasher.combine(contentsOf: city.grid)
      hasher.combine(count: city.ledger.count)
      for entry in city.ledger {
        hasher.combine(entry.tick)
        hasher.combine(entry.amount)
        hasher.combine(entry.memo)
      }
    }
    let cityBytes = city.agents.count * MemoryLayout<SyntheticCity.Agent>.stride + city.grid.count
    var destination = [UInt8](repeating: 0, count: cityBytes)
    let memcpyMs = median(runs: 31) {
      destination.withUnsafeMutableBytes { out in
        city.agents.withUnsafeBytes { out.copyMemory(from: $0) }
        city.grid.withUnsafeBytes {
          UnsafeMutableRawBufferPointer(rebasing: out[(cityBytes - city.grid.count)...]).copyMemory(from: $0)
        }
      }
      consume(destination)
    }
    let cityDigestMs = median(runs: 31) { consume(cityScope.digest(of: city, using: hasher)) }

    // Keyframes as deltas: the city moving 1% of its agents a tick, a keyframe every 10 ticks;
    // each keyframe's delta against the bytes that differ between it and the one before.
    let cityCodec = SaveCodec<SyntheticCity>(game: SyntheticCity.game)
    var moving = city
    let cityRecorder = try ReplayRecorder<SyntheticCity, Int8>(
      "city", store: SaveStore(directory: folder + "/city-replay"), codec: cityCodec, start: moving, seed: 1,
      digest: cityScope, keyframeInterval: 10, digestInterval: 10)
    for tick in 0..<50 {
      moving.tick(moving: 0.01, seed: UInt64(tick))
      cityRecorder.record(0, reaching: moving)
    }
    cityRecorder.flush()
    try cityRecorder.waitUntilWritten()
    let cityReplay = try ReplayFile(contentsOf: cityRecorder.path)
    var previous = cityReplay.start
    var deltaBytes = 0
    var changedBytes = 0
    for index in cityReplay.keyframes.indices {
      let next = try cityReplay.rebuild(keyframe: index, on: previous)
      deltaBytes += cityReplay.keyframes[index].delta.count
      changedBytes += zip(previous, next).reduce(0) { $0 + ($1.0 == $1.1 ? 0 : 1) } + abs(next.count - previous.count)
      previous = next
    }

    // The demo's level 2, as the demo hashes it every step.
    var demoDigestMs: Double?
    var demoBytes = 0
    if let library = LevelLibrary.locate() {
      var engine = try Engine(library: library, level: 2, seed: 1)
      for _ in 0..<600 { engine.step(engine.autopilotInput()) }
      let state = engine.state
      demoBytes =
        state.physics.bodies.count * MemoryLayout<Body>.stride
        + state.physics.contactCache.count * MemoryLayout<CachedImpulse>.stride
      demoDigestMs =
        median(runs: 101) {
          for _ in 0..<100 { consume(GameState.replayScope.digest(of: state, using: hasher)) }
        } / 100
    }

    // The demo's ten minutes on level 2 (the autopilot playing, 36,000 steps), recorded as the
    // demo records (a keyframe every 600 steps) with a digest every step and every 60: the
    // file's bytes apart from the start and the keyframes (the manifest, inputs and digests).
    var tenMinutes: [(interval: Int, bytes: Int, inputs: Int, digests: Int)] = []
    if let library = LevelLibrary.locate() {
      for interval in [1, 60] {
        var engine = try Engine(library: library, level: 2, seed: 1)
        let recorder = try ReplayRecorder<GameState, ReplayInput>(
          "demo-\(interval)", store: SaveStore(directory: folder + "/demo-replays"),
          codec: DemoSaveFormat.codec(levels: library), start: engine.state, seed: 1, digest: GameState.replayScope,
          keyframeInterval: 600, digestInterval: interval)
        for _ in 0..<36_000 {
          let input = engine.autopilotInput()
          engine.step(input)
          recorder.record(ReplayInput(input, autopilot: true), reaching: engine.state)
        }
        recorder.flush()
        try recorder.waitUntilWritten()
        let file = try ReplayFile(contentsOf: recorder.path)
        let part = { (name: String) in file.sizes.first { $0.part == name }?.bytes ?? 0 }
        let apart = file.length - part("start") - part("keyframes")
        tenMinutes.append((interval, apart, part("inputs"), part("digests")))
      }
    }

    func ms(_ value: Double) -> String { String(format: "%.4f ms", value) }
    print("| replays (medians; \(cityAgents) agents in the city) | measured | target |")
    print("| --- | ---: | ---: |")
    print("| recording one tick's input, on the game's thread (an append) | \(ms(appendMs)) | ≤ 0.002 ms |")
    print("| recording one tick with its digest (the 3 KB state) | \(ms(appendAndDigestMs)) | reported |")
    print("| the digest of a racing-sized state (\(stateBytes) bytes) | \(ms(raceDigestMs)) | ≤ 0.01 ms |")
    if let demoDigestMs {
      print(
        "| the digest of the demo's level-2 state (\(demoBytes) bytes of bodies and contacts, and the rest) | \(ms(demoDigestMs)) | ≤ 0.05 ms |"
      )
    }
    print(
      "| keyframes of the city (1% of its agents moving a tick, one every 10 ticks): their deltas against the bytes "
        + "that changed between them | \(deltaBytes / 1024) KB for \(changedBytes / 1024) KB changed: "
        + String(format: "%.2f", Double(deltaBytes) / Double(max(1, changedBytes))) + "× | ≤ 1.2× |")
    for (interval, bytes, inputs, digests) in tenMinutes {
      let every = interval == 1 ? "a digest every step (the divergent tick exact)" : "a digest every \(interval) steps"
      print(
        "| the demo's 10 minutes (36,000 steps of level 2), \(every): manifest, inputs and digests, keyframes apart "
          + "| \(bytes / 1024) KB (inputs \(inputs / 1024) KB, zstd; digests \(digests / 1024) KB) | ≤ 16 KB |")
    }
    print(
      "| the digest of the city (\(cityBytes / 1_000_000) MB of arrays) | \(ms(cityDigestMs)): "
        + String(format: "%.2f", cityDigestMs / memcpyMs) + "× a `memcpy` of those bytes (\(ms(memcpyMs))) | ≤ 2× |")
  }
}
