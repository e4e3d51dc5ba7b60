import Stasis
import StasisTesting

/// A game-shaped state for the store's tests: a score, a level with progress, a 2D camera
/// and an array of physics bodies.
struct TestBody: BulkStorable, Equatable {
  var x: Float = 0
  var y: Float = 0
  var vx: Float = 0
  var vy: Float = 0
  var angle: Float = 0
  var spin: Float = 0
  var radius: Float = 0.5
  var mass: Float = 1
  var id: UInt32 = 0
  var flags: UInt32 = 0

  static let bulkLayout = BulkLayout(
    of: TestBody.self,
    [
      .field("x", \.x), .field("y", \.y), .field("vx", \.vx), .field("vy", \.vy), .field("angle", \.angle),
      .field("spin", \.spin), .field("radius", \.radius), .field("mass", \.mass), .field("id", \.id),
      .field("flags", \.flags),
    ])
}

struct TestScore: Codable, Equatable {
  var points: Int64 = 0
  var combo: Double = 1
  var best: Int64 = 0
}

struct TestLevel: Codable, Equatable {
  var index: Int = 1
  var progress: Double = 0
  var checkpoints: [Int32] = []
}

struct TestCamera: Codable, Equatable {
  var x: Double = 0
  var y: Double = 0
  var zoom: Double = 1
}

struct TestPhysics: Codable, Equatable {
  var gravity: Float = -9.8
  var bodies: [TestBody] = []
  var rngState: UInt64 = 0x9E37_79B9_7F4A_7C15
}

struct TestGameState: Codable, Equatable, Sendable {
  var score = TestScore()
  var level = TestLevel()
  var camera = TestCamera()
  var physics = TestPhysics()

  static func sample(bodies: Int = 4, seed: UInt32 = 1) -> TestGameState {
    var state = TestGameState()
    state.score = TestScore(points: 1234, combo: 2.5, best: 9000)
    state.level = TestLevel(index: 2, progress: 0.375, checkpoints: [1, 3])
    state.camera = TestCamera(x: 10.5, y: -3.25, zoom: 1.5)
    state.physics.bodies = (0..<UInt32(bodies)).map { index in
      let value = Float(index &+ seed)
      return TestBody(
        x: value, y: value * 2, vx: -value, vy: 0.5, angle: 0.1 * value, spin: 0, radius: 0.5, mass: 1 + value,
        id: index, flags: index % 3)
    }
    return state
  }

  var summary: SaveSummary {
    try! SaveSummary(TestSummary(level: level.index, score: score.points), frame: 720, playTime: 12.5, progress: 0.25)
  }
}

/// The test game's own summary fields.
struct TestSummary: Codable, Equatable {
  var level: Int
  var score: Int64
}

let testGame = GameIdentity(name: "stasis-tests", build: "test", schemaVersion: 1)
let testCodec = SaveCodec<TestGameState>(game: testGame)

/// A fresh temporary folder for one test, removed with the others when the test process exits
/// (`TemporaryFolder.untilExit`).
func makeTemporaryDirectory() -> String {
  try! TemporaryFolder.untilExit(prefix: "stasis-tests")
}

#if canImport(Glibc)
  import Glibc
#endif
