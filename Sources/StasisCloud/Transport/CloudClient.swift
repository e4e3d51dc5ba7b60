import Foundation
import Stasis

/// The v1 API of `stasis-server`, over a ``CloudTransport`` (HTTP by default): one method per
/// route, each with its preconditions, each failure a ``CloudError``. It keeps no state of its own.
public struct CloudClient: Sendable {
  /// The server, the token and the device.
  public let server: CloudServer
  /// How requests reach the server.
  public let transport: any CloudTransport

  /// A client of `server` over HTTP (``HTTPCloudTransport``).
  public init(server: CloudServer) {
    self.init(server: server, transport: HTTPCloudTransport())
  }

  /// A client of `server` over `transport` (the simulation's in-process server, for one).
  public init(server: CloudServer, transport: any CloudTransport) {
    self.server = server
    self.transport = transport
  }

  /// `GET /v1/slots/{slot}` with `If-None-Match: "known"` when a revision is known.
  public func head(slot: SaveSlot, ifNoneMatch known: Int?) async throws(CloudError) -> HeadFetch {
    let reply = try await send("GET", path(slot), headers: known.map { [("If-None-Match", "\"\($0)\"")] } ?? [])
    switch reply.status {
    case 304: return .unchanged
    case 404: return .missing
    case 200:
      guard let revision = reply.etagRevision else { throw CloudError(.server, "the head came without an ETag") }
      return .changed(revision: revision, bytes: reply.body)
    default: throw reply.error
    }
  }

  /// `GET /v1/slots/{slot}/revisions/{n}`: one revision's bytes; nil when the server no longer
  /// has it (pruned past the newest N, or the slot was deleted).
  public func download(slot: SaveSlot, revision: Int) async throws(CloudError) -> [UInt8]? {
    let reply = try await send("GET", path(slot) + "/revisions/\(revision)")
    switch reply.status {
    case 200: return reply.body
    case 404: return nil
    default: throw reply.error
    }
  }

  /// `PUT /v1/slots/{slot}` with `If-Match: "base"`, or `If-None-Match: *` when `base` is nil.
  /// Returns the new revision; a stale base throws ``CloudError/Kind/conflict`` with the head.
  /// `loser` names the revision that lost the conflict this upload resolves
  /// (`X-Stasis-Conflict-Loser`): the server keeps it until it is discarded. `parent` is what
  /// the save continues (`X-Stasis-Parent`): the base unless said otherwise; a creation has none.
  public func upload(
    slot: SaveSlot, bytes: [UInt8], base: Int?, loser: Int? = nil, parent: UploadParent = .base
  ) async throws(CloudError) -> RemoteRevision {
    var headers = [("Content-Type", "application/vnd.stasis")]
    headers.append(base.map { ("If-Match", "\"\($0)\"") } ?? ("If-None-Match", "*"))
    if let loser { headers.append(("X-Stasis-Conflict-Loser", "\"\(loser)\"")) }
    if let base {
      switch parent {
      case .base: headers.append(("X-Stasis-Parent", "\"\(base)\""))
      case .revision(let revision): headers.append(("X-Stasis-Parent", "\"\(revision)\""))
      case .newHistory: headers.append(("X-Stasis-Parent", "none"))
      }
    }
    if !server.device.isEmpty { headers.append(("X-Stasis-Device", server.device)) }
    let reply = try await send("PUT", path(slot), headers: headers, body: bytes)
    guard reply.status == 201 else { throw reply.error }
    guard var created = RemoteRevision(json: reply.json) else {
      throw CloudError(.server, "a 201 without a revision")
    }
    created.slot = slot.name
    created.baseRevision = base
    return created
  }

  /// `GET /v1/slots/{slot}/revisions`: the slot's history, newest first; nil for an unknown slot.
  public func revisions(slot: SaveSlot) async throws(CloudError) -> [RemoteRevision]? {
    let reply = try await send("GET", path(slot) + "/revisions")
    switch reply.status {
    case 200: return (reply.json["revisions"] as? [[String: Any]] ?? []).compactMap(RemoteRevision.init(json:))
    case 404: return nil
    default: throw reply.error
    }
  }

  /// `DELETE /v1/slots/{slot}/revisions/{n}`: discards a revision the server keeps (a
  /// conflict's loser), or any other one but the head. A missing revision throws
  /// ``CloudError/Kind/notFound``; the head, ``CloudError/Kind/refused``.
  public func discard(slot: SaveSlot, revision: Int) async throws(CloudError) {
    let reply = try await send("DELETE", path(slot) + "/revisions/\(revision)")
    guard reply.status == 204 else { throw reply.error }
  }

  /// `GET /v1/slots`: every slot's head, from the server's metadata.
  public func slots() async throws(CloudError) -> [RemoteRevision] {
    let reply = try await send("GET", "/v1/slots")
    guard reply.status == 200 else { throw reply.error }
    return (reply.json["slots"] as? [[String: Any]] ?? []).compactMap(RemoteRevision.init(json:))
  }

  private func path(_ slot: SaveSlot) -> String {
    "/v1/slots/" + (slot.name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? slot.name)
  }

  private struct Reply {
    var status: Int
    var etagRevision: Int?
    var body: [UInt8]

    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }

    /// The error a status other than the expected one means, with the server's own message.
    var error: CloudError {
      let said = json["error"] as? String
      let message = said ?? "HTTP \(status)"
      switch status {
      case 401: return CloudError(.unauthorized, "the server refused the token: \(message)")
      case 404: return CloudError(.notFound, message)
      case 412:
        return CloudError(
          .conflict, message, head: (json["head"] as? [String: Any]).flatMap(RemoteRevision.init(json:)))
      case 400, 403, 409, 413, 428, 431: return CloudError(.refused, said.map { "HTTP \(status): \($0)" } ?? message)
      default: return CloudError(.server, said.map { "HTTP \(status): \($0)" } ?? message)
      }
    }
  }

  private func send(
    _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil
  ) async throws(CloudError) -> Reply {
    var request = CloudRequest(method: method, path: path, body: body)
    request.headers.append(("Authorization", "Bearer \(server.token)"))
    for (name, value) in headers { request.headers.append((name, value)) }
    let response = try await transport.send(request, to: server)
    let tag = response.header("ETag").flatMap { Int($0.trimmingCharacters(in: ["\"", " "])) }
    return Reply(status: response.status, etagRevision: tag, body: response.body)
  }
}
