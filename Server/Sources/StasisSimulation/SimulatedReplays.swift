import Stasis
import StasisReplay

/// The simulated game's replays (issue 45): each device records its run, one frame a tick, into
/// `/saves/replays/` on its own simulated disk, through the library's `ReplayRecorder`; a trip to
/// the background and a quit flush it, a kill loses what was not flushed, and a cold start that
/// restored the frame the replay ends on goes on in it. Whatever else moves the game (a restore
/// of another state, another device's save taken on a return, a merge) starts a new replay:
/// one replay is one line of steps.
///
/// The invariant (``Invariant/replaysVerify``): at the end of a run, every replay on every
/// device plays back through the game's step to every recorded digest and keyframe.
enum SimulatedReplays {
  /// What one frame's step reads besides the state: the draws the simulation made for it.
  struct Step: Codable, Sendable, Equatable {
    /// The score's draw.
    var draw: Int64
    /// On a play's last frame: the ledger's new entry (0 on the other frames).
    var ledgerEntry: Int64 = 0
    /// On a play's last frame: whether the player goes down a level, and then how many
    /// creatures the new level has.
    var descends = false
    var creatures: Int64 = 0
    /// On a play's last frame on the same level: the creature that moves, and where to.
    var moved: Int64 = -1
    var position: Int64 = 0
  }

  /// The game's step: the model at a frame and that frame's draws give the next frame's model.
  /// `hidden`, in a run planting ``PlantedBug/stepReadsHiddenState``, is state the step reads
  /// that no state holds (a counter of the run's steps): a replay cannot reproduce it.
  static func step(_ model: inout GameModel, _ step: Step, hidden: Int64 = 0) {
    model.frame += 1
    model.score = model.score &* 31 &+ step.draw &+ hidden
    guard step.ledgerEntry != 0 else { return }
    model.ledger.append(step.ledgerEntry)
    if step.descends {
      model.depth += 1
      model.creatures = (0..<step.creatures).map { model.depth * 1000 + $0 }
    } else if step.moved >= 0, Int(step.moved) < model.creatures.count {
      model.creatures[Int(step.moved)] = model.depth * 1000 + step.position
    }
  }

  /// The replays' states: the model, whole.
  static let codec = SaveCodec<GameModel>(game: GameIdentity(name: "stasis-sim", build: "replays", schemaVersion: 1))

  /// Everything the next step reads.
  static let scope = DigestScope<GameModel>("sim model, v1") { model, hasher in
    hasher.combine(model.frame)
    hasher.combine(model.score)
    hasher.combine(model.depth)
    hasher.combine(contentsOf: model.creatures)
    hasher.combine(contentsOf: model.ledger)
  }

  /// A keyframe only where the run flushes (a trip to the background, a quit, the end): every
  /// write is one the simulation waits for, so no write of the recorder's worker interleaves
  /// with the run's other disk operations and a seed replays the same.
  static let keyframeInterval = Int(Int32.max)

  typealias Recorder = ReplayRecorder<GameModel, Step>

  /// State the step reads that no state holds: a count of the run's steps, kept by the run
  /// planting ``PlantedBug/stepReadsHiddenState`` (so its seed replays), as a `static var` would
  /// be kept by a game.
  final class HiddenState {
    private var steps: Int64 = 0

    func next() -> Int64 {
      steps += 1
      return steps
    }
  }
}

extension SimulatedDevice {
  /// The replay to record `model`'s next steps into: the one recording, while `model` is the
  /// state its last step reached; after a cold start, the replay of the process before when it
  /// ends on `model`; else a new one. Nil (and the trace says why) when none can be recorded.
  func recorder(
    continuingFrom model: GameModel, note: (String) -> Void, wentOn: () -> Void
  ) -> SimulatedReplays.Recorder? {
    guard let store else { return nil }
    if let replay {
      if replay.tick == model.frame, replay.continues(from: model) { return replay }
      note("\(name): the game moved to another state (frame \(model.frame)); a new replay")
      if let failure = flushReplay() { note("\(name): the replay's last batch could not be written: \(failure)") }
      self.replay = nil
    } else if let replayName {
      do {
        if let continued = try SimulatedReplays.Recorder(
          continuing: replayName, store: store, codec: SimulatedReplays.codec, digest: SimulatedReplays.scope,
          state: model, tick: model.frame)
        {
          note("\(name): goes on recording \(replayName) at frame \(model.frame)")
          wentOn()
          replay = continued
          return continued
        }
      } catch {
        note("\(name): \(replayName) cannot go on: \(error)")
      }
    }
    replaysStarted += 1
    let named = "\(name)-\(replaysStarted)"
    do {
      replay = try SimulatedReplays.Recorder(
        named, store: store, codec: SimulatedReplays.codec, start: model, startTick: model.frame, seed: 0,
        digest: SimulatedReplays.scope, keyframeInterval: SimulatedReplays.keyframeInterval)
      replayName = named
    } catch {
      note("\(name): no replay: \(error)")
      replay = nil
    }
    return replay
  }

  /// Writes what the replay recorded so far, with a keyframe of the state it reached, and
  /// waits for it; the failure, if the write failed (the file stays as it was).
  func flushReplay() -> String? {
    guard let replay, let model else { return nil }
    replay.flush(keyframing: replay.tick == model.frame && replay.continues(from: model) ? model : nil)
    do {
      try replay.waitUntilWritten()
      return nil
    } catch {
      return error.description
    }
  }

  /// The replays on the disk: their names in `/saves/replays/` and bytes, by name.
  func replaysOnDisk() -> [(name: String, bytes: [UInt8])] {
    let folder = "\(Self.directory)/\(ReplayFile.folder)"
    let names = ((try? disk.contents(ofDirectory: folder)) ?? []).filter {
      $0.hasSuffix(".stasis") && !$0.hasPrefix(".") && !$0.hasSuffix(".desync.stasis")
    }.sorted()
    return names.compactMap { name in disk.contents(of: "\(folder)/\(name)").map { (name, $0) } }
  }
}
