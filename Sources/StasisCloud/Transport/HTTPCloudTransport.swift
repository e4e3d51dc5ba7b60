import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Stasis

/// The v1 API over HTTP, with AsyncHTTPClient.
public struct HTTPCloudTransport: CloudTransport {
  private let http: HTTPClient
  private let maximumAnswerBytes: Int

  /// A transport over `http` (StasisCloud's shared client by default).
  public init(http: HTTPClient = HTTPCloudTransport.sharedHTTPClient) {
    self.init(http: http, maximumAnswerBytes: FormatLimits.maxFileSize + (1 << 16))
  }

  /// A transport whose answers may be at most `maximumAnswerBytes` long (tests).
  init(http: HTTPClient = HTTPCloudTransport.sharedHTTPClient, maximumAnswerBytes: Int) {
    self.http = http
    self.maximumAnswerBytes = maximumAnswerBytes
  }

  /// The process's HTTP client for cloud saves: connections are not retried inside a request
  /// (a server that refuses is reported at once, and the sync's own backoff retries), and a
  /// connection gets 5 seconds.
  public static let sharedHTTPClient: HTTPClient = {
    var configuration = HTTPClient.Configuration()
    configuration.connectionPool.retryConnectionEstablishment = false
    configuration.timeout.connect = .seconds(5)
    return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
  }()

  public func send(_ request: CloudRequest, to server: CloudServer) async throws(CloudError) -> CloudResponse {
    let method = request.method
    let path = request.path
    guard let base = URL(string: server.url), let scheme = base.scheme?.lowercased(),
      scheme == "http" || scheme == "https", let host = base.host, !host.isEmpty
    else { throw CloudError(.refused, "\(server.url): not a server URL (http://HOST:PORT or https://…)") }
    var outgoing = HTTPClientRequest(url: server.url + path)
    outgoing.method = HTTPMethod(rawValue: method)
    for (name, value) in request.headers { outgoing.headers.add(name: name, value: value) }
    if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
    do {
      let response = try await http.execute(outgoing, timeout: .nanoseconds(Int64(server.timeout.inSeconds * 1e9)))
      let collected = try await response.body.collect(upTo: maximumAnswerBytes)
      return CloudResponse(
        status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
        body: [UInt8](buffer: collected))
    } catch is CancellationError {
      throw CloudError(.cancelled, "\(method) \(path) was cancelled")
    } catch let error as HTTPClientError where error == .cancelled {
      throw CloudError(.cancelled, "\(method) \(path) was cancelled")
    } catch {
      if Task.isCancelled { throw CloudError(.cancelled, "\(method) \(path) was cancelled") }
      if let mistake = Self.configurationMistake(error) {
        // Retrying cannot help: the URL, the scheme or the answer itself is wrong.
        var refused = CloudError(.refused, "\(server.url): \(mistake)")
        refused.underlyingError = error
        throw refused
      }
      // Refused, reset, timed out, unresolvable: the server is not there for now. Only a refused
      // connection says the request never left; a reset or a timeout may come after the commit.
      let reason = Self.reason(error)
      var offline = CloudError(.offline, "\(server.url) did not answer \(method) \(path): \(reason)")
      offline.neverSent = reason == "connection refused"
      offline.underlyingError = error
      throw offline
    }
  }

  /// A failure no retry mends: a URL without a host or with another scheme than http(s), a
  /// TLS handshake refused, an answer larger than any save.
  static func configurationMistake(_ error: any Error) -> String? {
    if let error = error as? HTTPClientError {
      switch error {
      case .invalidURL, .emptyHost, .emptyScheme: return "not a server URL (http://HOST:PORT)"
      default:
        if "\(error)".contains("unsupportedScheme") { return "the URL's scheme is not http or https" }
      }
    }
    if error is NIOTooManyBytesError { return "the answer is larger than any save" }
    if String(reflecting: type(of: error)).contains("NIOSSL") { return "TLS failed: \(error)" }
    return nil
  }

  /// A transport failure in a few words: NIO's descriptions nest the errno in two layers.
  static func reason(_ error: any Error) -> String {
    let text = "\(error)"
    if text.contains("Connection refused") { return "connection refused" }
    if text.contains("Connection reset") { return "connection reset" }
    if text.lowercased().contains("timeout") || text.contains("timed out") { return "timed out" }
    if let error = error as? HTTPClientError, error == .remoteConnectionClosed { return "the connection closed" }
    return text
  }
}
