import Foundation
import Stasis
import StasisDelta
import StasisInspect
import StasisTesting
import Testing

@testable import StasisReplay

/// A small deterministic world: motes that drift, bounce off walls and are pushed by the input.
struct Mote: BulkStorable, Equatable {
  var x: Float = 0
  var y: Float = 0
  var vx: Float = 0
  var vy: Float = 0
  static let bulkLayout = BulkLayout(
    of: Mote.self, [.field("x", \.x), .field("y", \.y), .field("vx", \.vx), .field("vy", \.vy)])
}

struct Push: BulkStorable, Equatable {
  var dx: Int8 = 0
  var dy: Int8 = 0
  static let bulkLayout = BulkLayout(of: Push.self, [.field("dx", \.dx), .field("dy", \.dy)])
}

struct World: Codable, Sendable, Equatable {
  var tick: Int64 = 0
  var motes: [Mote]
  var bounces: Int64 = 0

  init(seed: UInt64, count: Int = 32) {
    var random = seed | 1
    func next() -> Float {
      random ^= random << 13
      random ^= random >> 7
      random ^= random << 17
      return Float(random % 10_000) / 10_000
    }
    motes = (0..<count).map { _ in Mote(x: next() * 10, y: next() * 10, vx: next() - 0.5, vy: next() - 0.5) }
  }

  /// One step of 1/60 s. `drift`: a one-ulp nudge of the first mote's x at that tick.
  mutating func step(_ push: Push, drift: Int64? = nil) {
    tick += 1
    for index in motes.indices {
      var mote = motes[index]
      mote.vx += Float(push.dx) * 0.01
      mote.vy += Float(push.dy) * 0.01 - 0.002
      mote.x += mote.vx / 60
      mote.y += mote.vy / 60
      if mote.x < 0 || mote.x > 10 {
        mote.vx = -mote.vx
        bounces += 1
      }
      if mote.y < 0 || mote.y > 10 {
        mote.vy = -mote.vy
        bounces += 1
      }
      motes[index] = mote
    }
    if tick == drift { motes[0].x = motes[0].x.nextUp }
  }

  static func push(at tick: Int64) -> Push {
    Push(dx: Int8(truncatingIfNeeded: (tick / 37) % 3) - 1, dy: tick % 90 < 10 ? 1 : 0)
  }
}

let worldCodec = SaveCodec<World>(game: GameIdentity(name: "motes", build: "test", schemaVersion: 1))
let worldScope = DigestScope<World>("motes and tick, v1") { world, hasher in
  hasher.combine(world.tick)
  hasher.combine(world.bounces)
  hasher.combine(contentsOf: world.motes)
}

func makeStore() -> SaveStore {
  let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stasis-replay-\(UUID().uuidString)").path
  return SaveStore(directory: folder)
}

/// Records `ticks` ticks of the world from `seed`; returns the recorder (written) and the states.
func record(
  _ name: String, store: SaveStore, ticks: Int64, seed: UInt64 = 7, keyframeInterval: Int = 50,
  digestInterval: Int = 1, drift: Int64? = nil, scope: DigestScope<World> = worldScope
) throws -> (recorder: ReplayRecorder<World, Push>, states: [World]) {
  var world = World(seed: seed)
  let recorder = try ReplayRecorder<World, Push>(
    name, store: store, codec: worldCodec, start: world, seed: seed, digest: scope,
    keyframeInterval: keyframeInterval, digestInterval: digestInterval)
  var states = [world]
  for _ in 0..<ticks {
    let push = World.push(at: world.tick)
    world.step(push, drift: drift)
    recorder.record(push, reaching: world)
    states.append(world)
  }
  recorder.flush()
  try recorder.waitUntilWritten()
  return (recorder, states)
}

func verifier(drift: Int64? = nil) -> ReplayVerifier<World, Push> {
  ReplayVerifier(codec: worldCodec, digest: worldScope) { world, push in world.step(push, drift: drift) }
}

