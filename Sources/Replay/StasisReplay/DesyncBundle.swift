import Stasis
import StasisMerge

/// What a verification found at the first divergence: the `desync` section of a bundle.
public struct DesyncReport: Codable, Sendable, Equatable {
  /// The replay's manifest.
  public var manifest: ReplayManifest
  /// The first tick whose digest (or keyframe) differed.
  public var tick: Int64
  /// The last tick whose digest matched (the start when none did): the divergence happened in
  /// the step to a tick after it, up to ``tick``.
  public var lastMatchingTick: Int64
  /// The digest the recording took at ``tick``.
  public var recordedDigest: UInt64
  /// The digest the replay reached there.
  public var replayedDigest: UInt64
  /// The keyframe the bundle's inputs start from: the last at or before ``lastMatchingTick``.
  public var keyframeTick: Int64
  /// Where the recorded and the replayed states are compared field by field: ``tick`` when a
  /// keyframe is there, else the first keyframe after it; nil when none is (the recorded state
  /// is known only at keyframes).
  public var comparedTick: Int64?
  /// The fields that differ there, as `stasis diff` prints them (recorded → replayed).
  public var differences: [String]
  /// In a bundle's file: the sections stored as deltas on its `keyframe` (where that made them
  /// smaller: the states a bundle compares are mostly the keyframe's bytes). Nil in memory,
  /// where the states are whole.
  var deltas: [String]?

  /// Whether ``tick`` is the exact tick of the divergence: its step is the first that went
  /// another way (the tick before it matched).
  public var isExact: Bool { tick &- lastMatchingTick == 1 }

  /// One line for people: `first divergence at tick 2000` (or `…between ticks 1941 and 2000`).
  public var summary: String {
    isExact
      ? "first divergence at tick \(tick)"
      : "first divergence at tick \(tick) (the step to a tick from \(lastMatchingTick &+ 1) to \(tick): digests every \(manifest.digestInterval) ticks)"
  }
}

/// One signed file a player's bug report carries: the replay's manifest, the keyframe before the
/// divergence, the inputs from it, the recorded and the replayed states where they were compared,
/// and the fields that differ. `stasis replay diff` prints it without the game.
///
/// Sections: `desync` (the ``DesyncReport``), `keyframe` (a save file), `inputs`, `recorded`
/// and `replayed` (save files at ``DesyncReport/comparedTick``), `divergent` (the replayed state
/// at ``DesyncReport/tick`` when that is earlier). The three states are stored as deltas on the
/// keyframe where that is smaller (the report in the file names them); this type reads them
/// whole.
public struct DesyncBundle: Sendable {
  static let reportSection = "desync"
  static let keyframeSection = "keyframe"
  static let inputsSection = "inputs"
  static let recordedSection = "recorded"
  static let replayedSection = "replayed"
  static let divergentSection = "divergent"

  /// What was found.
  public let report: DesyncReport
  /// The game that recorded.
  public let game: GameIdentity
  /// The recorded keyframe the inputs start from, a save file.
  public let keyframe: [UInt8]
  /// The inputs from the keyframe, as the format's values.
  public let inputs: SaveValue
  /// The recorded state at ``DesyncReport/comparedTick``, a save file; nil when none is known.
  public let recorded: [UInt8]?
  /// The replayed state there (at ``DesyncReport/tick`` when no recorded one is known).
  public let replayed: [UInt8]
  /// The replayed state at ``DesyncReport/tick``, when it was compared later.
  public let divergent: [UInt8]?

  /// The bundle as one Stasis file, signed when `signingKey` is given.
  public func encoded(signingKey: SigningKey? = nil) throws(SaveFileError) -> [UInt8] {
    // Each state as a delta on the keyframe where that is smaller: a bundle of a large game
    // carries its keyframe once, and what the states changed since.
    var report = report
    var states: [SaveSection] = []
    var deltas: [String] = []
    for (name, file) in [
      (Self.replayedSection, Optional(replayed)), (Self.recordedSection, recorded), (Self.divergentSection, divergent),
    ] {
      guard let file else { continue }
      let delta = KeyframeDelta.make(from: keyframe, to: file)
      if delta.count < file.count {
        deltas.append(name)
        states.append(SaveSection(name: name, content: .raw(delta)))
      } else {
        states.append(SaveSection(name: name, content: .raw(file)))
      }
    }
    report.deltas = deltas.isEmpty ? nil : deltas.sorted()
    var sections = [
      SaveSection(name: Self.reportSection, content: .tree(try SaveValueEncoder().encode(report))),
      SaveSection(name: Self.keyframeSection, content: .raw(keyframe)),
      SaveSection(name: Self.inputsSection, content: .tree(inputs)),
    ]
    sections += states
    let document = SaveDocument(
      game: game, createdAt: 0,
      summary: SaveSummary(frame: report.tick, playTime: 0, slot: "desync"),
      sections: sections.sorted { $0.name < $1.name })
    return SaveFileFormat.encode(document, signingKey: signingKey)
  }

