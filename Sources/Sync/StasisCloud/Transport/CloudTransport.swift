import Foundation
import Stasis

/// One request of the v1 API as a transport carries it: the method, the path under the
/// server's URL, the headers (the bearer token included) and the body.
public struct CloudRequest: Sendable {
  /// `GET`, `PUT`, `DELETE`.
  public var method: String
  /// The path and query, such as `/v1/slots/autosave`.
  public var path: String
  /// The request's headers, in order.
  public var headers: [(name: String, value: String)]
  /// The body, for an upload.
  public var body: [UInt8]?

  /// Creates a request.
  public init(method: String, path: String, headers: [(name: String, value: String)] = [], body: [UInt8]? = nil) {
    self.method = method
    self.path = path
    self.headers = headers
    self.body = body
  }

  /// The first header named `name` (case-insensitive).
  public func header(_ name: String) -> String? {
    headers.first { $0.name.lowercased() == name.lowercased() }?.value
  }
}

/// What the server answered: the status, the headers and the body.
public struct CloudResponse: Sendable {
  /// The HTTP status, such as `201`.
  public var status: Int
  /// The response's headers, in order.
  public var headers: [(name: String, value: String)]
  /// The body.
  public var body: [UInt8]

  /// Creates a response.
  public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// The first header named `name` (case-insensitive).
  public func header(_ name: String) -> String? {
    headers.first { $0.name.lowercased() == name.lowercased() }?.value
  }
}

/// How a ``CloudClient`` reaches the server: HTTP in a game (``URLSessionCloudTransport`` by
/// default; `HTTPCloudTransport`, on AsyncHTTPClient, under the package's `AsyncHTTPClient`
/// trait), or the server's own request handling in the same process for the simulation
/// (`stasis-sim`).
/// A transport that cannot reach the server throws ``CloudError/Kind/offline``; one whose
/// request was cancelled throws ``CloudError/Kind/cancelled``.
public protocol CloudTransport: Sendable {
  /// Sends `request` to `server` and returns its answer, whatever the status.
  func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse
}
