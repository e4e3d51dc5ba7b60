/// What the coordinator did with a save or a load.
public enum SaveEvent: Sendable, Equatable, CustomStringConvertible {
  /// A save became durable; `summary` is the snapshot's.
  case saved(SaveReason, SaveReceipt, summary: SaveSummary)
  /// A save failed or was cancelled (an expired budget).
  case saveFailed(SaveReason, SaveFileError, summary: SaveSummary)
  /// A save was restored: its generation, what was passed over, what happened on the way in.
  case restored(generation: Int, summary: SaveSummary, skipped: [String], report: LoadReport)
  /// Coming back, the game kept its in-memory state, which is newer than anything on disk.
  case keptMemory(reason: String)
  /// Nothing could be restored.
  case loadFailed(SaveFileError)
  /// The game is held (paused, its steps waiting, saving nothing), and has been `for` this long:
  /// said when the hold begins (`for: .zero`) and again every
  /// ``SaveCoordinator/holdNoticeInterval`` while it lasts.
  case held(HoldReason, for: Duration)

  /// True for ``held(_:for:)``.
  public var isHold: Bool {
    if case .held = self { return true }
    return false
  }

  /// One line: `save: autosave generation 3 at frame 360, 9387 bytes, durable in 2 ms`.
  public var description: String {
    switch self {
    case .saved(let reason, let receipt, let summary):
      switch receipt.outcome {
      case .written:
        let ms = Int((receipt.encodeDuration + receipt.writeDuration).inMilliseconds.rounded())
        return
          "save: \(reason.rawValue) generation \(receipt.generation) at frame \(summary.frame), \(receipt.bytes) bytes, durable in \(ms) ms"
      case .unchanged:
        return
          "save: \(reason.rawValue) at frame \(summary.frame) unchanged: generation \(receipt.generation) holds this state"
      case .superseded:
        return
          "save: \(reason.rawValue) at frame \(summary.frame) superseded by a newer snapshot, durable as generation \(receipt.generation)"
      }
    case .saveFailed(let reason, let error, let summary):
      return "save: \(reason.rawValue) at frame \(summary.frame) failed: \(error)"
    case .restored(let generation, let summary, let skipped, let report):
      let fallback = skipped.isEmpty ? "" : "; \(skipped.joined(separator: "; "))"
      return "load: restored generation \(generation) at frame \(summary.frame)\(fallback)"
        + (report.lines.isEmpty ? "" : " [\(report.lines.joined(separator: "; "))]")
    case .keptMemory(let reason): return "load: kept the in-memory state: \(reason)"
    case .loadFailed(let error): return "load: nothing restored: \(error)"
    case .held(let reason, let duration):
      let seconds = Int(duration.components.seconds)
      return "hold: the game is held \(reason)" + (seconds > 0 ? " (for \(seconds) s)" : "")
    }
  }
}

/// Why a save was made.
public enum SaveReason: String, Sendable, Equatable {
  /// Every N steps while playing.
  case autosave
  /// The game went to the background.
  case background
  /// The process is quitting.
  case terminate
  /// The game or the player asked.
  case manual
}
