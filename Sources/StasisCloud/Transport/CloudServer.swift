import Foundation
import Stasis

/// Where a player's cloud saves live: a `stasis-server`, the player's bearer token, and the
/// name this device gives its uploads.
public struct CloudServer: Sendable, Equatable {
  /// The server's base URL, such as `http://127.0.0.1:8080`.
  public var url: String
  /// The bearer token `stasis-server players add` printed. Never logged, never in an error.
  public var token: String
  /// This device's name, sent as `X-Stasis-Device` (the server prefers the save's own).
  public var device: String
  /// How long one request may take, connecting included.
  public var timeout: Duration

  /// Creates a server description.
  public init(url: String, token: String, device: String = "", timeout: Duration = .seconds(30)) {
    self.url = url.hasSuffix("/") ? String(url.dropLast()) : url
    self.token = token
    self.device = device
    self.timeout = timeout
  }

  /// Equal when the URL and the token are: two servers whose revisions can be compared.
  public static func == (lhs: CloudServer, rhs: CloudServer) -> Bool {
    lhs.url == rhs.url && lhs.token == rhs.token
  }
}
