import Foundation
import Stasis

/// Where a player's cloud saves live: a `stasis-server`, the player's bearer token, and the
/// name this device gives its uploads.
public struct CloudServer: Sendable, Equatable {
  /// The server's base URL, such as `http://127.0.0.1:8080`.
  public var url: String
  /// The bearer token `stasis-server players add` printed. Never logged, never in an error.
  public var token: String
  /// This device's name, sent as `X-Stasis-Device` (the server prefers the save's own).
  public var device: String
  /// How long one request may take, connecting included.
  public var timeout: Duration

  /// Creates a server description.
  public init(url: String, token: String, device: String = "", timeout: Duration = .seconds(30)) {
    self.url = url.hasSuffix("/") ? String(url.dropLast()) : url
    self.token = token
    self.device = device
    self.timeout = timeout
  }

  /// Equal when the URL and the token are: two servers whose revisions can be compared.
  public static func == (lhs: CloudServer, rhs: CloudServer) -> Bool {
    lhs.url == rhs.url && lhs.token == rhs.token
  }
}

/// What the server keeps about one revision (`GET /v1/slots/{slot}/revisions`, a `412`'s head).
public struct RemoteRevision: Sendable, Equatable {
  /// The slot.
  public var slot: String
  /// The revision number (1, 2, 3, … per slot, never reused).
  public var revision: Int
  /// The revision it was based on, or nil for a creation.
  public var baseRevision: Int?
  /// The file's size.
  public var bytes: Int
  /// The file's SHA-256, lowercase hex.
  public var sha256: String
  /// When the server stored it (ISO 8601).
  public var uploadedAt: String
  /// The device that wrote it.
  public var device: String
  /// Play time in seconds, from the save's header.
  public var playTime: Double
  /// Progress 0–1, from the save's header, when the game records one.
  public var progress: Double?
  /// The revision uploaded over this one as a conflict's resolution, when this one lost: the
  /// server keeps it out of pruning until it is discarded (``CloudClient/discard(slot:revision:)``).
  public var lostTo: Int?
  /// Why the server keeps it, when it does.
  public var keptReason: String?

  /// True when the server keeps this revision out of pruning.
  public var isKept: Bool { lostTo != nil || keptReason != nil }

  /// Reads the API's JSON object; nil when a required key is missing.
  init?(json: [String: Any]) {
    guard let revision = json["revision"] as? Int else { return nil }
    slot = json["slot"] as? String ?? ""
    self.revision = revision
    baseRevision = json["baseRevision"] as? Int
    bytes = json["bytes"] as? Int ?? 0
    sha256 = json["sha256"] as? String ?? ""
    uploadedAt = json["uploadedAt"] as? String ?? ""
    device = json["device"] as? String ?? ""
    playTime = json["playTime"] as? Double ?? Double(json["playTime"] as? Int ?? 0)
    progress = json["progress"] as? Double
    lostTo = json["lostTo"] as? Int
    keptReason = json["keptReason"] as? String
  }
}

/// Why a cloud request did not do what was asked. One line, never the token.
public struct CloudError: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of failure.
  public enum Kind: String, Sendable, Equatable {
    /// The server could not be reached (refused, reset, timed out): retried with backoff.
    case offline
    /// The token is missing, wrong or revoked (`401`).
    case unauthorized
    /// The precondition was stale: another device saved first (`412`); ``CloudError/head`` is theirs.
    case conflict
    /// No such slot or revision (`404`).
    case notFound
    /// The server refused the file (`400`, `413`) or the request: retrying will not help.
    case refused
    /// The server failed (`5xx`) or answered what the API never does.
    case server
    /// The request was cancelled (the background budget ran out).
    case cancelled
  }

  /// What kind of failure.
  public var kind: Kind
  /// What happened, in one line.
  public var message: String
  /// The server's head, for a ``Kind/conflict``.
  public var head: RemoteRevision?
  /// True when the request certainly never reached the server (the connection was refused,
  /// or there is no network): nothing it asked for can have happened there.
  public var neverSent = false
  /// The transport's own error when the network failed (a `URLError` over HTTP, whose code
  /// says what: `.cannotConnectToHost`, `.timedOut`); nil for an answer the server gave.
  public var underlyingError: (any Error)?

  /// Creates an error.
  public init(_ kind: Kind, _ message: String, head: RemoteRevision? = nil) {
    self.kind = kind
    self.message = message
    self.head = head
  }

  public var description: String { "\(kind.rawValue): \(message)" }

  /// Equal when every field is, and the wrapped errors are of one type and print alike.
  public static func == (a: CloudError, b: CloudError) -> Bool {
    a.kind == b.kind && a.message == b.message && a.head == b.head && a.neverSent == b.neverSent
      && a.underlyingError.map { String(reflecting: $0) } == b.underlyingError.map { String(reflecting: $0) }
  }
}

/// What a conditional `GET` of a slot's head found.
public enum HeadFetch: Sendable, Equatable {
  /// The head is still the revision asked about (`304`).
  case unchanged
  /// The slot does not exist on the server (never made, or deleted).
  case missing
  /// The head is `revision`, with its file's bytes.
  case changed(revision: Int, bytes: [UInt8])
}

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
  /// (`X-Stasis-Conflict-Loser`): the server keeps it until it is discarded.
  public func upload(slot: SaveSlot, bytes: [UInt8], base: Int?, loser: Int? = nil) async throws(CloudError)
    -> RemoteRevision
  {
    var headers = [("Content-Type", "application/vnd.stasis")]
    headers.append(base.map { ("If-Match", "\"\($0)\"") } ?? ("If-None-Match", "*"))
    if let loser { headers.append(("X-Stasis-Conflict-Loser", "\"\(loser)\"")) }
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
