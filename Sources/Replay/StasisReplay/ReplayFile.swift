import Stasis
import StasisDelta

/// What a replay says about itself: whose run, from which tick, at what rate, and how its
/// digests and keyframes are spaced. The `replay` section of a replay file.
public struct ReplayManifest: Codable, Sendable, Equatable {
  /// The replay format's version this build writes: 2 (its inputs may be a zstd frame,
  /// ``inputCompression``); this build reads 1 and 2.
  public static let currentFormat = 2

  /// The replay format's version (``currentFormat`` when written by this build).
  public var format: Int
  /// The game's name, build and schema, as its saves record them.
  public var game: String
  /// The build that recorded.
  public var build: String
  /// The schema of the states inside (the start and the keyframes).
  public var schemaVersion: UInt32
  /// The seed the run started from, as the game reports it.
  public var seed: UInt64
  /// Ticks per second of game time.
  public var tickRate: Int
  /// The digest's scope (``DigestScope/name``): digests are compared only under the same one.
  public var digestScope: String
  /// A keyframe every this many ticks.
  public var keyframeInterval: Int
  /// A digest every this many ticks (1: every tick, so a divergence is found at its exact tick).
  public var digestInterval: Int
  /// The tick of the starting snapshot.
  public var startTick: Int64
  /// How many ticks' inputs the replay holds: it ends at `startTick + ticks`.
  public var ticks: Int64
  /// `bulk` when the inputs are a `BulkStorable` type's raw array, `tree` otherwise.
  public var inputEncoding: String
  /// `zstd` when the `inputs` section is a zstd frame of the inputs' tree encoding (a game's
  /// inputs repeat from tick to tick: the demo's ten minutes shrink from 144 KB to a few KB);
  /// nil when it is the tree itself (format 1, or inputs that do not shrink).
  public var inputCompression: String?
  /// With ``inputCompression``: the length of the inputs' tree encoding the frame holds.
  public var inputBytes: Int?
  /// The ticks at which the run went on in a new process (a cold start after a kill): one
  /// replay across them.
  public var resumedAt: [Int64]

  /// The last tick: `startTick + ticks`.
  public var endTick: Int64 { startTick + ticks }
}

/// One digest of the timeline: the state's digest after `tick`'s step. (The file stores the
/// digests alone, 8 bytes each; their ticks follow from the manifest.)
public struct ReplayDigest: Sendable, Equatable {
  /// The tick the digest is of.
  public var tick: Int64
  /// The digest (``StateHasher``).
  public var digest: UInt64

  /// An entry.
  public init(tick: Int64, digest: UInt64) {
    self.tick = tick
    self.digest = digest
  }
}

/// A replay file as written, read without the game's types: its manifest, its start (a save
/// file), its inputs (as a value tree), its keyframes (deltas, each on the one before) and its
/// digest timeline. `stasis replay info` prints it; ``Replay`` decodes the game's side.
///
/// A replay file is a Stasis file (`stasis inspect` and `stasis dump` open it), with the
/// sections `replay` (the manifest), `start` (the starting snapshot: a whole save file, raw),
/// `inputs`, `keyframes` (`tick` and `delta` each) and `digests`.
public struct ReplayFile: Sendable {
  /// The folder of the save folder where replays and desync bundles live: `replays`.
  public static let folder = "replays"

  /// The section names.
  static let manifestSection = "replay"
  static let startSection = "start"
  static let inputsSection = "inputs"
  static let keyframesSection = "keyframes"
  static let digestsSection = "digests"

  /// Where it was read from, for errors.
  public let path: String?
  /// The manifest.
  public let manifest: ReplayManifest
  /// The starting snapshot, a save file of the game's.
  public let start: [UInt8]
  /// The inputs, one per tick, as the format's values (`inputs` decodes them as the game's type).
  public let inputs: SaveValue
  /// The keyframes after the start: each tick and its delta on the keyframe before it (the
  /// start for the first).
  public let keyframes: [(tick: Int64, delta: [UInt8])]
  /// The digest timeline, oldest first.
  public let digests: [ReplayDigest]
  /// The bytes of each section, for `stasis replay info`'s sizes by part.
  public let sizes: [(part: String, bytes: Int)]
  /// The whole file's length.
  public let length: Int

