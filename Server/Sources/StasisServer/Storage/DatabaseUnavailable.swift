import PostgresNIO

/// Whether an error from the database means "not now" rather than "no": the database could
/// not be reached, dropped the connection, is a standby or shutting down (a failover moving
/// the primary), or gave up on a lock or a serialisation. Such a write did not commit, or its
/// outcome is unknown (the connection died during `COMMIT`): the API answers `503` with
/// `Retry-After` (``JSONErrorMiddleware``), never `201`, and an upload's retry of the same
/// bytes on the same base is answered with the revision stored, if it was
/// (``UploadsController``).
package enum DatabaseUnavailable {
  /// `Retry-After`, in seconds, on a `503` this names.
  package static let retryAfter = 1

  /// True when `error` says the database is unavailable now.
  package static func matches(_ error: any Error) -> Bool { kind(of: error) != nil }

  /// True when a new transaction on another connection may succeed where this one failed: the
  /// connection, not the request, was the trouble. A statement cancelled by its timeout or by the
  /// request's own cancellation is not run again: the request's deadline has passed, and it
  /// must leave nothing behind it.
  package static func isWorthAnotherConnection(_ error: any Error) -> Bool { kind(of: error) == .connection }

  private enum Kind { case connection, timeout }

  private static func kind(of error: any Error) -> Kind? {
    if let error = error as? PostgresTransactionError {
      // `BEGIN`, the work, or `COMMIT` failed (a failed `COMMIT`'s outcome is unknown: the retry
      // learns it); a rollback's own failure says nothing more.
      for part in [error.beginError, error.closureError, error.commitError] {
        if let part, let kind = kind(of: part) { return kind }
      }
      return nil
    }
    if let error = error as? PSQLError {
      switch error.code {
      case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed:
        return .connection
      case .queryCancelled:
        return .timeout
      case .server:
        guard let state = error.serverInfo?[.sqlState] else { return nil }
        // 08: connection exceptions; 57P01-57P03: shutting down or starting; 25006: a read-only
        // transaction (a demoted primary); 40001, 40P01: serialisation, deadlock; 53300: too many
        // connections. 57014: a statement cancelled by its timeout; 55P03: a lock not available.
        if state.hasPrefix("08") || state.hasPrefix("57P") || state == "25006" || state == "40001"
          || state == "40P01" || state == "53300"
        {
          return .connection
        }
        return state == "57014" || state == "55P03" ? .timeout : nil
      default:
        return nil
      }
    }
    // postgres-nio's pool, after creating connections failed for a while (its circuit breaker:
    // `ConnectionPoolError.connectionCreationCircuitBreakerTripped`), fails requests at once
    // with its own error type, from a module it does not export: known by its name.
    return String(reflecting: type(of: error)).hasSuffix("ConnectionPoolError") ? .connection : nil
  }
}
