import Foundation
import Stasis
import StasisReplay
import StasisTestSupport
import Testing

/// `stasis replay info` and `stasis replay diff`, run as a user runs them, on a replay and a
/// bundle a game made: the CLI has none of its code.
@Suite("stasis replay")
struct CLIReplayTests {
  struct Ball: BulkStorable, Equatable {
    var x: Float = 0
    var v: Float = 0
    static let bulkLayout = BulkLayout(of: Ball.self, [.field("x", \.x), .field("v", \.v)])
  }

  struct Table: Codable, Sendable, Equatable {
    var tick: Int64 = 0
    var balls: [Ball] = (0..<4).map { Ball(x: Float($0), v: 0.5) }
    var score: Int64 = 0

    mutating func step(_ kick: Int8, drift: Int64? = nil) {
      tick += 1
      for index in balls.indices {
        balls[index].v += Float(kick) * 0.01
        balls[index].x += balls[index].v / 60
      }
      score += Int64(kick)
      if tick == drift { balls[2].v = balls[2].v.nextUp }
    }
  }

  static let codec = SaveCodec<Table>(game: GameIdentity(name: "pinball", build: "2.0", schemaVersion: 3))
  static let scope = DigestScope<Table>("balls and score") { table, hasher in
    hasher.combine(table.tick)
    hasher.combine(table.score)
    hasher.combine(contentsOf: table.balls)
  }

  /// A replay of 240 ticks (keyframes every 60, a digest each tick) and the bundle of a drift at 120.
  static func fixture() throws -> (folder: URL, replay: String, bundle: String) {
    let folder = try temporaryFolder()
    let store = SaveStore(directory: folder.appendingPathComponent("Saves").path)
    var table = Table()
    let recorder = try ReplayRecorder<Table, Int8>(
      "run", store: store, codec: codec, start: table, seed: 42, digest: scope, keyframeInterval: 60)
    for tick in 0..<240 {
      let kick = Int8(tick % 7 == 0 ? 1 : 0)
      table.step(kick)
      recorder.record(kick, reaching: table)
    }
    recorder.flush()
    try recorder.waitUntilWritten()
    let verifier = ReplayVerifier(codec: codec, digest: scope) { (table: inout Table, kick: Int8) in
      table.step(kick, drift: 120)
    }
    let bundle = try #require(try verifier.verify(ReplayFile(contentsOf: recorder.path)).divergence)
    let bundlePath = try bundle.write(named: "run", to: store)
    return (folder, recorder.path, bundlePath)
  }

  @Test("info: the manifest, ticks, keyframes, digests and size by part; exit 0")
  func info() throws {
    let (folder, replay, _) = try Self.fixture()
    let result = try run("stasis", ["replay", "info", replay], in: folder)
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.contains("game: pinball (build 2.0, schema 3)"))
    #expect(lines.contains("seed: 42"))
    #expect(lines.contains("ticks: 240, from 0 to 240 (4 s)"))
    #expect(lines.contains("inputs: tree"))
    #expect(lines.contains { $0.hasPrefix("  zstd: ") && $0.contains(" bytes of inputs stored in ") })
    #expect(lines.contains("keyframes: 5, every 60 ticks (the start and 60, 120, 180, 240)"))
    #expect(lines.contains("digests: 240, every tick, over 'balls and score'"))
    for part in ["replay", "start", "inputs", "keyframes", "digests"] {
      #expect(lines.contains { $0.hasPrefix("  \(part): ") && $0.hasSuffix(" bytes") }, "\(part)")
    }
  }

  @Test("diff: the first divergence and the field that differs, as stasis diff prints it; exit 1")
  func diff() throws {
    let (folder, _, bundle) = try Self.fixture()
    #expect(bundle.hasSuffix("/Saves/replays/run.desync.stasis"))
    let result = try run("stasis", ["replay", "diff", bundle], in: folder)
    #expect(result.status == 1, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first == "first divergence at tick 120")
    #expect(lines.contains("inputs from the keyframe at tick 60"))
    #expect(lines.contains("recorded → replayed at tick 120:"))
    #expect(lines.contains { $0.hasPrefix("balls: 1 of 4 elements differ") }, "\(result.stdout)")
    #expect(!lines.contains { $0.hasPrefix("score") }, "only the drifted field")
  }

  @Test("a replay that is not whole names the part and exits 1; a missing file exits 74")
  func refusals() throws {
    let (folder, replay, bundle) = try Self.fixture()
    let info = try run("stasis", ["replay", "info", bundle], in: folder)
    #expect(info.status == 1)
    #expect(info.stderr.contains("is not a replay: it has no 'replay' section"), "\(info.stderr)")
    let diff = try run("stasis", ["replay", "diff", replay], in: folder)
    #expect(diff.status == 1)
    #expect(diff.stderr.contains("is not a desync bundle"), "\(diff.stderr)")
    let missing = try run("stasis", ["replay", "info", "nothing.stasis"], in: folder)
    #expect(missing.status == 74)
    #expect(missing.stderr.split(separator: "\n").count == 1, "one line: \(missing.stderr)")
  }
}
