/// What went wrong in a ``RecordStore``: what failed, in which file, and the cause.
public struct RecordStoreError: Error, Sendable, CustomStringConvertible {
  /// The kinds of failure; each means one thing.
  public enum Kind: String, Sendable {
    /// The database file could not be opened or created (the cause says why).
    case cannotOpen
    /// The database has migrations this build does not know: a newer build wrote it. It is
    /// left untouched; nothing is written to it.
    case newerDatabase
    /// Two migrations have the same name.
    case duplicateMigration
    /// A migration threw; the database is as it was before that migration.
    case migrationFailed
    /// The background budget ran out before the write committed: it was rolled back whole.
    case expired
  }

  /// What failed.
  public var kind: Kind
  /// One sentence: what failed and what to do.
  public var message: String
  /// The database file.
  public var path: String
  /// The error underneath, when there is one (a `DatabaseError`, or what a migration threw).
  public var cause: (any Error)?

  /// Creates an error.
  public init(_ kind: Kind, _ message: String, path: String, cause: (any Error)? = nil) {
    self.kind = kind
    self.message = message
    self.path = path
    self.cause = cause
  }

  /// `records.sqlite: message (cause)`, on one line.
  public var description: String {
    var text = "\(path): \(message)"
    if let cause { text += " (\(String(describing: cause)))" }
    return text
  }
}