@Suite("Replays: recorded, read without the game, sought, verified")
struct ReplayTests {
  @Test("a recorded run is one Stasis file: manifest, start, inputs, keyframes as deltas, a digest a tick")
  func recordsOneFile() throws {
    let store = makeStore()
    let (recorder, _) = try record("run", store: store, ticks: 300)
    #expect(recorder.path == "\(store.directory)/replays/run.stasis")
    let file = try ReplayFile(contentsOf: recorder.path)
    #expect(file.manifest.ticks == 300)
    #expect(file.manifest.game == "motes" && file.manifest.seed == 7 && file.manifest.tickRate == 60)
    #expect(file.manifest.digestScope == "motes and tick, v1")
    #expect(file.manifest.inputEncoding == "bulk")
    #expect(file.keyframes.map(\.tick) == [50, 100, 150, 200, 250, 300])
    #expect(file.digests.count == 300 && file.digests.first?.tick == 1 && file.digests.last?.tick == 300)
    // A Stasis file: the format's own reader opens it, as `stasis inspect` and `dump` do.
    let document = try SaveFileFormat.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: recorder.path))))
    #expect(document.sections.map(\.name).sorted() == ["digests", "inputs", "keyframes", "replay", "start"])
    // The inputs: a raw array of 2 bytes a tick, its tree encoding compressed with zstd (the
    // pushes repeat for dozens of ticks at a time).
    #expect(file.manifest.inputCompression == "zstd" && file.manifest.format == 2)
    guard case .raw(let frame)? = document[section: "inputs"]?.content, let length = file.manifest.inputBytes else {
      Issue.record("the inputs are a zstd frame")
      return
    }
    #expect(length > 600 && frame.count < length / 4, "\(frame.count) bytes of \(length)")
    guard case .bulk(let inputs) = file.inputs else {
      Issue.record("the inputs are a bulk array")
      return
    }
    #expect(inputs.count == 300 && inputs.layout.stride == 2, "the inputs as a raw array: 2 bytes a tick")
  }

  @Test("keyframes are deltas: each far smaller than the state it rebuilds")
  func keyframesAreDeltas() throws {
    let store = makeStore()
    let (recorder, _) = try record("deltas", store: store, ticks: 200, keyframeInterval: 10)
    let file = try ReplayFile(contentsOf: recorder.path)
    let rebuilt = try file.keyframeFiles()
    #expect(rebuilt.count == 21)
    for (index, keyframe) in file.keyframes.enumerated() {
      #expect(keyframe.delta.count < rebuilt[index + 1].file.count, "tick \(keyframe.tick)")
    }
  }

  @Test("a flush with the state at its tick ends the batch with a keyframe there, once")
  func flushKeyframes() throws {
    let store = makeStore()
    var world = World(seed: 3)
    let recorder = try ReplayRecorder<World, Push>(
      "flush", store: store, codec: worldCodec, start: world, seed: 3, digest: worldScope, keyframeInterval: 50)
    for _ in 0..<70 {
      let push = World.push(at: world.tick)
      world.step(push)
      recorder.record(push, reaching: world)
    }
    recorder.flush(keyframing: world)
    recorder.flush(keyframing: world)
    try recorder.waitUntilWritten()
    let file = try ReplayFile(contentsOf: recorder.path)
    #expect(file.keyframes.map(\.tick) == [50, 70], "the regular one, then the end's, once")
    let replay = try Replay(file, codec: worldCodec, input: Push.self)
    let end = try replay.seek(to: 70)
    #expect(end.tick == 70 && end.inputs.isEmpty && end.state == world, "a seek to the end steps nothing")
    #expect(try verifier().verify(file).matched)
  }

  @Test("seeking to any tick starts from the keyframe at or before it and re-simulates at most an interval")
  func seeks() throws {
    let store = makeStore()
    let (recorder, states) = try record("seek", store: store, ticks: 300)
    let replay = try Replay(try ReplayFile(contentsOf: recorder.path), codec: worldCodec, input: Push.self)
    for target: Int64 in [0, 1, 49, 50, 51, 137, 299, 300] {
      var (state, from, inputs) = try replay.seek(to: target)
      #expect(from <= target && target - from < 50 || target == from, "tick \(target) from \(from)")
      #expect(inputs.count == Int(target - from))
      for input in inputs { state.step(input) }
      #expect(state == states[Int(target)], "tick \(target): the recorded run's state")
    }
  }

  @Test("a replay verifies in this process: every digest compared, every keyframe matched")
  func verifies() throws {
    let store = makeStore()
    let (recorder, _) = try record("verify", store: store, ticks: 300)
    let result = try verifier().verify(try ReplayFile(contentsOf: recorder.path))
    #expect(result.matched)
    #expect(result.digestsCompared == 300 && result.ticks == 300)
  }

  @Test("a one-ulp drift is found at its exact tick, and the bundle names the field", arguments: [123, 150, 299])
  func driftFoundAtItsTick(drift: Int64) throws {
    let store = makeStore()
    let (recorder, _) = try record("clean", store: store, ticks: 300)
    let result = try verifier(drift: drift).verify(try ReplayFile(contentsOf: recorder.path))
    let bundle = try #require(result.divergence)
    #expect(bundle.report.tick == drift && bundle.report.isExact)
    #expect(bundle.report.summary == "first divergence at tick \(drift)")
    #expect(bundle.report.keyframeTick == (drift - 1) / 50 * 50, "the last keyframe before it")
    let compared = (drift + 49) / 50 * 50
    #expect(bundle.report.comparedTick == compared)
    if drift == compared {
      #expect(bundle.report.differences.count == 1, "\(bundle.report.differences)")
      #expect(bundle.report.differences.first?.hasPrefix("motes: 1 of 32 elements differ") == true)
      #expect(bundle.divergent == nil)
    } else {
      #expect(bundle.report.differences.contains { $0.hasPrefix("motes:") }, "\(bundle.report.differences)")
      #expect(bundle.divergent != nil, "the replayed state at the divergence, too")
    }

    // One signed file, read back whole; the differences as `stasis diff` prints them.
    let key = SigningKey(bytes: Array("a desync bundle's key, 32 bytes!".utf8))
    let bytes = try bundle.encoded(signingKey: key)
    let read = try DesyncBundle(bytes: bytes, signing: .signed(with: key))
    #expect(read.report == bundle.report)
    #expect(try read.differences().map(\.text) == bundle.report.differences)
    #expect(throws: SaveFileError.self, "another key refuses it") {
      try DesyncBundle(bytes: bytes, signing: .signed(with: SigningKey(bytes: Array(repeating: 1, count: 32))))
    }
    let inputs = try SaveValueDecoder().decode([Push].self, from: read.inputs)
    #expect(inputs.count == Int(compared - bundle.report.keyframeTick), "from the keyframe to the compared tick")
  }

  @Test("digests every 10 ticks: the divergence is bounded to the ten steps before the first that differs")
  func sparseDigests() throws {
    let store = makeStore()
    let (recorder, _) = try record("sparse", store: store, ticks: 300, digestInterval: 10)
    let file = try ReplayFile(contentsOf: recorder.path)
    #expect(file.digests.count == 30)
    let bundle = try #require(try verifier(drift: 123).verify(file).divergence)
    #expect(bundle.report.tick == 130 && bundle.report.lastMatchingTick == 120 && !bundle.report.isExact)
    #expect(bundle.report.summary.hasPrefix("first divergence at tick 130 (the step to a tick from 121 to 130"))
  }

  @Test("a difference outside the digest's scope still shows at the next keyframe")
  func keyframeCatchesWhatTheScopeLeavesOut() throws {
    let store = makeStore()
    let narrow = DigestScope<World>("the tick alone") { world, hasher in hasher.combine(world.tick) }
    let (recorder, _) = try record("scope", store: store, ticks: 100, scope: narrow)
    let result = try ReplayVerifier(codec: worldCodec, digest: narrow) { (world: inout World, push: Push) in
      world.step(push, drift: 30)
    }.verify(try ReplayFile(contentsOf: recorder.path))
    let bundle = try #require(result.divergence, "the digests all match (the tick); the keyframe at 50 does not")
    #expect(bundle.report.tick == 50 && bundle.report.comparedTick == 50)
    #expect(
      !bundle.report.isExact && bundle.report.lastMatchingTick == 0, "anywhere since the last keyframe that matched")
    #expect(bundle.report.recordedDigest == bundle.report.replayedDigest)
    #expect(bundle.report.differences.contains { $0.hasPrefix("motes:") })
  }

  @Test("continues(from:): the state the last step reached, not another of the same tick; sparse digests too")
  func continuesFrom() throws {
    for interval in [1, 6] {
      let (recorder, states) = try record(
        "continues-\(interval)", store: makeStore(), ticks: 30, digestInterval: interval)
      #expect(recorder.continues(from: states[30]), "the state it reached")
      var other = states[30]
      other.motes[3].y = other.motes[3].y.nextUp
      #expect(other.tick == recorder.tick)
      #expect(!recorder.continues(from: other), "another state at the same tick: a restore of another device's save")
      #expect(!recorder.continues(from: states[29]), "an earlier state: a rollback")
    }
    let fresh = try ReplayRecorder<World, Push>(
      "fresh", store: makeStore(), codec: worldCodec, start: World(seed: 3), seed: 3, digest: worldScope)
    #expect(
      fresh.continues(from: World(seed: 3)) && !fresh.continues(from: World(seed: 4)), "before any step: the start")
    // Digests every 6 ticks, 31 recorded: tick 31 took none, so it cannot tell, and says no.
    let (sparse, sparseStates) = try record("continues-sparse", store: makeStore(), ticks: 31, digestInterval: 6)
    #expect(!sparse.continues(from: sparseStates[31]), "no digest at its tick: a new replay, which always plays back")
  }

  @Test("a replay goes on across a kill: the new process continues the same file from the restored tick")
  func continuesAcrossAKill() throws {
    let store = makeStore()
    let (first, states) = try record("kill", store: store, ticks: 120)
    #expect(first.tick == 120)
    // The new process restored the state at 120 (its background save) and goes on.
    var world = states[120]
    #expect(
      try ReplayRecorder<World, Push>(
        continuing: "kill", store: store, codec: worldCodec, digest: worldScope, state: states[119], tick: 119) == nil,
      "a replay that does not end where the game restored is not continued")
    let recorder = try #require(
      try ReplayRecorder<World, Push>(
        continuing: "kill", store: store, codec: worldCodec, digest: worldScope, state: world, tick: 120))
    for _ in 0..<80 {
      let push = World.push(at: world.tick)
      world.step(push)
      recorder.record(push, reaching: world)
    }
    recorder.flush()
    try recorder.waitUntilWritten()
    let file = try ReplayFile(contentsOf: recorder.path)
    #expect(file.manifest.ticks == 200 && file.manifest.resumedAt == [120])
    #expect(file.keyframes.map(\.tick) == [50, 100, 150, 200])
    let result = try verifier().verify(file)
    #expect(result.matched && result.digestsCompared == 200)
  }

  @Test("a replay's digests are refused under another scope; a damaged replay names its part")
  func refusals() throws {
    let store = makeStore()
    let (recorder, _) = try record("bad", store: store, ticks: 60)
    let other = DigestScope<World>("something else") { world, hasher in hasher.combine(world.tick) }
    let refused = #expect(throws: SaveFileError.self) {
      try ReplayVerifier(codec: worldCodec, digest: other) { (world: inout World, push: Push) in world.step(push) }
        .verify(try ReplayFile(contentsOf: recorder.path))
    }
    #expect(refused?.kind == .anotherDigestScope)

    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: recorder.path)))
    bytes.removeLast(bytes.count / 3)
    let truncated = #expect(throws: SaveFileError.self) { try ReplayFile(bytes: bytes, path: "cut.stasis") }
    #expect(truncated?.kind == .truncated && truncated?.context.file == "cut.stasis")

    let save = SaveFileFormat.encode(
      try worldCodec.document(
        for: World(seed: 1), summary: SaveSummary(frame: 0, playTime: 0, slot: "a"),
        createdAt: 0))
    let notReplay = #expect(throws: SaveFileError.self) { try ReplayFile(bytes: save, path: "save.stasis") }
    #expect(notReplay?.context.part == "replay", "\(String(describing: notReplay))")
  }
}

