import Stasis

/// What became of a delete.
package enum DeleteOutcome: Sendable, Equatable {
  /// The slot and its revisions are gone; its revision numbers are not reused.
  case deleted
  /// The precondition did not hold.
  case stale(head: RevisionMetadata)
  /// No such slot.
  case notFound
}

/// What became of discarding one revision.
package enum DiscardOutcome: Sendable, Equatable {
  /// The revision and its bytes are gone; its number is not reused.
  case discarded
  /// The revision is the slot's head: a head is never discarded (delete the slot instead).
  case head
  /// No such slot or revision.
  case notFound
}

/// What became of an upload.
package enum PutOutcome: Sendable, Equatable {
  /// Stored and committed.
  case created(RevisionMetadata)
  /// The precondition did not hold: the head is this (nil when the slot does not exist).
  case stale(head: RevisionMetadata?)
  /// Storing it would pass the player's bytes limit; the message says by how much.
  case overLimit(String)
  /// It would be a slot past the player's slot limit.
  case tooManySlots(String)
  /// The conflict's loser the upload named is not a revision of the slot.
  case unknownLoser(Int64)
}

/// The precondition an upload or a delete carries.
package enum WritePrecondition: Sendable, Equatable {
  /// `If-None-Match: *`: the slot must not exist (it may have existed and been deleted).
  case create
  /// `If-Match: "N"`: the slot's head must be revision N.
  case head(Int64)

  /// The head it names; nil for ``create``.
  var expected: Int64? {
    if case .head(let head) = self { head } else { nil }
  }
}

/// What became of merging a device's settings into the player's.
package enum SettingsMerge: Sendable, Equatable {
  /// Committed: the player's settings now, and how many of the device's keys were taken.
  case merged(SettingsFile, taken: Int)
  /// The merged settings would take more than the player's limit; nothing was written.
  case overLimit(String)
}
