import Dispatch
import Foundation
import Stasis
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The v1 API over HTTP, with Foundation's `URLSession`: the toolchain's own HTTP client
/// (libcurl on Linux), so a game that syncs resolves no HTTP packages of its own. Failures are
/// told apart by `URLError`'s code, never by their text; an answer larger than any save is
/// cut off as it arrives.
public struct HTTPCloudTransport: CloudTransport {
  private let answers: BoundedAnswers

  /// A transport on StasisCloud's shared session: no cookies, no cache, no credentials kept.
  public init() { self.answers = BoundedAnswers.shared }

  /// A transport whose answers may be at most `maximumAnswerBytes` long (tests).
  init(maximumAnswerBytes: Int) { self.answers = BoundedAnswers(limit: maximumAnswerBytes) }

  public func send(_ request: CloudRequest, to server: CloudServer) async throws(CloudError) -> CloudResponse {
    let method = request.method
    let path = request.path
    guard let base = URL(string: server.url), let scheme = base.scheme?.lowercased(),
      scheme == "http" || scheme == "https", let host = base.host, !host.isEmpty,
      let url = URL(string: server.url + path)
    else { throw CloudError(.refused, "\(server.url): not a server URL (http://HOST:PORT or https://…)") }
    var outgoing = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData)
    outgoing.httpMethod = method
    outgoing.httpShouldHandleCookies = false
    for (name, value) in request.headers { outgoing.addValue(value, forHTTPHeaderField: name) }
    if let body = request.body { outgoing.httpBody = Data(body) }
    do {
      let (body, response) = try await answers.fetch(outgoing, timeout: server.timeout)
      // Sorted by name: a dictionary's order must not reach what the client sees.
      let headers = response.allHeaderFields.compactMap { name, value -> (name: String, value: String)? in
        guard let name = name as? String, let value = value as? String else { return nil }
        return (name, value)
      }.sorted { $0.name < $1.name }
      return CloudResponse(status: response.statusCode, headers: headers, body: body)
    } catch let error as URLError {
      throw Self.classify(error, method: method, path: path, server: server)
    } catch {
      // Only the collector throws anything else: cancellation before the request started.
      throw CloudError(.cancelled, "\(method) \(path) was cancelled")
    }
  }

  /// What a transport failure means for the sync, by its code: a mistake no retry mends, a
  /// cancellation, or the server out of reach (retried with backoff). Only a connection that
  /// was never made says the request never left; a reset or a timeout may come after the commit.
  static func classify(_ error: URLError, method: String, path: String, server: CloudServer) -> CloudError {
    var result: CloudError
    switch error.code {
    case .cancelled:
      result = CloudError(.cancelled, "\(method) \(path) was cancelled")
    case .badURL, .unsupportedURL:
      result = CloudError(.refused, "\(server.url): not a server URL (http://HOST:PORT or https://…)")
    case .dataLengthExceedsMaximum:
      result = CloudError(.refused, "\(server.url): the answer to \(method) \(path) is larger than any save")
    case .secureConnectionFailed, .serverCertificateHasBadDate, .serverCertificateUntrusted,
      .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
      .clientCertificateRequired:
      result = CloudError(.refused, "\(server.url): TLS failed (URLError \(error.code.rawValue))")
    default:
      let reason: String
      switch error.code {
      case .cannotConnectToHost: reason = "connection refused"
      case .cannotFindHost, .dnsLookupFailed: reason = "the host name did not resolve"
      case .notConnectedToInternet: reason = "no network"
      case .timedOut: reason = "timed out"
      case .networkConnectionLost: reason = "the connection closed"
      default: reason = "URLError \(error.code.rawValue)"
      }
      result = CloudError(.offline, "\(server.url) did not answer \(method) \(path): \(reason)")
      result.neverSent = [.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet]
        .contains(error.code)
    }
    result.underlyingError = error
    return result
  }
}

/// Runs each request on a session of its own and collects its answer up to the largest save
/// the format allows: `URLSession.data(for:)` would hold whatever a server sends. A task
/// cancelled (the background budget ran out) cancels its request.
///
/// A session per request, so a connection per request: libcurl silently re-sends a request
/// whose reused connection died, and a re-sent upload went without its body (the server waited,
/// then answered 408); asking for `Connection: close` instead made libcurl reuse a connection
/// the server was closing. A sync sends a request every few seconds at most: the reuse saved
/// little.
final class BoundedAnswers: NSObject, URLSessionDataDelegate, @unchecked Sendable {
  // @unchecked: every mutable state is inside `pending`, a Mutex; NSObject is not Sendable.
  static let shared = BoundedAnswers(limit: FormatLimits.maxFileSize + (1 << 16))

  private struct Pending {
    var body = Data()
    var response: HTTPURLResponse?
    var tooLarge = false
    var timedOut = false
    let continuation: CheckedContinuation<([UInt8], HTTPURLResponse), any Error>
  }

  private let limit: Int
  private let pending = Mutex<[ObjectIdentifier: Pending]>([:])

  init(limit: Int) {
    self.limit = limit
    super.init()
  }

  private func makeSession() -> URLSession {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpCookieStorage = nil
    configuration.urlCache = nil
    configuration.urlCredentialStorage = nil
    return URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
  }

  /// Runs `request`; after `timeout` (the whole request, not an idle timer: Foundation on Linux
  /// applies only its session's idle timeout) it is cancelled and fails with `.timedOut`.
  func fetch(_ request: URLRequest, timeout: Duration) async throws -> ([UInt8], HTTPURLResponse) {
    let session = makeSession()
    let task = session.dataTask(with: request)
    let id = ObjectIdentifier(task)
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        pending.withLock { $0[id] = Pending(continuation: continuation) }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.inSeconds) { [self] in
          let late = pending.withLock { pending -> Bool in
            guard pending[id] != nil else { return false }
            pending[id]?.timedOut = true
            return true
          }
          if late { task.cancel() }
        }
        task.resume()
      }
    } onCancel: {
      task.cancel()
    }
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    pending.withLock { $0[ObjectIdentifier(dataTask)]?.response = response as? HTTPURLResponse }
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    let limit = self.limit
    let over = pending.withLock { pending -> Bool in
      guard var entry = pending[ObjectIdentifier(dataTask)], !entry.tooLarge else { return false }
      entry.body.append(data)
      entry.tooLarge = entry.body.count > limit
      if entry.tooLarge { entry.body = Data() }
      pending[ObjectIdentifier(dataTask)] = entry
      return entry.tooLarge
    }
    if over { dataTask.cancel() }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    session.finishTasksAndInvalidate()  // its one task is over; the session lets its delegate go
    guard let entry = pending.withLock({ $0.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
    if entry.tooLarge {
      entry.continuation.resume(throwing: URLError(.dataLengthExceedsMaximum))
    } else if entry.timedOut {
      entry.continuation.resume(throwing: URLError(.timedOut))
    } else if let error {
      entry.continuation.resume(throwing: error as? URLError ?? URLError(.unknown))
    } else if let response = entry.response {
      entry.continuation.resume(returning: ([UInt8](entry.body), response))
    } else {
      entry.continuation.resume(throwing: URLError(.badServerResponse))
    }
  }
}