  /// Reads a replay from its bytes; `path` names it in errors. A file that is not a replay, or
  /// whose parts do not fit together, is a `SaveFileError` naming the part.
  public init(bytes: [UInt8], path: String? = nil) throws(SaveFileError) {
    let document = try SaveFileFormat.decode(bytes, path: path)
    let header = try bytes.withUnsafeBytes { raw in
      Result { () throws(SaveFileError) in try SaveFileFormat.readHeader(raw, path: path) }
    }.get()
    try self.init(document: document, sections: header.sections, length: bytes.count, path: path)
  }

  /// Reads the replay at `path`.
  public init(contentsOf path: String, fileSystem: any FileSystem = PosixFileSystem()) throws(SaveFileError) {
    let bytes: [UInt8]
    do {
      bytes = try fileSystem.read(path, limit: FormatLimits.maxFileSize)
    } catch {
      throw SaveFileError("the replay could not be read", cause: error).inFile(path)
    }
    try self.init(bytes: bytes, path: path)
  }

  init(document: SaveDocument, sections: [SectionEntry], length: Int, path: String?) throws(SaveFileError) {
    func part(_ name: String) throws(SaveFileError) -> SaveSection {
      guard let section = document[section: name] else {
        throw Self.error("is not a replay: it has no '\(name)' section", part: name, path: path)
      }
      return section
    }
    guard case .tree(let manifestTree) = try part(Self.manifestSection).content else {
      throw Self.error("the manifest is not a value tree", part: Self.manifestSection, path: path)
    }
    let manifest = try Self.decode(ReplayManifest.self, manifestTree, part: Self.manifestSection, path: path)
    guard manifest.format <= ReplayManifest.currentFormat else {
      throw SaveFileError(
        .newerFormat, "replay format \(manifest.format); this build reads up to \(ReplayManifest.currentFormat)",
        context: .init(file: path, part: Self.manifestSection), suggestion: "update the game or the tool")
    }
    guard manifest.keyframeInterval > 0, manifest.digestInterval > 0, manifest.tickRate > 0, manifest.ticks >= 0,
      manifest.startTick >= 0, !manifest.startTick.addingReportingOverflow(manifest.ticks).overflow
    else {
      throw Self.error("the manifest's intervals, rate or length are out of range", part: "replay", path: path)
    }
    guard case .raw(let start) = try part(Self.startSection).content else {
      throw Self.error("the starting snapshot is not a file", part: Self.startSection, path: path)
    }
    let inputs = try Self.inputs(of: try part(Self.inputsSection), manifest: manifest, path: path)
    guard inputs.elementCount == Int(manifest.ticks) else {
      throw Self.error(
        "\(inputs.elementCount.map(String.init) ?? "no") inputs for \(manifest.ticks) ticks", part: Self.inputsSection,
        path: path)
    }
    guard case .tree(let keyframeTree) = try part(Self.keyframesSection).content,
      case .array(let keyframeValues) = keyframeTree
    else {
      throw Self.error("the keyframes are not a list", part: Self.keyframesSection, path: path)
    }
    var keyframes: [(tick: Int64, delta: [UInt8])] = []
    var previous = manifest.startTick
    for value in keyframeValues {
      let keyframe = try Self.decode(Keyframe.self, value, part: Self.keyframesSection, path: path)
      guard keyframe.tick > previous, keyframe.tick <= manifest.endTick else {
        throw Self.error(
          "keyframe at tick \(keyframe.tick) is out of order or past the end (\(manifest.endTick))",
          part: Self.keyframesSection, path: path)
      }
      previous = keyframe.tick
      keyframes.append((keyframe.tick, keyframe.delta))
    }
    guard case .tree(let digestTree) = try part(Self.digestsSection).content else {
      throw Self.error("the digests are not a value tree", part: Self.digestsSection, path: path)
    }
    // Only the digests are stored, 8 bytes each: the n-th is of tick startTick + n × K.
    let values = try Self.decode([StoredDigest].self, digestTree, part: Self.digestsSection, path: path)
    let interval = Int64(manifest.digestInterval)
    guard Int64(values.count) == manifest.ticks / interval else {
      throw Self.error(
        "\(values.count) digests for \(manifest.ticks) ticks at one every \(interval)", part: Self.digestsSection,
        path: path)
    }
    let digests = values.enumerated().map { index, value in
      ReplayDigest(tick: manifest.startTick + Int64(index + 1) * interval, digest: value.digest)
    }
    self.path = path
    self.manifest = manifest
    self.start = start
    self.inputs = inputs
    self.keyframes = keyframes
    self.digests = digests
    self.sizes = sections.map { ($0.name, $0.length) }
    self.length = length
  }

