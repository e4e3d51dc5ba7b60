import Stasis

/// Why a cloud request did not do what was asked. One line, never the token.
public struct CloudError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of failure.
  public enum Kind: String, Sendable, Equatable {
    /// The server could not be reached (refused, reset, timed out): retried with backoff.
    case offline
    /// The token is missing, wrong or revoked (`401`).
    case unauthorized
    /// The precondition was stale: another device saved first (`412`); ``CloudError/head`` is theirs.
    case conflict
    /// No such slot or revision (`404`).
    case notFound
    /// The server refused the file (`400`, `413`) or the request: retrying will not help.
    case refused
    /// The server failed (`5xx`) or answered what the API never does.
    case server
    /// The request was cancelled (the background budget ran out).
    case cancelled
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
  /// The transport's own error when the network failed (a `URLError` over HTTP, whose code
  /// says what: `.cannotConnectToHost`, `.timedOut`); nil for an answer the server gave.
  public var underlyingError: (any Error)?

  /// Creates an error.
  public init(_ kind: Kind, _ message: String, head: RemoteRevision? = nil) {
    self.kind = kind
    self.message = message
    self.head = head
  }

  public var description: String { "\(kind.rawValue): \(message)" }

  /// Equal when every field is, and the wrapped errors are of one type and print alike.
  public static func == (a: CloudError, b: CloudError) -> Bool {
    a.kind == b.kind && a.message == b.message && a.head == b.head && a.neverSent == b.neverSent
      && a.underlyingError.map { String(reflecting: $0) } == b.underlyingError.map { String(reflecting: $0) }
  }
}
