/// A loaded save: the state, where it came from, what happened on its way into the current
/// types, and the newer generations that were passed over.
public struct LoadedSave<State: Sendable>: Sendable {
  /// The restored state.
  public var state: State
  /// The whole document, unknown sections included.
  public var document: SaveDocument
  /// The generation it came from.
  public var generation: Int
  /// Its file.
  public var path: String
  /// Migrations run, fields defaulted or dropped by declaration, unknown sections kept.
  public var report: LoadReport
  /// Newer generations that failed a check or that this build cannot read, newest first,
  /// with why. Nothing was deleted: they are all still in the slot.
  public var skipped: [(generation: Int, error: SaveFileError)]
  /// True when a newer generation was passed over and an older one was used.
  public var fellBack: Bool { !skipped.isEmpty }

  /// One sentence for a log or a player: `generation 5 is damaged (checksum mismatch in
  /// section 'physics' at byte 812); loaded generation 4`; nil when nothing was passed over.
  public var fallbackDescription: String? {
    skipped.isEmpty ? nil : (skippedDescriptions + ["loaded generation \(generation)"]).joined(separator: "; ")
  }

  /// Each generation passed over, as `generation 5 is damaged (checksum mismatch in section
  /// 'physics' at byte 812: ...)`.
  public var skippedDescriptions: [String] {
    skipped.map { entry in
      let what = entry.error.isUnreadableByThisBuild ? "cannot be read by this build" : "is damaged"
      return "generation \(entry.generation) \(what) (\(entry.error.location): \(entry.error.message))"
    }
  }
}
