import Dispatch
import Stasis
import StasisDelta
import Synchronization

/// Records a run as a replay: each tick's input, a digest every few ticks, a keyframe every
/// ``ReplayManifest/keyframeInterval`` ticks, written to `SAVES/replays/NAME.stasis`.
///
/// The game's thread only appends: ``record(_:reaching:)`` stores the input and, on a digest
/// tick, hashes the state (``DigestScope``). Everything else runs on the recorder's worker: a
/// keyframe's encoding and its delta on the one before, and the file's durable rewrite (a
/// temporary file flushed and renamed over the old one), in batches: at each keyframe, and when
/// the game calls ``flush(keyframing:then:)`` (on the way to the background and at quit). A kill loses at most
/// the inputs since the last batch.
///
/// After a cold start that restored the state the last batch ended on, ``init(continuing:store:codec:digest:state:tick:)``
/// goes on in the same file: one replay across the kill.
///
/// One thread records (the game's); the worker is the recorder's own.
public final class ReplayRecorder<State: Codable & Sendable, Input: Codable & Sendable> {
  /// The replay's file.
  public let path: String
  /// The ticks recorded so far end here: the state passed to the last ``record(_:reaching:)``
  /// is this tick's.
  public private(set) var tick: Int64

  private let scope: DigestScope<State>
  private let hasher = StateHasher()
  private var manifest: ReplayManifest
  private var inputs: [Input] = []
  private var digests: [ReplayDigest] = []
  private let writer: Writer
  /// The tick of the last keyframe handed to the worker (the start's, at first).
  private var lastKeyframe: Int64
  /// The digest of the state the last step reached (the start's, at first), when that tick took
  /// one: what ``continues(from:)`` compares with. (The state itself is not kept: holding it
  /// would make the game's next in-place change copy its arrays.)
  private var reachedDigest: UInt64?

  /// Starts a replay of a run from `start`, the state at `startTick`.
  ///
  /// - Parameters:
  ///   - name: the file's name in `SAVES/replays/` (`.stasis` is added); letters, digits, `-`,
  ///     `_` and `.`, as a slot's name.
  ///   - store: the save folder's store: the file goes in its `replays/` folder, through its
  ///     file system.
  ///   - codec: the game's codec: the start and the keyframes are its saves.
  ///   - start: the state the run starts from.
  ///   - startTick: its tick.
  ///   - seed: the run's seed, for the manifest (the game's own).
  ///   - tickRate: ticks per second.
  ///   - keyframeInterval: a keyframe every this many ticks: a seek re-simulates at most this many.
  ///   - scope: what the digests cover.
  ///   - digestInterval: a digest every this many ticks; 1 finds a divergence at its exact tick.
  public init(
    _ name: String, store: SaveStore, codec: SaveCodec<State>, start: State, startTick: Int64 = 0, seed: UInt64,
    tickRate: Int = 60, digest scope: DigestScope<State>, keyframeInterval: Int = 600, digestInterval: Int = 1
  ) throws(SaveFileError) {
    try Self.validate(name)
    guard keyframeInterval > 0, digestInterval > 0, tickRate > 0 else {
      throw SaveFileError(.malformed, "the intervals and the tick rate must be at least 1")
    }
    path = "\(store.directory)/\(Self.folder)/\(name).stasis"
    tick = startTick
    lastKeyframe = startTick
    self.scope = scope
    manifest = ReplayManifest(
      format: ReplayManifest.currentFormat, game: codec.game.name, build: codec.game.build,
      schemaVersion: codec.game.schemaVersion, seed: seed, tickRate: tickRate, digestScope: scope.name,
      keyframeInterval: keyframeInterval, digestInterval: digestInterval, startTick: startTick, ticks: 0,
      inputEncoding: Input.self is any BulkStorable.Type ? "bulk" : "tree", resumedAt: [])
    writer = Writer(store: store, name: "\(name).stasis", codec: codec)
    writer.begin(start, tick: startTick)
    reachedDigest = scope.digest(of: start, using: hasher)
  }

