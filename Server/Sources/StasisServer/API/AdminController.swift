import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Stasis
import StasisInspect
import StasisMerge

/// `/v1/admin/…`: the studio's API, for the staff's own tools and `stasis-server admin`.
/// A staff API key (`stasis-server staff key NAME`) in `Authorization: Bearer KEY`; the
/// roles and the audit log are the console's (``Studio``).
struct AdminController: Sendable {
  /// The staff's actions, each with its audit entry.
  let studio: Studio

  func addRoutes(to router: Router<ServerContext>) {
    let admin = router.group("v1/admin").add(middleware: StaffKeyMiddleware(studio: studio))
    admin.get("me") { _, context in
      let staff = try context.requireStaff()
      return jsonResponse(["name": .string(staff.name), "role": .string(staff.role.rawValue)], status: .ok)
    }
    admin.get("players") { request, _ in
      let players = try await studio.findPlayers(request.uri.queryParameters.get("query") ?? "")
      return jsonResponse(["players": .array(players.map(\.json))], status: .ok)
    }
    admin.get("players/:player") { _, context in
      let overview = try await studio.overview(of: try await adminPlayer(context))
      return jsonResponse(
        [
          "player": overview.player.json, "slots": .array(overview.slots.map(\.json)),
          "devices": .array(overview.devices.map(\.json)), "tokens": .array(overview.tokens.map(\.json)),
        ], status: .ok)
    }
    admin.get("players/:player/slots/:slot/revisions") { _, context in
      let history = try await studio.history(of: try await adminPlayer(context), slot: try slotName(context))
      return jsonResponse(
        [
          "head": .int(history.head),
          "revisions": .array(
            history.revisions.map { revision in
              guard case .object(var fields) = revision.json else { return revision.json }
              fields["roles"] = .array(history.roles(of: revision).map(JSON.string))
              return .object(fields)
            }),
        ], status: .ok)
    }
    admin.get("players/:player/slots/:slot/revisions/:revision") { _, context in
      let (metadata, bytes) = try await studio.download(
        try context.requireStaff(), player: try await adminPlayer(context), slot: try slotName(context),
        revision: try revisionNumber(context))
      return Response(
        status: .ok,
        headers: [
          .contentType: "application/vnd.stasis", .eTag: etag(metadata.revision),
          .contentDisposition: "attachment; filename=\"\(metadata.slot)-r\(metadata.revision).stasis\"",
        ], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
    admin.get("players/:player/slots/:slot/revisions/:revision/tree") { _, context in
      let (_, bytes) = try await studio.file(
        of: try await adminPlayer(context), slot: try slotName(context), revision: try revisionNumber(context))
      let document = try decodedSave(bytes)
      return Response(
        status: .ok, headers: [.contentType: "application/json"],
        body: .init(byteBuffer: ByteBuffer(string: SaveInspection.dump(document.tree))))
    }
    admin.get("players/:player/slots/:slot/diff") { request, context in
      let player = try await adminPlayer(context)
      let slot = try slotName(context)
      guard let from = request.uri.queryParameters.get("from").flatMap({ Int64($0) }),
        let to = request.uri.queryParameters.get("to").flatMap({ Int64($0) })
      else { throw APIError(.badRequest, "give ?from=N&to=M, two revisions of the slot") }
      let old = try decodedSave(try await studio.file(of: player, slot: slot, revision: from).1)
      let new = try decodedSave(try await studio.file(of: player, slot: slot, revision: to).1)
      let differences = SaveInspection.differences(old, new)
      return jsonResponse(
        [
          "from": .int(from), "to": .int(to), "count": .int(Int64(differences.count)),
          "text": .string(SaveInspection.diff(old, new)),
        ], status: .ok)
    }
    admin.post("players/:player/slots/:slot/restore") { request, context in
      let body = try await adminBody(request, context, as: RestoreBody.self)
      guard body.revision > 0, (body.head ?? 1) > 0 else {
        throw APIError(.badRequest, "revision and head are revisions: whole numbers from 1")
      }
      let result = try await studio.restore(
        try context.requireStaff(), player: try await adminPlayer(context), slot: try slotName(context),
        revision: body.revision,
        expectedHead: body.head, reason: body.reason ?? "")
      return jsonResponse(["revision": result.revision.json, "entry": result.entry.json], status: .created)
    }
    admin.post("players/:player/slots/:slot/revisions/:revision/discard") { request, context in
      let body = try await adminBody(request, context, as: DiscardBody.self)
      let entry = try await studio.discard(
        try context.requireStaff(), player: try await adminPlayer(context), slot: try slotName(context),
        revision: try revisionNumber(context), confirm: body.confirm ?? "", reason: body.reason ?? "")
      return jsonResponse(["entry": entry.json], status: .ok)
    }
    admin.get("players/:player/tokens") { _, context in
      let tokens = try await studio.backend.tokens(player: try await adminPlayer(context))
      return jsonResponse(["tokens": .array(tokens.map(\.json))], status: .ok)
    }
    admin.post("players/:player/tokens") { request, context in
      let body = try await adminBody(request, context, as: TokenBody.self)
      let issued = try await studio.issueToken(
        try context.requireStaff(), player: try await adminPlayer(context), label: body.label ?? "",
        reason: body.reason ?? "")
      return jsonResponse(
        ["token": issued.token.json, "secret": .string(issued.secret), "entry": issued.entry.json], status: .created)
    }
    admin.post("players/:player/tokens/:token/revoke") { request, context in
      let body = try await adminBody(request, context, as: ReasonBody.self)
      guard let id = context.parameters.get("token").flatMap({ Int64($0) }) else {
        throw APIError(.badRequest, "a token id is a whole number")
      }
      let entry = try await studio.revokeToken(
        try context.requireStaff(), player: try await adminPlayer(context), id: id, reason: body.reason ?? "")
      return jsonResponse(["entry": entry.json], status: .ok)
    }
    admin.get("audit") { request, _ in
      let query = request.uri.queryParameters
      var filter = AuditFilter(
        player: query.get("player").flatMap { $0.isEmpty ? nil : $0 },
        staff: query.get("staff").flatMap { $0.isEmpty ? nil : $0 })
      if let text = query.get("before") {
        guard let before = Int64(text) else { throw APIError(.badRequest, "before is an entry's id") }
        filter.before = before
      }
      if let text = query.get("limit") {
        guard let limit = Int(text), (1...1000).contains(limit) else {
          throw APIError(.badRequest, "limit is 1-1000")
        }
        filter.limit = limit
      }
      let entries = try await studio.audit(filter)
      return jsonResponse(["entries": .array(entries.map(\.json))], status: .ok)
    }
    admin.post("audit/:entry/undo") { request, context in
      let body = try await adminBody(request, context, as: ReasonBody.self)
      guard let id = context.parameters.get("entry").flatMap({ Int64($0) }) else {
        throw APIError(.badRequest, "an audit entry's id is a whole number")
      }
      let result = try await studio.undo(try context.requireStaff(), entry: id, reason: body.reason ?? "")
      return jsonResponse(["revision": result.revision.json, "entry": result.entry.json], status: .created)
    }
  }

  private func adminPlayer(_ context: ServerContext) async throws -> Player {
    guard let id = context.parameters.get("player").flatMap({ Int64($0) }) else {
      throw APIError(.badRequest, "a player is named by their id, a whole number")
    }
    return try await studio.player(id: id)
  }

  /// A JSON object body of at most 64 KB, decoded strictly: a revision is a JSON integer, not
  /// a string, a fraction or a boolean.
  private func adminBody<Body: Decodable>(_ request: Request, _ context: ServerContext, as: Body.Type) async throws
    -> Body
  {
    let buffer = try await collectBody(request.body, limit: 64 * 1024)
    do {
      return try JSONDecoder().decode(
        Body.self, from: buffer.readableBytes > 0 ? Data(buffer: buffer) : Data("{}".utf8))
    } catch {
      throw APIError(.badRequest, "the body is not the JSON object this route takes: \(Self.describe(error))")
    }
  }

  private static func describe(_ error: any Error) -> String {
    switch error {
    case DecodingError.typeMismatch(let type, let context):
      "\(context.codingPath.map(\.stringValue).joined(separator: ".")) is not \(type)"
    case DecodingError.keyNotFound(let key, _): "\(key.stringValue) is missing"
    case DecodingError.valueNotFound(_, let context):
      "\(context.codingPath.map(\.stringValue).joined(separator: ".")) is null"
    case DecodingError.dataCorrupted(let context) where !context.codingPath.isEmpty:
      "\(context.codingPath.map(\.stringValue).joined(separator: ".")) does not fit its type"
    default: "not a JSON object"
    }
  }
}

/// `POST …/restore`.
struct RestoreBody: Decodable {
  var revision: Int64
  var head: Int64?
  var reason: String?
}

/// `POST …/discard`.
struct DiscardBody: Decodable {
  var confirm: String?
  var reason: String?
}

/// `POST …/tokens`.
struct TokenBody: Decodable {
  var label: String?
  var reason: String?
}

/// `POST …/revoke`, `POST …/undo`.
struct ReasonBody: Decodable {
  var reason: String?
}

/// A stored revision's document (the server checked it when it stored it).
func decodedSave(_ bytes: [UInt8]) throws -> SaveDocument {
  do {
    return try SaveFileFormat.decode(bytes)
  } catch {
    throw StudioError(.conflict, "the stored file does not read: \(error.description)")
  }
}

/// Answers 401 unless `Authorization: Bearer KEY` names an enabled staff member's API key;
/// turns ``StudioError``s into the API's JSON errors.
struct StaffKeyMiddleware: RouterMiddleware {
  typealias Context = ServerContext
  let studio: Studio

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    guard let value = request.headers[.authorization], let key = BearerAuthMiddleware.bearerToken(value),
      let staff = try await studio.staff(key: key)
    else {
      var error = APIError(
        .unauthorized, "a staff API key is required: Authorization: Bearer KEY (stasis-server staff key NAME)")
      error.headers[.wwwAuthenticate] = "Bearer"
      throw error
    }
    var context = context
    context.staff = staff
    do {
      return try await next(request, context)
    } catch let error as StudioError {
      var converted = APIError(HTTPResponse.Status(code: error.kind.rawValue), error.description)
      if let wait = error.retryAfter { converted.headers[.retryAfter] = "\(wait)" }
      throw converted
    }
  }
}

extension Player {
  var json: JSON {
    .object([
      "id": .int(id), "name": .string(name), "createdAt": .string(isoDate(createdAt)), "revoked": .bool(revoked),
    ])
  }
}

extension PlayerDevice {
  var json: JSON {
    .object(["name": .string(name), "revisions": .int(revisions), "lastUpload": .string(isoDate(lastUpload))])
  }
}

extension DeviceToken {
  var json: JSON {
    .object([
      "id": .int(id), "label": .string(label), "fingerprint": .string(fingerprint),
      "createdAt": .string(isoDate(createdAt)), "revokedAt": revokedAt.map { .string(isoDate($0)) } ?? .null,
    ])
  }
}

extension AuditEntry {
  var json: JSON {
    .object([
      "id": .int(id), "at": .string(isoDate(at)), "staff": .string(staff), "action": .string(action.rawValue),
      "playerId": playerId.map(JSON.int) ?? .null, "player": player.map(JSON.string) ?? .null,
      "slot": slot.map(JSON.string) ?? .null, "revision": revision.map(JSON.int) ?? .null,
      "headBefore": headBefore.map(JSON.int) ?? .null, "headAfter": headAfter.map(JSON.int) ?? .null,
      "reason": .string(reason), "undoes": undoes.map(JSON.int) ?? .null, "undoneBy": undoneBy.map(JSON.int) ?? .null,
    ])
  }
}