@Suite("Hostile replays and bundles: a typed error, never a crash")
struct HostileReplayTests {
  /// A real replay whose manifest field `name` is set to `value`.
  func replay(with name: String, _ value: SaveValue) throws -> [UInt8] {
    let (recorder, _) = try record("hostile", store: makeStore(), ticks: 60)
    var document = try SaveFileFormat.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: recorder.path))))
    let index = try #require(document.sections.firstIndex { $0.name == "replay" })
    guard case .tree(.object(var manifest)) = document.sections[index].content else {
      Issue.record("the manifest is an object")
      return []
    }
    manifest[name] = value
    document.sections[index].content = .tree(.object(manifest))
    return SaveFileFormat.encode(document)
  }

  @Test(
    "a start tick that would overflow, or before zero, is refused naming the manifest", arguments: [Int64.max - 10, -5])
  func startTick(_ value: Int64) throws {
    let refused = #expect(throws: SaveFileError.self) {
      try ReplayFile(bytes: try replay(with: "startTick", .int64(value)), path: "hostile.stasis")
    }
    #expect(refused?.context.part == "replay" && refused?.context.file == "hostile.stasis")
  }

  @Test("digests that do not fill the timeline are refused naming the digests")
  func digestCount() throws {
    let refused = #expect(throws: SaveFileError.self) {
      try ReplayFile(bytes: try replay(with: "digestInterval", .int64(7)), path: "hostile.stasis")
    }
    #expect(refused?.context.part == "digests", "\(String(describing: refused))")
  }

  @Test(
    "compressed inputs that lie about their length, name another compression, or are not a frame are refused naming the inputs",
    arguments: ["length", "huge", "bomb", "compression", "frame"])
  func compressedInputs(_ lie: String) throws {
    var bytes: [UInt8]
    switch lie {
    case "length": bytes = try replay(with: "inputBytes", .int64(17))
    case "huge": bytes = try replay(with: "inputBytes", .int64(Int64.max))
    case "bomb": bytes = try replay(with: "inputBytes", .int64(64 << 20))  // 64 MB from a frame of a few bytes
    case "compression": bytes = try replay(with: "inputCompression", .string("lz4"))
    default:
      bytes = try replay(with: "inputBytes", .int64(120))
      var document = try SaveFileFormat.decode(bytes)
      let index = try #require(document.sections.firstIndex { $0.name == "inputs" })
      document.sections[index].content = .raw(Array(repeating: 0x28, count: 40))
      bytes = SaveFileFormat.encode(document)
    }
    let refused = #expect(throws: SaveFileError.self) { try ReplayFile(bytes: bytes, path: "hostile.stasis") }
    #expect(refused?.context.part == "inputs" && refused?.kind == .malformed, "\(String(describing: refused))")
  }

  @Test("a masked keyframe cut short, of another length, marking bytes past the end, or with too few bytes is refused")
  func maskedKeyframes() throws {
    let base = (0..<1001).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    var file = base
    for index in stride(from: 3, to: 1001, by: 97) { file[index] ^= 0x5A }
    let delta = KeyframeDelta.make(from: base, to: file)
    #expect(delta.starts(with: KeyframeDelta.magic) && delta.count < 200, "\(delta.count) bytes")
    #expect(try KeyframeDelta.apply(delta, to: base, path: nil) == file)
    #expect(try KeyframeDelta.apply(KeyframeDelta.make(from: base, to: base), to: base, path: nil) == base)
    // Every bit of the mask's last byte set: seven of them past the file's 1,001 bytes.
    var bits = [UInt8](repeating: 0, count: 126)
    bits[125] = 0xFF
    let maskFrame = try #require(bits.withUnsafeBytes { Zstd.compress($0, level: 3) })
    var pastTheEnd = KeyframeDelta.magic
    for value in [UInt64(1001), UInt64(maskFrame.count)] {
      for shift in 0..<8 { pastTheEnd.append(UInt8(truncatingIfNeeded: value >> UInt64(shift * 8))) }
    }
    pastTheEnd += maskFrame + [UInt8](repeating: 1, count: 8)
    let cases: [([UInt8], [UInt8], String)] = [
      (Array(delta.prefix(15)), base, "is cut short"),
      (delta, Array(base.dropLast()), "does not fit its base (1001 bytes for a base of 1000)"),
      (pastTheEnd, base, "marks bytes past the file's end"),
      (Array(delta.dropLast(2)), base, "not a frame of them"),
    ]
    for (hostile, target, says) in cases {
      let refused = #expect(throws: SaveDeltaError.self) {
        try KeyframeDelta.apply(hostile, to: target, path: "k.stasis")
      }
      #expect(refused?.kind == .malformed && refused?.message.contains(says) == true, "\(String(describing: refused))")
    }
  }

  @Test("a bundle carries its states as deltas on its keyframe, and reads them whole; a bad one names its part")
  func bundleDeltas() throws {
    let (recorder, _) = try record("deltas", store: makeStore(), ticks: 100)
    let bundle = try #require(try verifier(drift: 70).verify(ReplayFile(contentsOf: recorder.path)).divergence)
    let bytes = try bundle.encoded()
    let file = try SaveFileFormat.decode(bytes)
    for (name, state) in [("replayed", bundle.replayed), ("recorded", try #require(bundle.recorded))] {
      guard case .raw(let stored)? = file[section: name]?.content else {
        Issue.record("no \(name) section")
        continue
      }
      #expect(stored.starts(with: Array("SKX1".utf8)) && stored.count < state.count, "\(name): \(stored.count) bytes")
    }
    let read = try DesyncBundle(bytes: bytes)
    #expect(read.report == bundle.report, "read whole, the report is the one made")
    #expect(read.replayed == bundle.replayed && read.recorded == bundle.recorded && read.keyframe == bundle.keyframe)
    #expect(try read.differences().map(\.text) == bundle.report.differences)

    var document = try SaveFileFormat.decode(bytes)
    let index = try #require(document.sections.firstIndex { $0.name == "replayed" })
    document.sections[index].content = .raw(Array("SKX1".utf8) + [UInt8](repeating: 0, count: 30))
    let refused = #expect(throws: SaveFileError.self) {
      try DesyncBundle(bytes: SaveFileFormat.encode(document), path: "bad.desync.stasis")
    }
    #expect(refused?.context.part == "replayed", "\(String(describing: refused))")
    // A small delta that would build megabytes from a keyframe of a few hundred bytes: refused
    // before it allocates (a server reads players' bundles).
    let bomb = SaveDelta.make(from: bundle.keyframe, to: bundle.keyframe + [UInt8](repeating: 0, count: 5 << 20))
    #expect(bomb.count < 4096, "\(bomb.count) bytes")
    document.sections[index].content = .raw(bomb)
    let inflated = #expect(throws: SaveFileError.self) {
      try DesyncBundle(bytes: SaveFileFormat.encode(document), path: "bomb.desync.stasis")
    }
    #expect(inflated?.context.part == "replayed", "\(String(describing: inflated))")
  }

  @Test("a bundle whose ticks are out of order is refused naming its report")
  func bundleTicks() throws {
    let (recorder, _) = try record("bundle", store: makeStore(), ticks: 100)
    let bundle = try #require(try verifier(drift: 70).verify(ReplayFile(contentsOf: recorder.path)).divergence)
    var document = try SaveFileFormat.decode(try bundle.encoded())
    let index = try #require(document.sections.firstIndex { $0.name == "desync" })
    guard case .tree(.object(var report)) = document.sections[index].content else {
      Issue.record("the report is an object")
      return
    }
    report["lastMatchingTick"] = .int64(Int64.min)
    document.sections[index].content = .tree(.object(report))
    let refused = #expect(throws: SaveFileError.self) {
      try DesyncBundle(bytes: SaveFileFormat.encode(document), path: "bad.desync.stasis")
    }
    #expect(refused?.context.part == "desync")
  }
}