  /// Goes on with the replay `name` after a cold start: `state` is the state the game restored,
  /// at `tick`. Returns nil when the file does not end exactly there (inputs after its last
  /// batch were lost with the process, or it is another run's): start a new replay then.
  public init?(
    continuing name: String, store: SaveStore, codec: SaveCodec<State>, digest scope: DigestScope<State>,
    state: State, tick: Int64
  ) throws(SaveFileError) {
    try Self.validate(name)
    guard let bytes = try store.readFile(named: "\(name).stasis", inFolder: Self.folder) else { return nil }
    let path = "\(store.directory)/\(Self.folder)/\(name).stasis"
    let file = try ReplayFile(bytes: bytes, path: path)
    guard file.manifest.endTick == tick, file.manifest.digestScope == scope.name,
      file.manifest.game == codec.game.name
    else { return nil }
    let hasher = StateHasher()
    if let last = file.digests.last, last.tick == tick, last.digest != scope.digest(of: state, using: hasher) {
      return nil
    }
    let replay = try Replay(file, codec: codec, input: Input.self)
    self.path = path
    self.tick = tick
    self.scope = scope
    manifest = file.manifest
    manifest.resumedAt.append(tick)
    inputs = replay.inputs
    digests = file.digests
    lastKeyframe = file.keyframes.last?.tick ?? file.manifest.startTick
    var last = file.start  // the last keyframe's file, built one at a time
    for index in file.keyframes.indices { last = try file.rebuild(keyframe: index, on: last) }
    // The restored state must be the one the replay ended on: its last keyframe, when there.
    if let final = file.keyframes.last, final.tick == tick {
      let summary = SaveSummary(frame: tick, playTime: 0, slot: "replay")
      let restored = try codec.document(for: state, summary: summary, createdAt: 0)
      guard try SaveFileFormat.decode(last, path: path).sections == restored.sections else { return nil }
    }
    writer = Writer(store: store, name: "\(name).stasis", codec: codec)
    writer.resume(start: file.start, last: last, keyframes: file.keyframes)
    reachedDigest = scope.digest(of: state, using: hasher)
  }

  /// Records `input`, the one the step from ``tick`` used, and `state`, the state it reached.
  /// Costs an append, plus a digest on a digest tick; a keyframe tick hands the state to the
  /// worker, which encodes it and writes the batch.
  public func record(_ input: Input, reaching state: State) {
    inputs.append(input)
    tick += 1
    manifest.ticks += 1
    let offset = tick - manifest.startTick
    reachedDigest = nil
    if offset % Int64(manifest.digestInterval) == 0 {
      let digest = scope.digest(of: state, using: hasher)
      digests.append(ReplayDigest(tick: tick, digest: digest))
      reachedDigest = digest
    }
    if offset % Int64(manifest.keyframeInterval) == 0 {
      flush(keyframing: state)
    }
  }

  /// Whether `state` is the state the last recorded step reached (the start, before any): the
  /// game's next step from it goes on in this replay. False when something else moved the
  /// game since (a restore, another device's save taken on a return, a rollback), even to a
  /// state of the same tick: one replay is one line of steps, so the game records the rest into
  /// a new one. Compares one digest of `state` (``DigestScope``) with the one the last step
  /// took; when the last tick took none (digests every K ticks), it cannot tell, and says false:
  /// a new replay then, which always plays back.
  public func continues(from state: State) -> Bool {
    guard let reachedDigest else { return false }
    return scope.digest(of: state, using: hasher) == reachedDigest
  }

  /// Writes what was recorded so far, on the worker (durably: a temporary file flushed and
  /// renamed). Call it on the way to the background (inside a background task) and at quit, or
  /// let ``flushWhenLeaving(_:state:)`` do it.
  ///
  /// - Parameters:
  ///   - state: the state at ``tick``, when the caller has it: unless a keyframe is already
  ///     there, the batch ends with a keyframe of it, so the recorded state at the end is known
  ///     (a verifier compares fields there when a divergence comes after the last regular
  ///     keyframe, and a seek to the end steps nothing).
  ///   - written: runs on the worker once the batch is written or has failed
  ///     (``waitUntilWritten()`` reports the failure).
  public func flush(keyframing state: State? = nil, then written: (@Sendable () -> Void)? = nil) {
    if let state, lastKeyframe != tick {
      writer.keyframe(state, tick: tick)
      lastKeyframe = tick
    }
    writer.write(manifest: manifest, inputs: inputs, digests: digests, then: written)
  }

  /// Flushes when `application` goes to the background and when it begins to quit, each batch
  /// inside a background task that ends once it is written, with a keyframe of `state()` (the
  /// state at ``tick``, or nil): a kill while suspended then loses nothing of the run. Returns
  /// the observers' tokens.
  @MainActor
  @discardableResult
  public func flushWhenLeaving(_ application: Application, state: @escaping @MainActor () -> State?)
    -> [ObserverToken]
  {
    Self.flushWhenLeaving(application) { [self] in (self, state()) }
  }

