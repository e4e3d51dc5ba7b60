import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
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
      let failure = TransportFailure(error)
      if failure.isConfigurationMistake {
        // Retrying cannot help: the URL, the TLS set-up or the answer itself is wrong.
        var refused = CloudError(.refused, "\(server.url): \(failure.words)")
        refused.underlyingError = error
        throw refused
      }
      // Refused, reset, timed out, unresolvable: the server is not there for now. Only a refused
      // connection (or a name with no address) says the request never left; a reset or a
      // timeout may come after the server committed it.
      var offline = CloudError(.offline, "\(server.url) did not answer \(method) \(path): \(failure.words)")
      offline.neverSent = failure == .refused || failure == .unresolved
      offline.underlyingError = error
      throw offline
    }
  }
}

/// How a request failed on its way to the server and back, told apart by the error's type and
/// its errno, never by its text.
enum TransportFailure: Equatable, Sendable {
  /// Nothing listens there: the connection was refused, and the request never left.
  case refused
  /// The host name has no address.
  case unresolved
  /// The connection was reset mid-exchange.
  case reset
  /// The server closed the connection before it answered.
  case closed
  /// The connection, a read, a write or the request's whole deadline ran out.
  case timedOut
  /// The TLS handshake failed (a certificate, a protocol): a set-up mistake.
  case tls
  /// The answer is larger than any save.
  case tooLarge
  /// The client refused the URL (no host, no scheme).
  case notAServerURL
  /// Anything else the client reports; the error itself says what.
  case other(String)

  init(_ error: any Error) {
    switch error {
    case let error as HTTPClientError:
      switch error {
      case .invalidURL, .emptyHost, .emptyScheme: self = .notAServerURL
      case .connectTimeout, .readTimeout, .writeTimeout, .deadlineExceeded, .tlsHandshakeTimeout,
        .getConnectionFromPoolTimeout:
        self = .timedOut
      case .remoteConnectionClosed: self = .closed
      default: self = .other("\(error)")
      }
    case let error as NIOConnectionError:
      // Every address tried: refused if each refused; a name no lookup answered has none.
      let causes = error.connectionErrors.map { TransportFailure($0.error) }
      if causes.isEmpty, error.dnsAError != nil || error.dnsAAAAError != nil {
        self = .unresolved
      } else if !causes.isEmpty, causes.allSatisfy({ $0 == .refused }) {
        self = .refused
      } else {
        self = causes.first { $0 != .refused } ?? .other("\(error)")
      }
    case let error as IOError:
      switch error.errnoCode {
      case ECONNREFUSED: self = .refused
      case ECONNRESET, EPIPE: self = .reset
      case ETIMEDOUT: self = .timedOut
      default: self = .other("\(error)")
      }
    case let error as ChannelError:
      switch error {
      case .connectTimeout: self = .timedOut
      case .eof, .ioOnClosedChannel, .outputClosed, .alreadyClosed: self = .closed
      default: self = .other("\(error)")
      }
    case is NIOTooManyBytesError: self = .tooLarge
    case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError: self = .tls
    default: self = .other("\(error)")
    }
  }

  /// A failure that no retry mends.
  var isConfigurationMistake: Bool {
    switch self {
    case .tls, .tooLarge, .notAServerURL: true
    default: false
    }
  }

  /// The failure in a few words, for the error's message.
  var words: String {
    switch self {
    case .refused: "connection refused"
    case .unresolved: "the host name did not resolve"
    case .reset: "connection reset"
    case .closed: "the connection closed"
    case .timedOut: "timed out"
    case .tls: "TLS failed"
    case .tooLarge: "the answer is larger than any save"
    case .notAServerURL: "not a server URL (http://HOST:PORT)"
    case .other(let text): text
    }
  }
}
