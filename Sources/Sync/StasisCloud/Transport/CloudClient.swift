import Foundation
import Stasis
import StasisDelta

/// The v1 API of `stasis-server`, over a ``CloudTransport`` (HTTP by default): one method per
/// route, each with its preconditions, each failure a ``CloudError``. It keeps no state of its own.
public struct CloudClient: Sendable {
  /// The server's URL, the player's token and this device's name.
  public let credentials: CloudCredentials
  /// How requests reach the server.
  public let transport: any CloudTransport
  /// What the server said it speaks, and the uploads in progress: shared by every copy.
  let session = ClientSession()
  /// How uploads and downloads are sent (deltas, parts): what this build does by default.
  public var transfer = TransferOptions()

  /// A client of the server `credentials` name, over HTTP (``URLSessionCloudTransport``).
  public init(credentials: CloudCredentials) {
    self.init(credentials: credentials, transport: URLSessionCloudTransport())
  }

  /// A client of the server `credentials` name, over `transport` (the simulation's in-process
  /// server, for one).
  public init(credentials: CloudCredentials, transport: any CloudTransport) {
    self.credentials = credentials
    self.transport = transport
  }

  /// True once the server said it takes deltas and resumable uploads (`X-Stasis-Features`);
  /// until then, and against an older server, files go whole.
  public var serverTakesDeltas: Bool { session.takesDeltas }

  /// The largest file the server takes (its `Upload-Limit: max-size`), once it has said.
  public var serverUploadLimit: Int? { session.uploadLimit }

  /// `GET /v1/slots/{slot}` with `If-None-Match: "known"` when a revision is known. With
  /// `holding` (the bytes of revision `known`, as this device has them), a server that takes
  /// deltas sends only what differs (`226 IM Used`, RFC 3229).
  public func head(slot: SaveSlot, ifNoneMatch known: Int?, holding: HeldRevision? = nil) async throws(CloudError)
    -> HeadFetch
  {
    var headers = known.map { [("If-None-Match", "\"\($0)\"")] } ?? []
    // A-IM goes with the first request of a new process too, before this session has heard
    // whether the server takes deltas: a server that does not ignores it and answers whole
    // (RFC 3229), so a fast-forward in any process is one request and a delta.
    let held = holding.flatMap { $0.revision == known && transfer.deltas ? $0 : nil }
    if held != nil { headers.append(("A-IM", deltaIM)) }
    let reply = try await send("GET", path(slot), headers: headers)
    switch reply.status {
    case 304: return .unchanged
    case 404: return .missing
    case 200, 226:
      guard let revision = reply.etagRevision else { throw CloudError(.server, "the head came without an ETag") }
      guard reply.status == 226 else {
        session.received(whole: reply.body.count)
        return .changed(revision: revision, bytes: reply.body)
      }
      if let bytes = patched(reply, held) { return .changed(revision: revision, bytes: bytes) }
      return try await head(slot: slot, ifNoneMatch: known, holding: nil)  // the delta did not apply: whole
    default: throw reply.error
    }
  }

  /// `GET /v1/slots/{slot}/revisions/{n}`: one revision's bytes; nil when the server no longer
  /// has it (pruned past the newest N, or the slot was deleted). With `holding`, as a delta
  /// from the revision held, when the server takes deltas.
  public func download(slot: SaveSlot, revision: Int, holding: HeldRevision? = nil) async throws(CloudError)
    -> [UInt8]?
  {
    let held = holding.flatMap { $0.revision != revision && transfer.deltas ? $0 : nil }
    let headers = held.map { [("If-None-Match", "\"\($0.revision)\""), ("A-IM", deltaIM)] } ?? []
    let reply = try await send("GET", path(slot) + "/revisions/\(revision)", headers: headers)
    switch reply.status {
    case 200:
      session.received(whole: reply.body.count)
      return reply.body
    case 226:
      if let bytes = patched(reply, held) { return bytes }
      return try await download(slot: slot, revision: revision, holding: nil)
    case 404: return nil
    default: throw reply.error
    }
  }