  /// ``flushWhenLeaving(_:state:)`` for whichever recorder `current` returns then, with the
  /// state at its tick (a game that starts a new replay after a jump keeps one pair of
  /// observers); nil flushes nothing.
  @MainActor
  @discardableResult
  public static func flushWhenLeaving(
    _ application: Application, _ current: @escaping @MainActor () -> (recorder: ReplayRecorder, state: State?)?
  ) -> [ObserverToken] {
    [LifecycleEvent.didEnterBackground, .willTerminate].map { event in
      application.addObserver(for: event) { application in
        guard let (recorder, state) = current() else { return }
        let task = application.beginBackgroundTask(named: "replay")
        recorder.flush(keyframing: state) { application.endBackgroundTask(task) }
      }
    }
  }

  /// Waits until every batch handed to the worker is written; throws the first failure since
  /// the last call. For a quit, and for tests: the game's loop never needs it. Never call it
  /// from a `flush` completion, which runs on the worker it waits for.
  public func waitUntilWritten() throws(SaveFileError) {
    try writer.drain()
  }

  /// The folder of the save folder where replays live (``ReplayFile/folder``).
  public static var folder: String { ReplayFile.folder }

  private static func validate(_ name: String) throws(SaveFileError) {
    do {
      _ = try SaveSlot(name)
    } catch {
      throw SaveFileError(.invalidSlotName, "'\(name)' is not a replay's name: \(error.message)")
    }
  }

  /// The worker: keyframes encoded and delta'd, files written, in order on one queue.
  private final class Writer: Sendable {
    private let store: SaveStore
    private let name: String
    private let codec: SaveCodec<State>
    private let queue = DispatchQueue(label: "stasis.replay.writer")
    private let state = Mutex(Progress())

    private struct Progress {
      var start: [UInt8] = []
      var last: [UInt8] = []
      var keyframes: [(tick: Int64, delta: [UInt8])] = []
      var failure: SaveFileError?
    }

    init(store: SaveStore, name: String, codec: SaveCodec<State>) {
      self.store = store
      self.name = name
      self.codec = codec
    }

    func begin(_ start: State, tick: Int64) {
      queue.async { [self] in
        do throws(SaveFileError) {
          let file = try encode(start, tick: tick)
          state.withLock {
            $0.start = file
            $0.last = file
          }
        } catch {
          fail(error)
        }
      }
    }

    func resume(start: [UInt8], last: [UInt8], keyframes: [(tick: Int64, delta: [UInt8])]) {
      state.withLock {
        $0.start = start
        $0.last = last
        $0.keyframes = keyframes
      }
    }

    func keyframe(_ keyframe: State, tick: Int64) {
      queue.async { [self] in
        do throws(SaveFileError) {
          let file = try encode(keyframe, tick: tick)
          state.withLock {
            $0.keyframes.append((tick, KeyframeDelta.make(from: $0.last, to: file)))
            $0.last = file
          }
        } catch {
          fail(error)
        }
      }
    }

    func write(
      manifest: ReplayManifest, inputs: [Input], digests: [ReplayDigest], then written: (@Sendable () -> Void)?
    ) {
      queue.async { [self] in
        defer { written?() }
        do throws(SaveFileError) {
          let (start, keyframes) = state.withLock { ($0.start, $0.keyframes) }
          // A start that could not be encoded failed the recorder (reported by `drain`);
          // nothing is written over a replay that would not read.
          guard !start.isEmpty else { return }
          let bytes = try ReplayFile.encode(
            game: codec.game, manifest: manifest, start: start, inputs: try SaveValueEncoder().encode(inputs),
            keyframes: keyframes, digests: digests)
          try store.writeFile(bytes, named: name, inFolder: ReplayRecorder.folder)
        } catch {
          fail(error)
        }
      }
    }

    func drain() throws(SaveFileError) {
      queue.sync {}
      let failure = state.withLock { progress in
        defer { progress.failure = nil }
        return progress.failure
      }
      if let failure { throw failure }
    }

    private func fail(_ error: SaveFileError) {
      state.withLock { if $0.failure == nil { $0.failure = error } }
    }

    private func encode(_ value: State, tick: Int64) throws(SaveFileError) -> [UInt8] {
      let summary = SaveSummary(frame: tick, playTime: 0, slot: "replay")
      return SaveFileFormat.encode(try codec.document(for: value, summary: summary, createdAt: 0))
    }
  }
}
