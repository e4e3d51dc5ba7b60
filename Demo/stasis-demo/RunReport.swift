import Foundation
import Stasis
import StasisDemoGame

/// What a run prints at its end and while it goes: the summary (text, `--json`, the digest)
/// and the trace. Shared by the headless and the window runners.
@MainActor
struct RunReport {
  let options: StasisDemo

  func finish(app: Application, game: Game, cloud: [String: Any]? = nil) -> Int32 {
    let state = game.engine.state
    let digest = state.digest
    // A failed load that a later restore (the cloud's head) made good is not a failure.
    let lastLoad = game.coordinator.events.last { $0.isRestore || $0.loadError != nil }
    let failed =
      game.coordinator.events.contains {
        if case .saveFailed = $0 { return true }
        return false
      } || lastLoad?.loadError != nil
    if options.json {
      print(summaryJSON(app: app, game: game, digest: digest, cloud: cloud))
    } else if !options.printDigest || options.trace {
      print(
        "frame \(state.level.runFrame), level \(state.level.index), score \(state.score.points), "
          + "\(game.coordinator.events.filter { if case .saved = $0 { return true } else { return false } }.count) saves"
      )
    }
    if options.printDigest { print("digest: \(digest)") }
    return failed ? 1 : 0
  }

  /// This process's peak resident memory (`VmHWM` in /proc/self/status), for the benchmark's
  /// memory figure: a parent's `RUSAGE_CHILDREN` would count the parent's own pages, which a
  /// spawned child carries until it executes.
  static func peakResidentKB() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return nil }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
  }

  func summaryJSON(app: Application, game: Game, digest: String, cloud: [String: Any]? = nil) -> String {
    let state = game.engine.state
    var saves: [[String: Any]] = []
    var failures: [[String: Any]] = []
    var restoredFrom: Any = NSNull()
    for event in game.coordinator.events {
      switch event {
      case .saved(let reason, let receipt, let summary):
        let outcome: String
        switch receipt.outcome {
        case .written: outcome = "written"
        case .unchanged: outcome = "unchanged"
        case .superseded: outcome = "superseded"
        }
        saves.append([
          "kind": reason.rawValue, "generation": receipt.generation, "frame": summary.frame, "bytes": receipt.bytes,
          "milliseconds": (receipt.encodeDuration + receipt.writeDuration).inMilliseconds, "outcome": outcome,
        ])
      case .saveFailed(let reason, let error, let summary):
        failures.append([
          "kind": reason.rawValue, "frame": summary.frame, "error": error.kind.rawValue, "message": error.description,
        ])
      case .restored(let generation, let summary, let skipped, let report):
        restoredFrom =
          [
            "generation": generation, "frame": summary.frame, "skipped": skipped,
            "report": [
              "storedSchema": report.storedSchema, "currentSchema": report.currentSchema,
              "migrations": report.migrations.map(\.description), "defaultedFields": report.defaultedFields,
              "droppedFields": report.droppedFields, "unknownSections": report.unknownSections,
            ] as [String: Any],
          ] as [String: Any]
      default: break
      }
    }
    let episodes: [[String: Any]] = app.backgroundEpisodes.map { episode in
      var entry: [String: Any] = [
        "reason": episode.reason.rawValue, "durationMs": episode.duration.inMilliseconds,
        "budgetLeftMs": episode.budgetLeft.inMilliseconds, "outcome": episode.outcome.name,
      ]
      if case .expired(let cut) = episode.outcome { entry["cutTasks"] = cut }
      return entry
    }
    var summary: [String: Any] = [
      "frame": state.level.runFrame, "level": state.level.index, "score": state.score.points,
      "highScore": state.score.highScore, "multiplier": state.score.multiplier,
      "levelsFinished": state.level.levelsFinished, "digest": digest, "saves": saves, "saveFailures": failures,
      "backgroundEpisodes": episodes, "restoredFrom": restoredFrom,
      "events": game.coordinator.events.map(\.description),
      "slot": options.slot, "bodies": state.physics.bodies.count,
      "bodiesAsleep": state.physics.bodies.filter(\.isAsleep).count,
      "peakResidentKB": Self.peakResidentKB() ?? NSNull(),
    ]
    if let cloud { summary["cloud"] = cloud }
    let data = (try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])) ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self)
  }

  func installTrace(app: Application, game: Game) {
    for event in LifecycleEvent.allCases {
      app.addObserver(for: event) { _ in traceLine("lifecycle: \(event.rawValue)") }
    }
    app.addBackgroundTaskObserver { event in traceLine("task: \(event)") }
    app.addEnvironmentObserver { _, change in traceLine("environment: \(change.kind) \(change.value)") }
    app.addEpisodeObserver { episode in traceLine("episode: \(episode.description)") }
    game.coordinator.onEvent = { event in traceLine(event.description) }
  }
}

/// Prints a trace line and flushes at once: scripts and tests read it while the demo runs.
func traceLine(_ text: String) {
  print(text)
  fflush(nil)
}

extension SaveEvent {
  /// True for a restore.
  var isRestore: Bool {
    if case .restored = self { return true }
    return false
  }

  /// The error of a failed load.
  var loadError: SaveFileError? {
    if case .loadFailed(let error) = self { return error }
    return nil
  }
}
