/// How far a load may fall back past generations that do not load.
public enum LoadFallback: Sendable, Equatable {
  /// Past damaged generations (a checksum, a truncation, an invalid state) only. A newest
  /// generation this build cannot read (newer schema or format, another key) stops the load
  /// with its own error: playing on from an older one would hide the newer progress.
  case pastDamaged
  /// Past anything, unreadable generations included; the result lists them in `skipped`.
  /// They stay in the slot, untouched.
  case pastUnreadable
}

/// What a save does when the slot's newest generation is one this build cannot read.
public enum UnreadableNewest: Sendable, Equatable {
  /// Refuse with ``SaveFileError/Kind/newerSaveInSlot``: a newer build would otherwise find
  /// an older build's save on top of its own.
  case refuse
  /// Save as the next generation anyway, alongside it; the unreadable one is kept.
  case saveAlongside
}
