/// Why a save file could not be read or written: what failed, in which file, in which part,
/// at which byte, and what the user can do. Its description is one line a player can paste
/// into a bug report.
///
/// ```
/// Saves/autosave/00000007.stasis: checksum mismatch in section 'physics' at byte 1184: ...
/// ```
public struct SaveFileError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of failure, stable for scripts (`stasis inspect --json` prints its
  /// ``rawValue``). Each kind means one thing, and says what the game or the player can do.
  ///
  /// A struct with static members, as GRDB's `ResultCode` is, not an enum: a kind added in a
  /// later version breaks no one's `switch`, which needs a `default:` (adding cases to the enum
  /// broke adopters' switches in 0.10). `case .io:` matches as before.
  public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind's stable name, as scripts see it.
    public let rawValue: String

    /// A kind by its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// The file ends before a part that it announces.
    public static let truncated = Kind(rawValue: "truncated")
    /// The file does not start with the Stasis magic number: not a save file.
    public static let badMagic = Kind(rawValue: "badMagic")
    /// Written by a newer format version than this reader knows.
    public static let newerFormat = Kind(rawValue: "newerFormat")
    /// Written by a newer schema version of the game than the reader's.
    public static let newerSchema = Kind(rawValue: "newerSchema")
    /// A checksum does not match the bytes it covers.
    public static let checksumMismatch = Kind(rawValue: "checksumMismatch")
    /// A structure is inconsistent (bad tag, overlapping sections, invalid UTF-8, ...).
    public static let malformed = Kind(rawValue: "malformed")
    /// A count, length or depth exceeds the format's documented limits.
    public static let limitExceeded = Kind(rawValue: "limitExceeded")
    /// The signature does not match: the file was edited or signed with another key.
    public static let signatureMismatch = Kind(rawValue: "signatureMismatch")
    /// A signing key was given but the file is not signed, or the file is unsigned in a slot
    /// whose saves are signed. Reading it is refused; a write is refused as ``signingRequired``.
    public static let unsigned = Kind(rawValue: "unsigned")
    /// A value does not fit the type being decoded or encoded (a wrong type, a value out of
    /// range). A field the type needs that the save lacks is ``missingField``.
    public static let typeMismatch = Kind(rawValue: "typeMismatch")
    /// A field the type needs is not in the save, and the type gives it no default
    /// (``SaveDefaults``): a field added, or renamed without a migration.
    public static let missingField = Kind(rawValue: "missingField")
    /// The save was written by another game (its header names another game identity).
    public static let anotherGame = Kind(rawValue: "anotherGame")
    /// A migration for an older schema failed or is missing.
    public static let migrationFailed = Kind(rawValue: "migrationFailed")
    /// The operating system refused an operation (open, write, fsync, rename, ...); ``cause``
    /// names the call and its errno. Retry later, or free space; the previous save stands.
    public static let io = Kind(rawValue: "io")
    /// Where Stasis expects a regular file (a save, a settings or timers file, a slot's hidden
    /// record) there is something else: a folder, a link, a device. Stasis neither reads
    /// through it nor replaces it; a person or a tool put it there, and removes it.
    public static let notARegularFile = Kind(rawValue: "notARegularFile")
    /// A slot name that could leave the save folder or is otherwise unusable.
    public static let invalidSlotName = Kind(rawValue: "invalidSlotName")
    /// A slot of that name already exists (a copy or rename onto it).
    public static let slotExists = Kind(rawValue: "slotExists")
    /// The generation is the slot's only one: discarding it would empty the slot (delete the
    /// slot instead).
    public static let onlyGeneration = Kind(rawValue: "onlyGeneration")
    /// A slot file's name (one of the small files beside a slot's generations: the sync's
    /// `.cloud`, the kept list `.kept`) is not 1–32 lowercase letters, digits and dashes.
    public static let invalidSlotFileName = Kind(rawValue: "invalidSlotFileName")
    /// The name before 0.11, when the slot files were called records.
    @available(*, deprecated, renamed: "invalidSlotFileName")
    public static var invalidRecordName: Kind { .invalidSlotFileName }
    /// Nothing is where the name points: a slot with no save at all, or a save folder, a file
    /// or a part of a file that does not exist. (A slot that has saves, but not the generation
    /// asked for, is ``noSuchGeneration``.)
    public static let notFound = Kind(rawValue: "notFound")
    /// The slot has saves, but not the generation asked for (pruned, discarded, or never
    /// written); ``SaveStore/listGenerations(of:)`` lists those it has.
    public static let noSuchGeneration = Kind(rawValue: "noSuchGeneration")
    /// The save was cancelled (for example by an expired background budget).
    public static let cancelled = Kind(rawValue: "cancelled")
    /// Nothing was saved, or the choice was refused: the coordinator holds the game.
    /// ``SaveFileError/hold`` says what holds it (the coordinator's own type, ``HoldReason``):
    /// a restore failure until ``SaveCoordinator/resolveRestoreFailure(_:)`` answers, or a
    /// catch-up with the server until it ends.
    public static let held = Kind(rawValue: "held")
    /// Two saves cannot be merged: no longer thrown. A merge's refusal is the merge layer's own
    /// error, `StasisMerge`'s `MergeRefusal`, whose kind says why.
    @available(*, deprecated, message: "a refused merge is StasisMerge's MergeRefusal (MergeOutcome.refused)")
    public static let notMergeable = Kind(rawValue: "notMergeable")
    /// Every checksum is right but a value is one the game cannot use: its
    /// ``ValidatedSaveState`` check refused it, naming the field.
    public static let invalidState = Kind(rawValue: "invalidState")
    /// The file read and decoded, and the game's own `restore` threw on it: the game would not
    /// take that state (its error is ``SaveFileError/underlyingError``). The coordinator falls
    /// back to the generation before. (Before 0.11 this was ``invalidState``.)
    public static let refusedByGame = Kind(rawValue: "refusedByGame")
    /// A write without a signature into a slot whose saves are signed: nothing was written.
    /// Sign it with the slot's key, or reset the slot's signing on purpose
    /// (``SaveStore/resetSigning(of:)``). (Before 0.11 this was ``unsigned``, which now means
    /// only a file read without a signature it needs.)
    public static let signingRequired = Kind(rawValue: "signingRequired")
    /// The save has a field the current type does not decode, and no migration or
    /// ``SaveRemovedFields`` declaration says it may be dropped: loading would lose it silently.
    public static let droppedField = Kind(rawValue: "droppedField")
    /// The slot's newest generation is one this build cannot read (newer schema or format,
    /// another key); saving on top would hide it from the build that can. The coordinator
    /// holds the game (``SaveCoordinator/restoreFailure``); a newer build reads it. (A slot that
    /// merely changed since it was read is ``slotChanged``.)
    public static let newerSaveInSlot = Kind(rawValue: "newerSaveInSlot")
    /// Another writer holds the slot's lock and did not release it in time.
    public static let locked = Kind(rawValue: "locked")
    /// An older build saved beside a newer build's save (a new game or a start-over): the slot
    /// holds both, kept, and the newer build asks which to play.
    public static let savedAlongside = Kind(rawValue: "savedAlongside")
    /// The slot changed between a read and a write that depended on it: another writer (the
    /// game, a sync, another process) saved first, and nothing was written. Read the slot again
    /// and decide again. (Before 0.11 this was ``newerSaveInSlot``, which now means only a newest
    /// generation this build cannot read.)
    public static let slotChanged = Kind(rawValue: "slotChanged")
  }

  /// Where in the file the failure is.
  public struct Context: Sendable, Equatable {
    /// The file's path, when known.
    public var file: String?
    /// The part: `header`, `trailer`, `signature`, or a section's name.
    public var part: String?
    /// The field path inside the part, e.g. `level.checkpoint`.
    public var field: String?

    /// Creates a context.
    public init(file: String? = nil, part: String? = nil, field: String? = nil) {
      self.file = file
      self.part = part
      self.field = field
    }
  }

  /// What kind of failure.
  public var kind: Kind
  /// What happened, in words.
  public var message: String
  /// Which file, part and field.
  public var context: Context
  /// The byte offset in the file, when the failure has one.
  public var offset: Int?
  /// What the user can do about it, when there is something.
  public var suggestion: String?
  /// The file-system call that failed, for ``Kind/io`` errors: decisions read this, never
  /// the message.
  public var cause: FileSystemError?
  /// The error this one wraps, as its thrower made it: a file-system call's
  /// ``FileSystemError``, a migration's own error, the game's refusal of a state, a
  /// `DecodingError` or an `EncodingError`. Decide by it, not by ``message``, which is for people.
  public var underlyingError: (any Error)?
  /// For ``Kind/held``: the hold that refused the save or the answer: a restore failure to
  /// answer, or a catch-up whose write is under way, to wait for. Decide by it, not by
  /// ``message``.
  public var hold: HoldReason?

  /// Creates an error; `underlyingError` is the error it wraps (the file-system `cause`'s when
  /// none is given).
  public init(
    _ kind: Kind, _ message: String, context: Context = Context(), offset: Int? = nil, suggestion: String? = nil,
    cause: FileSystemError? = nil, underlyingError: (any Error)? = nil
  ) {
    self.kind = kind
    self.message = message
    self.context = context
    self.offset = offset
    self.suggestion = suggestion
    self.cause = cause
    self.underlyingError = underlyingError ?? cause
  }

  /// Equal when every field is, and the wrapped errors are of one type and print alike.
  public static func == (a: SaveFileError, b: SaveFileError) -> Bool {
    a.kind == b.kind && a.message == b.message && a.context == b.context && a.offset == b.offset
      && a.suggestion == b.suggestion && a.cause == b.cause
      && a.underlyingError.map { String(reflecting: $0) } == b.underlyingError.map { String(reflecting: $0) }
      && a.hold == b.hold
  }

  /// An I/O error around a failed call: the message says what Stasis was doing, the cause
  /// keeps the call, the errno and the path, and the suggestion says what the user can do.
  public init(_ what: String, cause: FileSystemError) {
    self.init(.io, "\(what): \(cause)", context: .init(file: cause.path), cause: cause)
    switch cause.errno {
    case .readOnlyFileSystem: suggestion = "the save folder is read-only"
    case .noSpace, .quotaExceeded: suggestion = "the disk is full: free some space"
    case .permissionDenied, .notPermitted: suggestion = "this user may not write the save folder"
    default: break
    }
  }

  /// The same error, naming the file.
  public func inFile(_ path: String) -> SaveFileError {
    var copy = self
    copy.context.file = path
    return copy
  }

  /// The kind in words, for the one-line description.
  public var kindDescription: String {
    switch kind {
    case .truncated: return "truncated"
    case .badMagic: return "not a Stasis save"
    case .newerFormat: return "newer format version"
    case .newerSchema: return "newer schema version"
    case .checksumMismatch: return "checksum mismatch"
    case .malformed: return "malformed"
    case .limitExceeded: return "limit exceeded"
    case .signatureMismatch: return "signature mismatch"
    case .unsigned: return "not signed"
    case .typeMismatch: return "type mismatch"
    case .missingField: return "missing field"
    case .anotherGame: return "another game's save"
    case .migrationFailed: return "migration failed"
    case .io: return "I/O error"
    case .notARegularFile: return "not a regular file"
    case .invalidSlotName: return "invalid slot name"
    case .slotExists: return "slot exists"
    case .onlyGeneration: return "only generation"
    case .invalidSlotFileName: return "invalid slot file name"
    case .notFound: return "not found"
    case .noSuchGeneration: return "no such generation"
    case .cancelled: return "cancelled"
    case .held: return "held"
    case Kind(rawValue: "notMergeable"): return "not mergeable"  // deprecated: a merge refuses with MergeRefusal
    case .invalidState: return "invalid state"
    case .refusedByGame: return "refused by the game"
    case .signingRequired: return "signing required"
    case .droppedField: return "field not decoded"
    case .newerSaveInSlot: return "slot holds a save this build cannot read"
    case .locked: return "locked"
    case .savedAlongside: return "saved alongside a newer build's save"
    case .slotChanged: return "the slot changed since it was read"
    default: return kind.rawValue
    }
  }

  /// One line: `FILE: KIND in PART, field FIELD at byte N: MESSAGE (SUGGESTION)`.
  public var description: String {
    var line = ""
    if let file = context.file { line += "\(file): " }
    line += location + ": \(message)"
    if let suggestion { line += " (\(suggestion))" }
    return line
  }

  /// What failed and where, without the file or the message: `checksum mismatch in section
  /// 'physics' at byte 812`, for sentences that name the generation themselves.
  public var location: String {
    var line = kindDescription
    if let part = context.part {
      line += " in " + (["header", "trailer", "signature", "file"].contains(part) ? part : "section '\(part)'")
    }
    if let field = context.field, !field.isEmpty { line += ", field '\(field)'" }
    if let offset { line += " at byte \(offset)" }
    return line
  }
}
