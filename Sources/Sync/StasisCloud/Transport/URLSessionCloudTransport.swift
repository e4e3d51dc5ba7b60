import Foundation
import Stasis
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The v1 API over HTTP with Foundation's `URLSession`: the platform's own client (native on
/// Apple's systems, libcurl through FoundationNetworking on Linux, which the toolchain ships), so
/// the `Cloud` trait brings no package. The default transport of ``CloudClient``, ``CloudSync``
/// and ``SettingsSync``.
///
/// Each request has the server's whole ``CloudCredentials/timeout`` as its deadline, an answer
/// longer than any save is cut off as it arrives, and a cancelled task cancels its request.
public struct URLSessionCloudTransport: CloudTransport {
  private let session: URLSession
  private let exchanges: Exchanges
  private let maximumAnswerBytes: Int

  /// A transport over StasisCloud's shared session.
  public init() {
    self.init(maximumAnswerBytes: FormatLimits.maxFileSize + (1 << 16))
  }

  /// A transport whose answers may be at most `maximumAnswerBytes` long (tests).
  init(maximumAnswerBytes: Int) {
    session = Self.shared.session
    exchanges = Self.shared.exchanges
    self.maximumAnswerBytes = maximumAnswerBytes
  }

  /// The process's session for cloud saves: no cookies, no cache, no credential store; answers
  /// are read as they arrive by its delegate.
  private static let shared = makeSession()

  /// A session for cloud saves, with the delegate that reads its answers.
  private static func makeSession() -> (session: URLSession, exchanges: Exchanges) {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpCookieStorage = nil
    configuration.httpShouldSetCookies = false
    configuration.urlCache = nil
    configuration.urlCredentialStorage = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    let exchanges = Exchanges()
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 1
    return (URLSession(configuration: configuration, delegate: exchanges, delegateQueue: queue), exchanges)
  }

  public func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
    let method = request.method
    let path = request.path
    guard let base = URL(string: server.url), let scheme = base.scheme?.lowercased(),
      scheme == "http" || scheme == "https", let host = base.host, !host.isEmpty,
      let url = URL(string: server.url + path)
    else { throw CloudError(.refused, "\(server.url): not a server URL (http://HOST:PORT or https://…)") }
    if Task.isCancelled { throw CloudError(.cancelled, "\(method) \(path) was cancelled") }
    var outgoing = URLRequest(
      url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: server.timeout.inSeconds)
    outgoing.httpMethod = method
    for (name, value) in request.headers { outgoing.addValue(value, forHTTPHeaderField: name) }
    if let body = request.body {
      outgoing.httpBody = Data(body)
      // libcurl waits up to a second for a `100 Continue` before a body it thinks is large.
      outgoing.setValue("", forHTTPHeaderField: "Expect")
    }
    // A request with a body (an upload) goes on a connection of its own. On a reused connection
    // that dies before the answer (a 201 cut on its way), libcurl sends the request again on a
    // fresh one by itself, outside the sync's retry rule, and FoundationNetworking cannot rewind
    // the body, so the resend stalls until the deadline: an upload whose answer was lost took the
    // whole 30 s timeout to fail (`OwnUploadTests`), where a fresh connection fails at once.
    let (session, exchanges) = request.body == nil ? (self.session, self.exchanges) : Self.makeSession()
    defer { if request.body != nil { session.finishTasksAndInvalidate() } }
    let exchange = Exchange(limit: maximumAnswerBytes)
    let task = session.dataTask(with: outgoing)
    exchanges.add(exchange, for: task)
    let outcome = await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        exchange.start(continuation, task: task, deadline: server.timeout)
      }
    } onCancel: {
      exchange.stop(.cancelled, task: task)
    }
    switch outcome {
    case .answered(let status, let headers, let body):
      return CloudResponse(status: status, headers: headers, body: body)
    case .stopped(.cancelled):
      throw CloudError(.cancelled, "\(method) \(path) was cancelled")
    case .stopped(.tooLarge):
      throw CloudError(
        transportFailure: URLError(.dataLengthExceedsMaximum), server: server.url, method: method, path: path)
    case .stopped(.deadline):
      throw CloudError(transportFailure: URLError(.timedOut), server: server.url, method: method, path: path)
    case .failed(let error):
      throw CloudError(transportFailure: error, server: server.url, method: method, path: path)
    }
  }
}