  /// A `226`'s delta applied to the revision held; nil when it is not a delta on that revision
  /// or does not apply (the caller asks again for the whole file).
  private func patched(_ reply: Reply, _ held: HeldRevision?) -> [UInt8]? {
    guard let held, reply.header("Delta-Base") == "\"\(held.revision)\"" else { return nil }
    guard let bytes = try? SaveDelta.apply(reply.body, to: held.bytes) else { return nil }
    session.received(delta: reply.body.count, file: bytes.count)
    return bytes
  }

  /// Uploads a file as the slot's next revision, with `If-Match: "base"`, or
  /// `If-None-Match: *` when `base` is nil. Returns the new revision; a stale base throws
  /// ``CloudError/Kind/conflict`` with the head. `loser` names the revision that lost the
  /// conflict this upload resolves (`X-Stasis-Conflict-Loser`): the server keeps it until it is
  /// discarded. `parent` is what the save continues (`X-Stasis-Parent`): the base unless said
  /// otherwise; a creation has none.
  ///
  /// With `deltaFrom` (a revision the server has, and its bytes as this device has them), a
  /// server that takes deltas gets only what differs (`SaveDelta`); a larger upload goes in
  /// parts (``TransferOptions/partSize``), and one cut part-way resumes where the server's bytes
  /// end, in this call or the next. An older server gets `PUT` and the whole file.
  public func upload(
    slot: SaveSlot, bytes: [UInt8], base: Int?, loser: Int? = nil, parent: UploadParent = .base,
    deltaFrom held: HeldRevision? = nil
  ) async throws(CloudError) -> RemoteRevision {
    var headers: [(String, String)] = []
    headers.append(base.map { ("If-Match", "\"\($0)\"") } ?? ("If-None-Match", "*"))
    if let loser { headers.append(("X-Stasis-Conflict-Loser", "\"\(loser)\"")) }
    if let base {
      switch parent {
      case .base: headers.append(("X-Stasis-Parent", "\"\(base)\""))
      case .revision(let revision): headers.append(("X-Stasis-Parent", "\"\(revision)\""))
      case .newHistory: headers.append(("X-Stasis-Parent", "none"))
      }
    }
    if !credentials.device.isEmpty { headers.append(("X-Stasis-Device", credentials.device)) }
    let reply: Reply
    if session.takesDeltas, transfer.deltas || bytes.count > transfer.partSize {
      reply = try await sendUpload(slot: slot, bytes: bytes, headers: headers, held: transfer.deltas ? held : nil)
    } else {
      reply = try await send(
        "PUT", path(slot), headers: headers + [("Content-Type", "application/vnd.stasis")], body: bytes)
      session.uploaded(file: bytes.count)
      session.sent(bytes.count)
    }
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

  struct Reply {
    var status: Int
    var etagRevision: Int?
    var body: [UInt8]
    var headers: [(name: String, value: String)] = []

    func header(_ name: String) -> String? {
      headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

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
      case 503:
        var error = CloudError(.unavailable, "the server is unavailable: \(said ?? "HTTP 503")")
        // Retry-After in seconds (a date is allowed too; then the backoff alone decides).
        error.retryAfter = header("Retry-After").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
          .map { .seconds(min(max($0, 0), 3600)) }
        return error
      default: return CloudError(.server, said.map { "HTTP \(status): \($0)" } ?? message)
      }
    }
  }

  func send(
    _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil
  ) async throws(CloudError) -> Reply {
    var request = CloudRequest(method: method, path: path, body: body)
    request.headers.append(("Authorization", "Bearer \(credentials.token)"))
    for (name, value) in headers { request.headers.append((name, value)) }
    session.requested()
    let response = try await transport.send(request, to: credentials)
    session.learn(from: response)
    let tag = response.header("ETag").flatMap { Int($0.trimmingCharacters(in: ["\"", " "])) }
    return Reply(status: response.status, etagRevision: tag, body: response.body, headers: response.headers)
  }

  func path(_ slot: SaveSlot) -> String {
    "/v1/slots/" + (slot.name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? slot.name)
  }
}
