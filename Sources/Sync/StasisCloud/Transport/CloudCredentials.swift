import Foundation
import Stasis

/// A player's account on a save server, as this device signs in to it: the `stasis-server`'s
/// URL, the player's bearer token, and the name this device gives its uploads.
public struct CloudCredentials: Sendable, Equatable {
  /// The server's base URL, such as `http://127.0.0.1:8080`.
  public var url: String
  /// The bearer token `stasis-server players add` printed. Never logged, never in an error.
  public var token: String
  /// This device's name, sent as `X-Stasis-Device` (the server prefers the save's own).
  public var device: String
  /// How long one request may take, connecting included.
  public var timeout: Duration

  /// The credentials of the player whose token is `token` on the server at `url`.
  public init(url: String, token: String, device: String = "", timeout: Duration = .seconds(30)) {
    self.url = url.hasSuffix("/") ? String(url.dropLast()) : url
    self.token = token
    self.device = device
    self.timeout = timeout
  }

  /// The bearer token in the file at `path`: the line `stasis-server players add` printed,
  /// surrounding white space (a trailing newline) removed. Refuses a file it cannot read and one
  /// that holds no token (``CloudError/Kind/unauthorized``); never says what the file holds.
  public static func token(fromFile path: String) throws(CloudError) -> String {
    do {
      return try LoginFile.token(fromFile: path)
    } catch {
      throw CloudError(.unauthorized, error.description)
    }
  }

  /// Equal when the URL and the token are: one player on one server, whose revisions can be
  /// compared.
  public static func == (lhs: CloudCredentials, rhs: CloudCredentials) -> Bool {
    lhs.url == rhs.url && lhs.token == rhs.token
  }
}
