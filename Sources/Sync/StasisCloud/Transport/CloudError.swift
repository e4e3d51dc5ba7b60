import Stasis

/// Why a cloud request did not do what was asked. One line, never the token.
public struct CloudError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of failure. Each kind means one thing.
  ///
  /// A struct with static members, as GRDB's `ResultCode` is, not an enum: a kind added in a
  /// later version breaks no one's `switch`, which needs a `default:`. `case .offline:` matches
  /// as before.
  public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind's stable name.
    public let rawValue: String

    /// A kind by its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// The server could not be reached (refused, reset, timed out): retried with backoff.
    public static let offline = Kind(rawValue: "offline")
    /// The token is missing, wrong or revoked (`401`).
    public static let unauthorized = Kind(rawValue: "unauthorized")
    /// The precondition was stale: another device saved first (`412`); ``CloudError/head`` is theirs.
    public static let conflict = Kind(rawValue: "conflict")
    /// No such slot or revision on the server (`404`).
    public static let notFound = Kind(rawValue: "notFound")
    /// The server refused the file (`400`, `413`) or the request: retrying will not help.
    /// Only the server's answer: a file the server sent that this device refuses is
    /// ``refusedLocally``.
    public static let refused = Kind(rawValue: "refused")
    /// A file the server sent was refused here, before anything local changed: it failed this
    /// device's checks (a checksum, the signature, a newer schema or format, the game's own
    /// validation), or it could not be written to the slot. ``CloudError/underlyingError`` is
    /// what refused it: the store's `SaveFileError` (``CloudError/fileError``), or the error the
    /// configuration's `validate` threw. Not the server's doing; the next catch-up asks again.
    public static let refusedLocally = Kind(rawValue: "refusedLocally")
    /// The server failed (`5xx` other than `503`) or answered what the API never does.
    public static let server = Kind(rawValue: "server")
    /// The server is there but cannot store now (`503`: its database is failing over, or it is
    /// past its connections): nothing was stored, or the retry learns what was. Retried with
    /// backoff, never sooner than ``CloudError/retryAfter``. Not a conflict: no other device
    /// saved first.
    public static let unavailable = Kind(rawValue: "unavailable")
    /// The request was cancelled (the background budget ran out).
    public static let cancelled = Kind(rawValue: "cancelled")
    /// The slot has no local save to sync (a sync asked of an empty slot): save first.
    public static let noLocalSave = Kind(rawValue: "noLocalSave")
    /// There is no conflict to resolve: the slot's sync record holds none.
    public static let noConflict = Kind(rawValue: "noConflict")
  }

  /// What kind of failure.
  public var kind: Kind
  /// What happened, in one line.
  public var message: String
  /// The server's head, for a ``Kind/conflict``.
  public var head: RemoteRevision?
  /// True when the request certainly never reached the server (the connection was refused,
  /// or there is no network): nothing it asked for can have happened there.
  public var neverSent = false
  /// How long the server asked to be left alone (`Retry-After`), for ``Kind/unavailable``.
  public var retryAfter: Duration?
  /// The transport's own error when the network failed (a `URLError` over HTTP, whose code
  /// says what: `.cannotConnectToHost`, `.timedOut`); nil for an answer the server gave.
  public var underlyingError: (any Error)?

  /// The store's error under a ``Kind/refusedLocally``: what this device's check or write of the
  /// server's file threw (its kind is `.newerSchema`, `.checksumMismatch`, `.signatureMismatch`,
  /// …). Nil for an error of the network or the server, and for a game's own `validate`.
  public var fileError: SaveFileError? { underlyingError as? SaveFileError }

  /// Creates an error.
  public init(_ kind: Kind, _ message: String, head: RemoteRevision? = nil) {
    self.kind = kind
    self.message = message
    self.head = head
  }

  /// A ``Kind/refusedLocally``: `message`, then the store's error, which it carries.
  static func refusedLocally(_ message: String, _ error: any Error) -> CloudError {
    var refusal = CloudError(.refusedLocally, "\(message): \(error)")
    refusal.underlyingError = error
    return refusal
  }

  public var description: String { "\(kind.rawValue): \(message)" }

  /// Equal when every field is, and the wrapped errors are of one type and print alike.
  public static func == (a: CloudError, b: CloudError) -> Bool {
    a.kind == b.kind && a.message == b.message && a.head == b.head && a.neverSent == b.neverSent
      && a.retryAfter == b.retryAfter
      && a.underlyingError.map { String(reflecting: $0) } == b.underlyingError.map { String(reflecting: $0) }
  }
}