  /// The most the inputs' tree may be, as a multiple of its zstd frame.
  static let maxInputRatio = 4096
  /// The most the inputs' tree may be, whatever its frame.
  static let maxInputBytes = 64 << 20

  /// The inputs' tree: the section's own, or the tree its zstd frame holds.
  private static func inputs(of section: SaveSection, manifest: ReplayManifest, path: String?) throws(SaveFileError)
    -> SaveValue
  {
    switch (section.content, manifest.inputCompression) {
    case (.tree(let inputs), nil):
      return inputs
    case (.raw(let frame), "zstd"?):
      guard let length = manifest.inputBytes, length >= 0, length <= FormatLimits.maxFileSize else {
        throw error("the inputs' length is missing or out of range", part: inputsSection, path: path)
      }
      // A small file never makes the reader allocate much: what the frame holds is at most
      // 4,096 times its size (the demo's ten minutes are 141 times theirs), and 64 MiB at most
      // (ten hours of the demo's inputs are 11 MB).
      guard length <= max(1 << 20, frame.count * maxInputRatio), length <= maxInputBytes else {
        throw error(
          "the inputs claim \(length) bytes, more than \(maxInputRatio) times their \(frame.count)-byte frame "
            + "or \(maxInputBytes >> 20) MiB", part: inputsSection, path: path)
      }
      let decompressed = frame.withUnsafeBytes { raw in
        Result { () throws(Zstd.Failure) in try Zstd.decompress(raw, size: length) }
      }
      guard case .success(let tree) = decompressed else {
        throw Self.error(
          "the inputs' zstd frame does not decompress: \(KeyframeDelta.message(decompressed))", part: inputsSection,
          path: path
        )
      }
      do {
        return try SaveFileFormat.decodeTreeSection(tree)
      } catch {
        throw SaveFileError(
          .malformed, "the inputs' tree does not decode: \(error.message)",
          context: .init(file: path, part: inputsSection), offset: error.offset)
      }
    case (_, let compression?) where compression != "zstd":
      throw Self.error(
        "the inputs are compressed with '\(compression)', which this build cannot read", part: inputsSection, path: path
      )
    default:
      throw error("the inputs are not a value tree", part: inputsSection, path: path)
    }
  }

  /// The keyframe files: the start's, then each keyframe's, rebuilt from its delta. `upTo`
  /// stops after the keyframe at that index (0: the start alone). Each is a whole save: for a
  /// long replay of a large state, walk them with ``rebuild(keyframe:on:)`` instead.
  public func keyframeFiles(upTo last: Int? = nil) throws(SaveFileError) -> [(tick: Int64, file: [UInt8])] {
    var files = [(manifest.startTick, start)]
    var file = start
    for index in keyframes.indices where index < (last ?? keyframes.count) {
      file = try rebuild(keyframe: index, on: file)
      files.append((keyframes[index].tick, file))
    }
    return files
  }