@Suite("The replay digest")
struct StateHasherTests {
  @Test("is XXH3-64: the same bytes give the published value, in every process")
  func publishedValue() {
    #expect(StateHasher().finalize() == 0x2D06_8005_38D3_94C2, "XXH3-64 of nothing")
    let hasher = StateHasher()
    hasher.combine(UInt32(1))
    let one = hasher.finalize()
    #expect([UInt8]([1, 0, 0, 0]).withUnsafeBytes { StateHasher.digest(of: $0) } == one, "scalars go little-endian")
    #expect(StateHasher().finalize() == 0x2D06_8005_38D3_94C2, "finalize starts again")
  }

  @Test("equal states whose padding differs have equal digests: arrays, bulk arrays and trees")
  func paddingNeverHashed() throws {
    func rocks(_ garbage: UInt8) -> [PaddedRock] {
      var rocks = [PaddedRock](repeating: PaddedRock(), count: 64)
      rocks.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: garbage) }
      for index in rocks.indices {
        rocks[index].x = Double(index)
        rocks[index].dead = UInt8(index & 1)
      }
      return rocks
    }
    let (a, b) = (rocks(0xAB), rocks(0x5C))
    #expect(a.withUnsafeBytes { [UInt8]($0) } != b.withUnsafeBytes { [UInt8]($0) }, "the padding differs")
    let hasher = StateHasher()
    hasher.combine(contentsOf: a)
    let arrayDigest = hasher.finalize()
    hasher.combine(contentsOf: b)
    #expect(hasher.finalize() == arrayDigest)
    hasher.combine(try SaveValueEncoder().encode(a))
    let treeDigest = hasher.finalize()
    hasher.combine(try SaveValueEncoder().encode(b))
    #expect(hasher.finalize() == treeDigest)
    // An array whose bytes are all fields hashes as it always did: recorded digests stay.
    let plain: [UInt32] = [1, 2, 3]
    hasher.combine(contentsOf: plain)
    let plainDigest = hasher.finalize()
    hasher.combine(count: 3)
    plain.withUnsafeBytes { hasher.combine(bytes: $0) }
    #expect(hasher.finalize() == plainDigest)
  }

  @Test("tells states apart by their bits: a one-ulp change, an order, a sign of zero")
  func bits() {
    let hasher = StateHasher()
    let world = World(seed: 3)
    var nudged = world
    nudged.motes[5].y = nudged.motes[5].y.nextUp
    #expect(worldScope.digest(of: world, using: hasher) == worldScope.digest(of: world, using: hasher))
    #expect(worldScope.digest(of: world, using: hasher) != worldScope.digest(of: nudged, using: hasher))
    hasher.combine(Float(0))
    let zero = hasher.finalize()
    hasher.combine(-Float(0))
    #expect(hasher.finalize() != zero)
    let sections = DigestScope<World>.sections()
    #expect(sections.name == "sections")
    #expect(sections.digest(of: world, using: hasher) != sections.digest(of: nudged, using: hasher))
    #expect(
      DigestScope<World>.sections(["tick"]).digest(of: world, using: hasher)
        == DigestScope<World>.sections(["tick"]).digest(of: nudged, using: hasher), "only the named sections")
  }
}

