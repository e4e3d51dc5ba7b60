// The Swift of the ReplaysAndDesyncs article (Sources/Replay/StasisReplay/StasisReplay.docc/ReplaysAndDesyncs.md),
// compiled.
import Foundation
import Stasis
import StasisCloud
import StasisReplay
import StasisTesting

// MARK: - A game's state, its input and its step

struct Car: BulkStorable {
  var x: Float = 0, y: Float = 0, speed: Float = 0, heading: Float = 0
  static let bulkLayout = BulkLayout(
    of: Car.self,
    [
      .field("x", \.x), .field("y", \.y), .field("speed", \.speed), .field("heading", \.heading),
    ])
}

struct Controls: BulkStorable {
  var throttle: Int8 = 0, steer: Int8 = 0
  static let bulkLayout = BulkLayout(of: Controls.self, [.field("throttle", \.throttle), .field("steer", \.steer)])
}

struct RaceState: Codable, Sendable {
  var tick: Int64 = 0
  var cars: [Car] = Array(repeating: Car(), count: 8)

  mutating func step(_ controls: Controls) {
    tick += 1
    cars[0].speed += Float(controls.throttle) * 0.05
    cars[0].heading += Float(controls.steer) * 0.01
    for index in cars.indices {
      cars[index].x += cars[index].speed * cos(cars[index].heading) / 60
      cars[index].y += cars[index].speed * sin(cars[index].heading) / 60
    }
  }
}

let raceCodec = SaveCodec<RaceState>(game: GameIdentity(name: "racer", build: "1.4", schemaVersion: 1))

// MARK: - What the digest covers

let scope = DigestScope<RaceState>("cars and clock, v1") { state, hasher in
  hasher.combine(state.tick)
  hasher.combine(contentsOf: state.cars)
}

// MARK: - Recording

func race(store: SaveStore, seed: UInt64, controls: [Controls]) throws -> String {
  var state = RaceState()
  let recorder = try ReplayRecorder<RaceState, Controls>(
    "race-\(seed)", store: store, codec: raceCodec, start: state, seed: seed, digest: scope,
    keyframeInterval: 600, digestInterval: 1)
  for input in controls {
    state.step(input)
    recorder.record(input, reaching: state)  // an append, and a digest
  }
  recorder.flush(keyframing: state)  // on the way to the background, and at quit
  try recorder.waitUntilWritten()
  return recorder.path
}

// MARK: - Going on after a kill

func resume(store: SaveStore, seed: UInt64, restored: RaceState) throws -> ReplayRecorder<RaceState, Controls> {
  if let recorder = try ReplayRecorder<RaceState, Controls>(
    continuing: "race-\(seed)", store: store, codec: raceCodec, digest: scope, state: restored, tick: restored.tick)
  {
    return recorder  // one replay across the kill
  }
  return try ReplayRecorder(
    "race-\(seed)-\(restored.tick)", store: store, codec: raceCodec, start: restored,
    startTick: restored.tick, seed: seed, digest: scope)
}

// MARK: - Seeking

func state(at tick: Int64, in path: String) throws -> RaceState {
  let replay = try Replay(ReplayFile(contentsOf: path), codec: raceCodec, input: Controls.self)
  var (state, _, inputs) = try replay.seek(to: tick)
  for input in inputs { state.step(input) }  // at most a keyframe interval of steps
  return state
}

// MARK: - Verifying, and the bundle

func verify(_ path: String, store: SaveStore) throws -> Bool {
  let verifier = ReplayVerifier(codec: raceCodec, digest: scope) { (state: inout RaceState, input: Controls) in
    state.step(input)
  }
  let result = try verifier.verify(ReplayFile(contentsOf: path))
  if let bundle = result.divergence {
    print(bundle.report.summary)  // first divergence at tick 2000
    for line in bundle.report.differences { print(line) }  // cars: 1 of 8 elements differ, …
    print(try bundle.write(named: "race-7", to: store))  // SAVES/replays/race-7.desync.stasis
    return false
  }
  return true
}

// MARK: - Sending a bundle to the studio

func send(_ bundle: DesyncBundle, credentials: CloudCredentials, store: SaveStore) async throws {
  let client = CloudClient(credentials: credentials)
  let sent = try await client.sendDesyncBundle(try bundle.encoded(signingKey: store.signing.current))
  print("sent as #\(sent.id): \(sent.summary)")  // the console lists it beside the player's slots
}

// MARK: - The sync test, in the game's own tests

func syncTest(inputs: [Controls]) throws {
  var state = RaceState()
  var sync = SyncTest(
    depth: 8, step: { (state: inout RaceState, input: Controls) in state.step(input) },
    digest: { scope.digest(of: $0, using: StateHasher()) })
  for input in inputs { try sync.advance(&state, with: input) }
}