  /// Reads a bundle; `path` names it in errors. With `signing`, an unsigned or wrongly signed
  /// bundle is refused as a save would be.
  public init(bytes: [UInt8], path: String? = nil, signing: SigningPolicy = .none) throws(SaveFileError) {
    let document = try SaveFileFormat.decode(bytes, path: path, signing: signing)
    var asDeltas: Set<String> = []
    var keyframeFile: [UInt8] = []
    func raw(_ name: String) throws(SaveFileError) -> [UInt8]? {
      guard let section = document[section: name] else { return nil }
      guard case .raw(let bytes) = section.content else {
        throw ReplayFile.error("'\(name)' is not a file", part: name, path: path)
      }
      guard asDeltas.contains(name) else { return bytes }
      do {
        // A state is about its keyframe's size: a delta that builds far more is hostile (a
        // server reads bundles from players), refused before it allocates.
        return try KeyframeDelta.apply(bytes, to: keyframeFile, limit: max(1 << 20, keyframeFile.count * 4), path: path)
      } catch {
        throw ReplayFile.error("'\(name)' does not build on the keyframe: \(error.message)", part: name, path: path)
      }
    }
    guard case .tree(let reportTree)? = document[section: Self.reportSection]?.content else {
      throw ReplayFile.error("is not a desync bundle: it has no 'desync' section", part: Self.reportSection, path: path)
    }
    let report = try ReplayFile.decode(DesyncReport.self, reportTree, part: Self.reportSection, path: path)
    let states: Set<String> = [Self.replayedSection, Self.recordedSection, Self.divergentSection]
    guard Set(report.deltas ?? []).isSubset(of: states) else {
      throw ReplayFile.error(
        "only the states may be deltas on the keyframe, not \(report.deltas ?? [])", part: Self.reportSection,
        path: path)
    }
    guard case .tree(let inputs)? = document[section: Self.inputsSection]?.content,
      let keyframe = try raw(Self.keyframeSection)
    else {
      throw ReplayFile.error(
        "a desync bundle needs its keyframe, inputs and replayed state", part: Self.keyframeSection, path: path)
    }
    asDeltas = Set(report.deltas ?? [])
    keyframeFile = keyframe
    guard let replayed = try raw(Self.replayedSection) else {
      throw ReplayFile.error(
        "a desync bundle needs its keyframe, inputs and replayed state", part: Self.replayedSection, path: path)
    }
    guard report.keyframeTick <= report.lastMatchingTick, report.lastMatchingTick < report.tick,
      report.comparedTick.map({ $0 >= report.tick }) ?? true
    else {
      throw ReplayFile.error(
        "the divergence's ticks are out of order (keyframe \(report.keyframeTick), last match "
          + "\(report.lastMatchingTick), divergence \(report.tick))", part: Self.reportSection, path: path)
    }
    var whole = report
    whole.deltas = nil
    self.report = whole
    game = document.game
    self.keyframe = keyframe
    self.inputs = inputs
    self.replayed = replayed
    recorded = try raw(Self.recordedSection)
    divergent = try raw(Self.divergentSection)
  }

  init(
    report: DesyncReport, game: GameIdentity, keyframe: [UInt8], inputs: SaveValue, recorded: [UInt8]?,
    replayed: [UInt8], divergent: [UInt8]?
  ) {
    self.report = report
    self.game = game
    self.keyframe = keyframe
    self.inputs = inputs
    self.recorded = recorded
    self.replayed = replayed
    self.divergent = divergent
  }

  /// The recorded and the replayed states' differences, as `stasis diff` prints them
  /// (recorded first); empty when no recorded state is known.
  public func differences() throws(SaveFileError) -> [SaveDifference] {
    guard let recorded else { return [] }
    return SaveDifference.between(try SaveFileFormat.decode(recorded), try SaveFileFormat.decode(replayed))
  }

  /// Writes the bundle to `SAVES/replays/NAME.desync.stasis` durably, signed with the store's
  /// current key when it signs; returns its path.
  @discardableResult
  public func write(named name: String, to store: SaveStore) throws(SaveFileError) -> String {
    let file = "\(name).desync.stasis"
    try store.writeFile(try encoded(signingKey: store.signing.current), named: file, inFolder: ReplayFile.folder)
    return "\(store.directory)/\(ReplayFile.folder)/\(file)"
  }

  /// Writes the bundle beside the replay at `replay` (`NAME.stasis` → `NAME.desync.stasis`),
  /// durably, signed with `signingKey` when given; returns its path.
  @discardableResult
  public func write(besides replay: String, signingKey: SigningKey? = nil) throws(SaveFileError) -> String {
    let slash = replay.lastIndex(of: "/")
    let folder = slash.map { replay[..<$0].isEmpty ? "/" : String(replay[..<$0]) } ?? "."
    let name = slash.map { String(replay[replay.index(after: $0)...]) } ?? replay
    let file = (name.hasSuffix(".stasis") ? String(name.dropLast(7)) : name) + ".desync.stasis"
    try SaveStore(directory: folder).writeFile(try encoded(signingKey: signingKey), named: file, inFolder: ".")
    return folder == "/" ? "/\(file)" : "\(folder)/\(file)"
  }
}
