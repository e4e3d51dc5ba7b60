import Stasis

/// A replay decoded with the game's types: its starting state, its inputs, and the way to any
/// tick (``seek(to:)``) from the nearest keyframe.
///
/// ```swift
/// let replay = try Replay(ReplayFile(contentsOf: path), codec: codec, input: Input.self)
/// var (state, tick, inputs) = try replay.seek(to: 2_000)
/// for input in inputs { engine.step(&state, input) }   // at most a keyframe interval of steps
/// ```
public struct Replay<State: Codable & Sendable, Input: Codable & Sendable>: Sendable {
  /// The file, as read.
  public let file: ReplayFile
  /// The codec the start and the keyframes decode with.
  public let codec: SaveCodec<State>
  /// The inputs, one per tick from ``ReplayManifest/startTick``: `inputs[i]` takes the state
  /// at `startTick + i` to `startTick + i + 1`.
  public let inputs: [Input]

  /// The manifest.
  public var manifest: ReplayManifest { file.manifest }

  /// Decodes `file`'s inputs as `Input` and checks that its start is `codec`'s game's.
  public init(_ file: ReplayFile, codec: SaveCodec<State>, input: Input.Type = Input.self) throws(SaveFileError) {
    guard file.manifest.game == codec.game.name else {
      throw SaveFileError(
        .anotherGame, "the replay was recorded by '\(file.manifest.game)', not '\(codec.game.name)'",
        context: .init(file: file.path, part: ReplayFile.manifestSection))
    }
    self.file = file
    self.codec = codec
    self.inputs = try ReplayFile.decode([Input].self, file.inputs, part: ReplayFile.inputsSection, path: file.path)
  }

  /// The state at the start.
  public func startState() throws(SaveFileError) -> State {
    try state(inFile: file.start, tick: file.manifest.startTick)
  }

  /// Where to start to reach `tick`: the state at the nearest keyframe at or before it, that
  /// keyframe's tick, and the inputs from there to `tick` (at most a keyframe interval of
  /// them). A tick outside the replay is clamped to its start or end.
  public func seek(to tick: Int64) throws(SaveFileError) -> (state: State, tick: Int64, inputs: ArraySlice<Input>) {
    let target = min(max(tick, manifest.startTick), manifest.endTick)
    let keyframe = file.keyframe(atOrBefore: target)
    var chain = file.start  // each keyframe built on the one before, one at a time
    for index in 0..<keyframe.index { chain = try file.rebuild(keyframe: index, on: chain) }
    let state = try state(inFile: chain, tick: keyframe.tick)
    let from = Int(keyframe.tick - manifest.startTick)
    let to = Int(target - manifest.startTick)
    return (state, keyframe.tick, inputs[from..<to])
  }

  /// Every keyframe's state, the start's first, with its tick.
  public func keyframeStates() throws(SaveFileError) -> [(tick: Int64, state: State)] {
    var states: [(tick: Int64, state: State)] = []
    for keyframe in try file.keyframeFiles() {
      states.append((keyframe.tick, try state(inFile: keyframe.file, tick: keyframe.tick)))
    }
    return states
  }

  func state(inFile bytes: [UInt8], tick: Int64) throws(SaveFileError) -> State {
    let part = tick == manifest.startTick ? ReplayFile.startSection : "\(ReplayFile.keyframesSection) (tick \(tick))"
    do {
      return try codec.state(from: try SaveFileFormat.decode(bytes, path: file.path))
    } catch {
      throw SaveFileError(
        error.kind, "the state at tick \(tick): \(error.message)",
        context: .init(file: file.path, part: part, field: error.context.field), offset: error.offset)
    }
  }
}
