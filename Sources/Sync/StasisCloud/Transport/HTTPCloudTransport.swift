#if AsyncHTTPClient
  import AsyncHTTPClient
  import Foundation
  import NIOCore
  import NIOHTTP1
  import NIOPosix
  import NIOSSL
  import Stasis

  /// The v1 API over HTTP, with AsyncHTTPClient and SwiftNIO: the package's `AsyncHTTPClient`
  /// trait. ``URLSessionCloudTransport``, the default, needs no package.
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
    /// (a server that refuses is reported at once, and the sync's own backoff retries), a
    /// connection gets 5 seconds, and one idle for 20 seconds is closed: `stasis-server` closes
    /// an idle connection after its 30-second request deadline, and a request sent on a
    /// connection just as the server closes it fails for nothing.
    public static let sharedHTTPClient: HTTPClient = {
      var configuration = HTTPClient.Configuration()
      configuration.connectionPool.retryConnectionEstablishment = false
      configuration.connectionPool.idleTimeout = .seconds(20)
      configuration.timeout.connect = .seconds(5)
      return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    public func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
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
        throw CloudError(transportFailure: error, server: server.url, method: method, path: path)
      }
    }
  }
#endif
