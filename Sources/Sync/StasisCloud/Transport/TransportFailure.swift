import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if AsyncHTTPClient
  import AsyncHTTPClient
  import NIOCore
  import NIOPosix
  import NIOSSL
#endif

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
    if let error = error as? URLError {
      self.init(error)
      return
    }
    #if AsyncHTTPClient
      self.init(nio: error)
    #else
      self = .other("\(error)")
    #endif
  }

  /// URLSession's errors (libcurl's, on Linux), by their code.
  init(_ error: URLError) {
    switch error.code {
    case .cannotConnectToHost: self = .refused
    case .cannotFindHost, .dnsLookupFailed: self = .unresolved
    // libcurl's "empty reply from server" is a bad server response: a close before any answer.
    case .networkConnectionLost, .notConnectedToInternet, .badServerResponse: self = .closed
    case .timedOut: self = .timedOut
    case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
      .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
      .clientCertificateRequired:
      self = .tls
    case .badURL, .unsupportedURL: self = .notAServerURL
    case .dataLengthExceedsMaximum: self = .tooLarge
    case .unknown where Self.isLibcurlTLSFailure(error): self = .tls
    default: self = .other("\(error)")
    }
  }

  /// True when an error FoundationNetworking gave no code names a TLS failure in libcurl's
  /// words. The one failure told apart by its text, because nothing else carries it: on Linux,
  /// FoundationNetworking maps no TLS failure of libcurl's to a code (a self-signed or untrusted
  /// certificate, a name the certificate does not cover, a server that does not speak TLS: each
  /// is `NSURLErrorUnknown`, `-1`, with libcurl's message and no `CURLcode`). Without this, a
  /// studio's wrong certificate was `offline`, retried for ever. `HTTPTransportTests.urlErrorsClassified` pins it
  /// with the words OpenSSL's own server drew from libcurl; Apple's systems give the codes above.
  static func isLibcurlTLSFailure(_ error: URLError) -> Bool {
    var texts = [error.userInfo[NSLocalizedDescriptionKey] as? String]
    if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError {
      texts.append(underlying.userInfo[NSLocalizedDescriptionKey] as? String)
    }
    // libcurl's TLS messages: "SSL certificate problem: …" (CURLE_PEER_FAILED_VERIFICATION),
    // "SSL: no alternative certificate subject name matches …", "OpenSSL/3.0: error:…:SSL
    // routines::…" (CURLE_SSL_CONNECT_ERROR).
    return texts.compactMap { $0 }.contains { text in
      text.hasPrefix("SSL certificate problem") || text.hasPrefix("SSL: ") || text.contains("SSL routines")
    }
  }

  #if AsyncHTTPClient
    /// AsyncHTTPClient's and SwiftNIO's errors, by type and errno.
    init(nio error: any Error) {
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
  #endif

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

extension CloudError {
  /// What a transport's failure means to the sync, for either transport. A mistake no retry
  /// mends (the URL, the TLS set-up, an answer larger than any save) is `refused`. Anything else
  /// is `offline`, the server not there for now: only a refused connection or a name with no
  /// address says the request never left, while a reset or a timeout may come after the server
  /// committed it.
  init(transportFailure error: any Error, server: String, method: String, path: String) {
    let failure = TransportFailure(error)
    if failure.isConfigurationMistake {
      self.init(.refused, "\(server): \(failure.words)")
    } else {
      self.init(.offline, "\(server) did not answer \(method) \(path): \(failure.words)")
      neverSent = failure == .refused || failure == .unresolved
    }
    underlyingError = error
  }
}