  /// The file of keyframe `index`, from the one before it (`base`: the start's for the first).
  public func rebuild(keyframe index: Int, on base: [UInt8]) throws(SaveFileError) -> [UInt8] {
    let keyframe = keyframes[index]
    do {
      return try KeyframeDelta.apply(keyframe.delta, to: base, path: path)
    } catch {
      throw SaveFileError(
        .malformed, "keyframe at tick \(keyframe.tick) does not build on the one before: \(error.message)",
        context: .init(file: path, part: Self.keyframesSection), offset: error.offset)
    }
  }

  /// The keyframe at or before `tick` (the start when none is later): its index (0: the start)
  /// and tick.
  public func keyframe(atOrBefore tick: Int64) -> (index: Int, tick: Int64) {
    var found = (0, manifest.startTick)
    for (index, keyframe) in keyframes.enumerated() where keyframe.tick <= tick { found = (index + 1, keyframe.tick) }
    return found
  }

  /// The replay as a Stasis file.
  static func encode(
    game: GameIdentity, manifest: ReplayManifest, start: [UInt8], inputs: SaveValue,
    keyframes: [(tick: Int64, delta: [UInt8])], digests: [ReplayDigest], signingKey: SigningKey? = nil
  ) throws(SaveFileError) -> [UInt8] {
    let encoder = SaveValueEncoder()
    var manifest = manifest
    // Written by this build: its format (a replay continued from a format-1 file included).
    manifest.format = ReplayManifest.currentFormat
    // The inputs as a zstd frame of their tree encoding, when that is smaller.
    var inputsContent = SaveSection.Content.tree(inputs)
    let tree = inputs.canonicalBytes
    manifest.inputCompression = nil
    manifest.inputBytes = nil
    if let frame = tree.withUnsafeBytes({ Zstd.compress($0, level: 9) }), frame.count < tree.count {
      inputsContent = .raw(frame)
      manifest.inputCompression = "zstd"
      manifest.inputBytes = tree.count
    }
    let document = SaveDocument(
      game: game, createdAt: 0,
      summary: SaveSummary(
        frame: manifest.endTick, playTime: Double(manifest.ticks) / Double(manifest.tickRate), slot: "replay"),
      sections: [
        SaveSection(name: manifestSection, content: .tree(try encoder.encode(manifest))),
        SaveSection(name: startSection, content: .raw(start)),
        SaveSection(name: inputsSection, content: inputsContent),
        SaveSection(
          name: keyframesSection,
          content: .tree(try encoder.encode(keyframes.map { Keyframe(tick: $0.tick, delta: $0.delta) }))),
        SaveSection(
          name: digestsSection, content: .tree(try encoder.encode(digests.map { StoredDigest(digest: $0.digest) }))),
      ])
    return SaveFileFormat.encode(document, signingKey: signingKey)
  }

  /// A digest as the file stores it: its tick is its place in the timeline.
  private struct StoredDigest: BulkStorable {
    var digest: UInt64 = 0
    static let bulkLayout = BulkLayout(of: StoredDigest.self, [.field("digest", \.digest)])
  }

  private struct Keyframe: Codable {
    var tick: Int64
    var delta: [UInt8]
  }

  static func decode<T: Decodable>(_ type: T.Type, _ value: SaveValue, part: String, path: String?)
    throws(SaveFileError) -> T
  {
    do {
      return try SaveValueDecoder().decode(type, from: value)
    } catch {
      throw SaveFileError(error.kind, error.message, context: .init(file: path, part: part))
    }
  }

  static func error(_ message: String, part: String, path: String?) -> SaveFileError {
    SaveFileError(.malformed, message, context: .init(file: path, part: part))
  }
}

extension SaveValue {
  /// The number of elements of an array or a bulk array; nil for anything else.
  var elementCount: Int? {
    switch self {
    case .array(let values): values.count
    case .bulk(let bulk): bulk.count
    default: nil
    }
  }
}