/// A hidden input the step reads: what the sync test exists to find.
enum Gust {
  nonisolated(unsafe) static var strength: Float = 0
}

@Suite("The sync test (StasisTesting)")
struct SyncTestTests {
  @Test("a deterministic step passes: every frame rolled back 8 and stepped again")
  func passes() throws {
    var world = World(seed: 11)
    var sync = SyncTest(depth: 8, step: { (world: inout World, push: Push) in world.step(push) }, digest: { $0 })
    for _ in 0..<200 { try sync.advance(&world, with: World.push(at: world.tick)) }
    #expect(sync.frame == 200)
  }

  @Test("finds a static var the step reads, at the first frame")
  func findsHiddenState() throws {
    var world = World(seed: 11)
    var sync = SyncTest(
      depth: 4,
      step: { (world: inout World, push: Push) in
        world.step(push)
        Gust.strength += 0.001
        world.motes[0].vx += Gust.strength
      }, digest: { worldScope.digest(of: $0, using: StateHasher()) })
    let failure = #expect(throws: SyncTestFailure.self) {
      for _ in 0..<20 { try sync.advance(&world, with: World.push(at: world.tick)) }
    }
    #expect(failure?.frame == 1 && failure?.rolledBack == 1)
    #expect(failure?.description.contains("reads something the state does not hold") == true)
  }
}

/// Swift pads it: 9 bytes of fields, stride 16.
private struct PaddedRock: BulkStorable {
  var x: Double = 0
  var dead: UInt8 = 0
  static let bulkLayout = BulkLayout(of: PaddedRock.self, [.field("x", \.x), .field("dead", \.dead)])
}
