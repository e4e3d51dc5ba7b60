import AsyncHTTPClient
import NIOCore
import NIOHTTP1
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

/// How a ``CloudClient`` reaches the server: HTTP (``HTTPCloudTransport``) in a game, or the
/// server's own request handling in the same process for the simulation (`stasis-sim`).
/// A transport that cannot reach the server throws ``CloudError/Kind/offline``; one whose
/// request was cancelled throws ``CloudError/Kind/cancelled``.
public protocol CloudTransport: Sendable {
  /// Sends `request` to `server` and returns its answer, whatever the status.
  func send(_ request: CloudRequest, to server: CloudServer) async throws(CloudError) -> CloudResponse
}

/// The v1 API over HTTP, with AsyncHTTPClient.
public struct HTTPCloudTransport: CloudTransport {
  private let http: HTTPClient

  /// A transport over `http` (StasisCloud's shared client by default).
  public init(http: HTTPClient = CloudClient.sharedHTTPClient) { self.http = http }

  public func send(_ request: CloudRequest, to server: CloudServer) async throws(CloudError) -> CloudResponse {
    let method = request.method
    let path = request.path
    var outgoing = HTTPClientRequest(url: server.url + path)
    outgoing.method = HTTPMethod(rawValue: method)
    for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
    if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
    do {
      let response = try await http.execute(outgoing, timeout: .nanoseconds(Int64(server.timeout.inSeconds * 1e9)))
      let collected = try await response.body.collect(upTo: FormatLimits.maxFileSize + (1 << 16))
      return CloudResponse(
        status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
        body: [UInt8](buffer: collected))
    } catch is CancellationError {
      throw CloudError(.cancelled, "\(method) \(path) was cancelled")
    } catch let error as HTTPClientError where error == .cancelled {
      throw CloudError(.cancelled, "\(method) \(path) was cancelled")
    } catch {
      if Task.isCancelled { throw CloudError(.cancelled, "\(method) \(path) was cancelled") }
      if let mistake = CloudClient.configurationMistake(error) {
        // Retrying cannot help: the URL, the scheme or the answer itself is wrong.
        throw CloudError(.refused, "\(server.url): \(mistake)")
      }
      // Refused, reset, timed out, unresolvable: the server is not there for now. Only a refused
      // connection says the request never left; a reset or a timeout may come after the commit.
      let reason = CloudClient.reason(error)
      var offline = CloudError(.offline, "\(server.url) did not answer \(method) \(path): \(reason)")
      offline.neverSent = reason == "connection refused"
      throw offline
    }
  }
}
