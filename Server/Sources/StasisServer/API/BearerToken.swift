import Crypto
import Foundation
import Hummingbird

/// A bearer token: 32 random bytes, base64url; the server keeps only its SHA-256.
package enum BearerToken {
  /// A new random token.
  package static func generate() -> String {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
    return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
      .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
  }

  /// What the database keeps of `token`.
  package static func hash(_ token: String) -> [UInt8] { Array(SHA256.hash(data: Data(token.utf8))) }
}

/// Answers 401 unless `Authorization: Bearer TOKEN` names an unrevoked player. The token never
/// appears in a response or a log line.
struct BearerAuthMiddleware: RouterMiddleware {
  typealias Context = ServerContext
  let backend: any PlayerRepository

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    guard let value = request.headers[.authorization], let token = Self.bearerToken(value) else {
      throw unauthorized("a bearer token is required: Authorization: Bearer TOKEN")
    }
    guard let player = try await backend.player(tokenHash: BearerToken.hash(token)) else {
      throw unauthorized("the bearer token is not valid (unknown or revoked)")
    }
    var context = context
    context.player = player
    return try await next(request, context)
  }

  /// The token of `Bearer TOKEN`; the scheme's case does not matter (RFC 9110, 11.1).
  static func bearerToken(_ value: String) -> String? {
    let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
    guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
    let token = parts[1].trimmingCharacters(in: .whitespaces)
    return token.isEmpty ? nil : token
  }

  private func unauthorized(_ message: String) -> APIError {
    var error = APIError(.unauthorized, message)
    error.headers[.wwwAuthenticate] = "Bearer"
    return error
  }
}
