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
  package static func matches(_ error: any Error) -> Bool {
    if let error = error as? PostgresTransactionError {
      // `BEGIN`, the work, or `COMMIT` failed (a failed `COMMIT`'s outcome is unknown: the retry
      // learns it); a rollback's own failure says nothing more.
      return [error.beginError, error.closureError, error.commitError].contains { $0.map(matches) ?? false }
    }
    if let error = error as? PSQLError {
      switch error.code {
      case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed,
        .queryCancelled:
        return true
      case .server:
        guard let state = error.serverInfo?[.sqlState] else { return false }
        // 08: connection exceptions; 57P01-57P03: shutting down or starting; 57014: a statement
        // cancelled by its timeout; 25006: a read-only transaction (a demoted primary); 40001,
        // 40P01: serialisation, deadlock; 53300: too many connections; 55P03: lock not available.
        return state.hasPrefix("08") || state.hasPrefix("57P") || state == "57014" || state == "25006"
          || state == "40001" || state == "40P01" || state == "53300" || state == "55P03"
      default:
        return false
      }
    }
    // postgres-nio's pool, after creating connections failed for a while (its circuit breaker:
    // `ConnectionPoolError.connectionCreationCircuitBreakerTripped`), fails requests at once
    // with its own error type, from a module it does not export: known by its name.
    return String(reflecting: type(of: error)).hasSuffix("ConnectionPoolError")
  }
}
