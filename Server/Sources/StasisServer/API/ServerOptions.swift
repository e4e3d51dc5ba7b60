/// How a server runs: where it listens, what it keeps, what it allows.
package struct ServerOptions: Sendable {
  /// The address to listen on.
  package var host: String
  /// The port; 0 picks a free one (the `listening on` line says which).
  package var port: Int
  /// Revisions kept per slot; older ones are pruned in the transaction that adds a new one.
  package var keepRevisions: Int
  /// Per-player limits.
  package var limits: PlayerLimits
  /// How long a client may take to send a whole request, headers and body, on any route. The
  /// clock starts when the connection is ready for the request; an idle connection is closed
  /// when it passes. Enforced by ``SaveServer/httpServer(gate:)``.
  package var requestTimeout: Duration
  /// Marks the console's cookies `Secure`: for a server reached over TLS (a proxy in front
  /// that says `X-Forwarded-Proto: https` marks them so without it).
  package var secureCookies: Bool

  /// Creates options.
  package init(
    host: String = "127.0.0.1", port: Int = 8080, keepRevisions: Int = 10, limits: PlayerLimits = PlayerLimits(),
    requestTimeout: Duration = .seconds(30), secureCookies: Bool = false
  ) {
    self.host = host
    self.port = port
    self.keepRevisions = keepRevisions
    self.limits = limits
    self.requestTimeout = requestTimeout
    self.secureCookies = secureCookies
  }
}
