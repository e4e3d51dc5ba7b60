import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import StasisCloud
import StasisServer
import StasisTesting
import Synchronization

/// The real save server in this process, for tests of cloud sync: `stasis-server`'s router (its
/// middleware and its upload rule included) over its SQLite backend in a folder of its own,
/// answering a ``CloudTransport``'s requests with no socket, no thread and no process.
///
/// Give it as the transport of every device's sync, with the credentials ``addPlayer(_:)``
/// returns:
///
/// ```swift
/// let server = try InMemoryCloudServer()
/// let credentials = try await server.addPlayer("ada")
/// let sync = CloudSync(
///   coordinator: coordinator, credentials: credentials, transport: server)
/// ```
///
/// It is not a second server: the requests go through the same router `stasis-server serve`
/// builds, so what a test sees is what a device would see over HTTP. What needs a socket (a
/// deadline, a killed server, a proxy that cuts the line) needs `stasis-server` itself. Its
/// folder is removed when the last reference to the server goes.
public final class InMemoryCloudServer: CloudTransport {
  /// The URL its credentials name; nothing listens there.
  public static let url = "http://stasis.in-memory"
  /// The backend the router stores into: what a test reads to see what was committed.
  package let backend: SQLiteBackend
  private let responder: RouterResponder<ServerContext>
  private let folder: TemporaryFolder
  private let served = Atomic<Int>(0)

  /// A server with an empty database, keeping `keepRevisions` revisions per slot (besides the
  /// losers of conflicts), on `clock` (milliseconds since the Unix epoch; the wall clock by default).
  public init(keepRevisions: Int = 10, clock: @escaping @Sendable () -> Int64 = nowMilliseconds) throws {
    folder = try TemporaryFolder(prefix: "stasis-in-memory-server")
    backend = try SQLiteBackend(path: folder.path + "/server.sqlite")
    responder = SaveServer(backend: backend, options: ServerOptions(keepRevisions: keepRevisions), clock: clock)
      .router().buildResponder()
  }

  /// Adds a player, as `stasis-server players add NAME` does, and returns the credentials a
  /// device named `device` syncs with.
  public func addPlayer(_ name: String, device: String = "") async throws -> CloudCredentials {
    let token = BearerToken.generate()
    _ = try await backend.addPlayer(name: name, tokenHash: BearerToken.hash(token), at: nowMilliseconds())
    return CloudCredentials(url: Self.url, token: token, device: device)
  }

  /// How many requests it has answered.
  public var requestsServed: Int { served.load(ordering: .relaxed) }

  /// Answers `request` as the server would over HTTP.
  public func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
    served.add(1, ordering: .relaxed)
    return await RouterTransport.respond(to: request, with: responder)
  }
}

/// A ``CloudRequest`` through the server's router in this process, and its answer as a
/// ``CloudResponse``: what ``InMemoryCloudServer`` and the simulation's in-process server both send.
package enum RouterTransport {
  /// The router's answer to `request`; a handler's error is answered as the server's middleware
  /// answers it, anything else `500`.
  package static func respond(
    to request: CloudRequest, with responder: RouterResponder<ServerContext>
  ) async -> CloudResponse {
    var fields = HTTPFields()
    for (name, value) in request.headers {
      if let field = HTTPField.Name(name) { fields.append(HTTPField(name: field, value: value)) }
    }
    if let body = request.body { fields[.contentLength] = String(body.count) }
    let head = HTTPRequest(
      method: HTTPRequest.Method(request.method) ?? .get, scheme: "http", authority: "localhost",
      path: request.path, headerFields: fields)
    let hbRequest = Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: request.body ?? [])))
    var logger = Logger(label: "stasis.in-process.request")
    logger.logLevel = .critical
    let context = ServerContext(
      source: ApplicationRequestContextSource(channel: NIOAsyncTestingChannel(), logger: logger))
    let response: Response
    do {
      response = try await responder.respond(to: hbRequest, context: context)
    } catch let error as any HTTPResponseError {
      guard let answer = try? error.response(from: hbRequest, context: context) else {
        return CloudResponse(status: 500)
      }
      response = answer
    } catch {
      return CloudResponse(status: 500)
    }
    let writer = CollectingWriter()
    try? await response.body.write(writer)
    return CloudResponse(
      status: Int(response.status.code), headers: response.headers.map { ($0.name.rawName, $0.value) },
      body: writer.bytes.withLock { $0 })
  }
}

/// Collects a response's body.
private final class CollectingWriter: ResponseBodyWriter, Sendable {
  let bytes = Mutex<[UInt8]>([])
  func write(_ buffer: ByteBuffer) async throws { bytes.withLock { $0.append(contentsOf: buffer.readableBytesView) } }
  func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
