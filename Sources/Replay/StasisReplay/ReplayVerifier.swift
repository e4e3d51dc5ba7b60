import Stasis
import StasisMerge

extension SaveFileError.Kind {
  /// A replay's digests were taken over another scope than the verifier's (``DigestScope``):
  /// comparing them would report a divergence that is not one.
  public static let anotherDigestScope = Self(rawValue: "anotherDigestScope")
}

/// Plays a replay through the game's step and compares every recorded digest; at the first
/// that differs, finds what it can say about the divergence and makes a ``DesyncBundle``.
///
/// Verifying needs the game's step, so it runs inside the game (in this process, in a new
/// one, or in another build of it: a release build checking a debug build's replay).
///
/// ```swift
/// let verifier = ReplayVerifier(codec: codec, digest: scope) { state, input in
///   state.step(input)
/// }
/// let result = try verifier.verify(ReplayFile(contentsOf: path))
/// if let divergence = result.divergence { print("first divergence at tick \(divergence.tick)") }
/// ```
public struct ReplayVerifier<State: Codable & Sendable, Input: Codable & Sendable> {
  /// The codec of the replay's states.
  public let codec: SaveCodec<State>
  /// The digest's scope: the replay's must have the same name.
  public let scope: DigestScope<State>
  /// The game's step: the state at a tick and that tick's input give the next tick's state.
  /// (For a verifier that steps a live world, ``init(codec:digest:restore:snapshot:step:)``, it
  /// restores the state, steps the world once and snapshots it: correct, and slow.)
  public let step: (inout State, Input) -> Void
  /// The live world's restore, snapshot and step, for a verifier that steps it in place.
  private let live: Live?

  private struct Live {
    let restore: (State) throws -> Void
    let snapshot: () throws -> State
    let step: (Input) -> Void
  }

  /// A verifier of `codec`'s game's replays.
  public init(codec: SaveCodec<State>, digest scope: DigestScope<State>, step: @escaping (inout State, Input) -> Void) {
    self.codec = codec
    self.scope = scope
    self.step = step
    live = nil
  }

  /// A verifier of a game that steps a live world in place (an entity world, `SavedWorld`):
  /// it restores the replay's start into the world once, then steps the world itself through
  /// the inputs, and takes a snapshot only where a digest or a keyframe is compared. A
  /// divergence names what differs, down to the entity and component (`world[#7].motion.x`).
  ///
  /// ```swift
  /// let verifier = ReplayVerifier(
  ///   codec: codec, digest: .sections(),
  ///   restore: { try game.restore($0) }, snapshot: { try game.snapshotState() }, step: { game.step($0) })
  /// ```
  public init(
    codec: SaveCodec<State>, digest scope: DigestScope<State>, restore: @escaping (State) throws -> Void,
    snapshot: @escaping () throws -> State, step: @escaping (Input) -> Void
  ) {
    self.codec = codec
    self.scope = scope
    self.step = { state, input in
      guard (try? restore(state)) != nil else { return }
      step(input)
      if let next = try? snapshot() { state = next }
    }
    live = Live(restore: restore, snapshot: snapshot, step: step)
  }