/// How one request ended.
private enum Outcome: Sendable {
  case answered(status: Int, headers: [(name: String, value: String)], body: [UInt8])
  /// Stopped by this side: the caller's task was cancelled, the answer outgrew its bound, or the
  /// deadline passed.
  case stopped(Stop)
  case failed(URLError)
}

private enum Stop: Sendable { case cancelled, tooLarge, deadline }

/// One request in flight: the answer as it arrives, and the one continuation it resumes once.
private final class Exchange: Sendable {
  private struct State {
    var continuation: CheckedContinuation<Outcome, Never>?
    var stopped: Stop?
    var response: HTTPURLResponse?
    var body: [UInt8] = []
    var finished = false
  }
  private let state = Mutex(State())
  let limit: Int

  init(limit: Int) { self.limit = limit }

  /// Starts `task`, unless the exchange was stopped before it could; its deadline cancels it.
  func start(_ continuation: CheckedContinuation<Outcome, Never>, task: URLSessionDataTask, deadline: Duration) {
    let stopped = state.withLock { state -> Stop? in
      state.continuation = continuation
      return state.stopped
    }
    if let stopped {
      finish(.stopped(stopped))
      return
    }
    task.resume()
    let seconds = deadline.inSeconds
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [weak self] in
      self?.stop(.deadline, task: task)
    }
  }

  /// Stops the request from this side: the task is cancelled and the caller hears `why`.
  func stop(_ why: Stop, task: URLSessionDataTask) {
    let first = state.withLock { state -> Bool in
      guard !state.finished, state.stopped == nil else { return false }
      state.stopped = why
      return true
    }
    guard first else { return }
    task.cancel()
    finish(.stopped(why))
  }

  func received(_ response: URLResponse) {
    state.withLock { $0.response = response as? HTTPURLResponse }
  }

  /// Appends a chunk; false when the answer is now longer than its bound.
  func received(_ data: Data) -> Bool {
    state.withLock { state in
      state.body.append(contentsOf: data)
      return state.body.count <= limit
    }
  }

  func completed(_ error: (any Error)?) {
    let outcome = state.withLock { state -> Outcome in
      if let stopped = state.stopped { return .stopped(stopped) }
      if let error {
        return .failed(error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error]))
      }
      guard let response = state.response else { return .failed(URLError(.badServerResponse)) }
      var headers: [(name: String, value: String)] = []
      // A header's name and value, sorted by name: `allHeaderFields` is a dictionary.
      for (name, value) in response.allHeaderFields {
        if let name = name as? String, let value = value as? String { headers.append((name, value)) }
      }
      headers.sort { $0.name < $1.name }
      return .answered(status: response.statusCode, headers: headers, body: state.body)
    }
    finish(outcome)
  }

  /// Resumes the caller once, whatever came first.
  private func finish(_ outcome: Outcome) {
    let continuation = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
      guard !state.finished, let continuation = state.continuation else { return nil }
      state.finished = true
      state.continuation = nil
      return continuation
    }
    continuation?.resume(returning: outcome)
  }
}

/// The session's delegate: hands each task's events to its ``Exchange``.
private final class Exchanges: NSObject, URLSessionDataDelegate, Sendable {
  // Looked up by task, never iterated: no order reaches anything.
  private let byTask = Mutex<[Int: Exchange]>([:])

  func add(_ exchange: Exchange, for task: URLSessionTask) {
    byTask.withLock { $0[task.taskIdentifier] = exchange }
  }

  private func exchange(_ task: URLSessionTask) -> Exchange? {
    byTask.withLock { $0[task.taskIdentifier] }
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
  ) {
    exchange(dataTask)?.received(response)
    completionHandler(.allow)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    guard let exchange = exchange(dataTask) else { return }
    if !exchange.received(data) { exchange.stop(.tooLarge, task: dataTask) }
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    let exchange = byTask.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    exchange?.completed(error)
  }

  /// The server never redirects: a redirect is answered as it came, never followed.
  func urlSession(
    _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
  ) {
    completionHandler(nil)
  }
}