  /// Replays `file` from its start and compares every digest and every keyframe.
  public func verify(_ file: ReplayFile) throws(SaveFileError) -> ReplayVerification {
    guard file.manifest.digestScope == scope.name else {
      throw SaveFileError(
        .anotherDigestScope,
        "the replay's digests cover '\(file.manifest.digestScope)'; this verifier's cover '\(scope.name)'",
        context: .init(file: file.path, part: ReplayFile.manifestSection))
    }
    let replay = try Replay(file, codec: codec, input: Input.self)
    let hasher = StateHasher()
    var recordedAt: [Int64: UInt64] = [:]
    for entry in file.digests { recordedAt[entry.tick] = entry.digest }
    // The keyframes are rebuilt one at a time, each on the one before: never all in memory.
    var chain = file.start
    var rebuilt = 0
    func nextKeyframe() throws(SaveFileError) -> (tick: Int64, file: [UInt8]) {
      chain = try file.rebuild(keyframe: rebuilt, on: chain)
      rebuilt += 1
      return (file.keyframes[rebuilt - 1].tick, chain)
    }
    // The last keyframe at or before the last tick that matched: the bundle's inputs start there.
    var before = (tick: file.manifest.startTick, file: file.start)

    var state = try replay.startState()
    // A live world is restored once and stepped in place; its state is a snapshot taken only
    // where something is compared (`stale` until then).
    var stale = false
    if let live {
      do {
        try live.restore(state)
      } catch {
        throw SaveFileError(
          .refusedByGame, "the game could not restore the replay's start: \(error)",
          context: .init(file: file.path, part: ReplayFile.startSection), underlyingError: error)
      }
    }
    func advance(_ input: Input) {
      if let live {
        live.step(input)
        stale = true
      } else {
        step(&state, input)
      }
    }
    func current() throws(SaveFileError) -> State {
      guard let live, stale else { return state }
      do {
        state = try live.snapshot()
      } catch {
        throw SaveFileError(
          .refusedByGame, "the game could not snapshot its world: \(error)", context: .init(file: file.path),
          underlyingError: error)
      }
      stale = false
      return state
    }
    var tick = file.manifest.startTick
    var lastMatch = tick
    var compared = 0
    var found: (tick: Int64, recorded: UInt64, replayed: UInt64, state: State)?
    var later: (tick: Int64, file: [UInt8])?
    for input in replay.inputs {
      advance(input)
      tick += 1
      if let recorded = recordedAt[tick] {
        let state = try current()
        let replayed = scope.digest(of: state, using: hasher)
        compared += 1
        if replayed != recorded {
          found = (tick, recorded, replayed, state)
          break
        }
      }
      // A keyframe is the recorded state itself: a difference the digest's scope leaves out
      // still shows here, section by section.
      if rebuilt < file.keyframes.count, file.keyframes[rebuilt].tick == tick {
        let state = try current()
        let keyframe = try nextKeyframe()
        let recorded = try SaveFileFormat.decode(keyframe.file, path: file.path)
        if try document(of: state, tick: tick).sections != recorded.sections {
          let digest = scope.digest(of: state, using: hasher)
          found = (tick, recordedAt[tick] ?? digest, digest, state)
          later = keyframe
          // The digests did not see it: it happened after the last keyframe that matched.
          lastMatch = before.tick
          break
        }
        before = keyframe
      }
      if recordedAt[tick] != nil || before.tick == tick { lastMatch = tick }
    }
    guard let found else {
      return ReplayVerification(ticks: file.manifest.ticks, digestsCompared: compared, divergence: nil)
    }

    // The recorded state is known only at keyframes: compare at the divergence when one is
    // there, else at the first one after it, playing on to it.
    while later == nil, rebuilt < file.keyframes.count {
      let keyframe = try nextKeyframe()
      if keyframe.tick >= found.tick { later = keyframe }
    }
    // Played on from the divergence: the value (or the live world) is still there.
    var comparedTick = found.tick
    var replayedThere = found.state
    if let later, later.tick > found.tick {
      var at = found.tick
      while at < later.tick {
        advance(replay.inputs[Int(at - file.manifest.startTick)])
        at += 1
      }
      replayedThere = try current()
      comparedTick = later.tick
    }
    let beforeFile = before.file
    let recordedFile = later.map(\.file)
    let replayedFile = try encode(replayedThere, tick: comparedTick)
    let divergentFile = comparedTick == found.tick ? nil : try encode(found.state, tick: found.tick)
    var differences: [String] = []
    if let recordedFile {
      let recorded = try SaveFileFormat.decode(recordedFile)
      let replayed = try SaveFileFormat.decode(replayedFile)
      differences = SaveDifference.between(recorded, replayed).map(\.text)
    }
    let inputsFrom = Int(before.tick - file.manifest.startTick)
    let inputsTo = Int((recordedFile == nil ? found.tick : comparedTick) - file.manifest.startTick)
    let report = DesyncReport(
      manifest: file.manifest, tick: found.tick, lastMatchingTick: lastMatch, recordedDigest: found.recorded,
      replayedDigest: found.replayed, keyframeTick: before.tick, comparedTick: recordedFile == nil ? nil : comparedTick,
      differences: differences)
    let bundle = DesyncBundle(
      report: report, game: codec.game, keyframe: beforeFile,
      inputs: try SaveValueEncoder().encode(Array(replay.inputs[inputsFrom..<inputsTo])),
      recorded: recordedFile, replayed: recordedFile == nil ? try encode(found.state, tick: found.tick) : replayedFile,
      divergent: recordedFile == nil ? nil : divergentFile)
    return ReplayVerification(ticks: file.manifest.ticks, digestsCompared: compared, divergence: bundle)
  }

  private func encode(_ state: State, tick: Int64) throws(SaveFileError) -> [UInt8] {
    SaveFileFormat.encode(try document(of: state, tick: tick))
  }

  private func document(of state: State, tick: Int64) throws(SaveFileError) -> SaveDocument {
    let summary = SaveSummary(frame: tick, playTime: 0, slot: "replay")
    return try codec.document(for: state, summary: summary, createdAt: 0)
  }
}

/// What a verification found.
public struct ReplayVerification: Sendable {
  /// The ticks replayed.
  public let ticks: Int64
  /// The digests compared (up to the first that differed).
  public let digestsCompared: Int
  /// The first divergence, as a bundle to save or send; nil when every digest matched.
  public let divergence: DesyncBundle?

  /// Whether every digest and keyframe matched.
  public var matched: Bool { divergence == nil }
}
