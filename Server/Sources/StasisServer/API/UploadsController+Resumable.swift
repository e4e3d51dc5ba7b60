import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Resumable uploads, after the IETF's resumable-uploads draft (draft-ietf-httpbis-resumable-upload)
/// and tus: `POST /v1/slots/{slot}/uploads` creates one (or, with `Upload-Complete: ?1` and the
/// whole body, is an upload like `PUT`); `PATCH /v1/uploads/{id}` appends a part at its
/// `Upload-Offset`; `HEAD` says how much arrived; `DELETE` abandons it. Each part is stored
/// when it has arrived whole, so a cut connection costs the part it cut, and no more.
extension UploadsController {
  /// The largest part one `PATCH` may carry.
  static let largestPart = 4 << 20
  /// An upload not completed in this long is removed (its parts and its pin with it).
  static let uploadLifetime: Int64 = 24 * 3600 * 1000

  func addResumableRoutes(to v1: RouterGroup<ServerContext>) {
    v1.post("slots/:slot/uploads") { request, context in try await createUpload(request, context) }
    v1.patch("uploads/:id") { request, context in try await appendToUpload(request, context) }
    v1.head("uploads/:id") { _, context in
      let upload = try await pendingUpload(context)
      var response = Response(status: .noContent)
      response.headers[uploadOffsetHeader] = "\(upload.received)"
      response.headers[uploadLengthHeader] = "\(upload.length)"
      response.headers[uploadCompleteHeader] = "?0"
      response.headers[.cacheControl] = "no-store"
      return response
    }
    v1.delete("uploads/:id") { _, context in
      let id = context.parameters.get("id") ?? ""
      guard try await storage.removeUpload(player: context.requirePlayer(), id: id) else {
        throw APIError(.notFound, "no upload '\(id)'")
      }
      return Response(status: .noContent)
    }
  }

  private func createUpload(_ request: Request, _ context: ServerContext) async throws -> Response {
    let slot = try slotName(context)
    let player = try context.requirePlayer()
    let headers = UploadHeaders(request)
    let upload = try UploadRequest(headers)
    let (precondition, deltaBase) = (upload.precondition, upload.deltaBase)
    let complete = try parseComplete(request)
    guard let text = request.headers[uploadLengthHeader], let length = Int64(text), length >= 0 else {
      throw APIError(.badRequest, "an upload needs Upload-Length: the bytes it will send, in all")
    }
    let limit = options.limits.bodyBytes
    guard length <= Int64(limit) else {
      throw APIError(.contentTooLarge, "the upload is \(length) bytes; the limit is \(limit)")
    }
    let body = [UInt8](buffer: try await collectBody(request.body, limit: Int(length)))
    if complete {
      guard body.count == length else {
        throw APIError(.badRequest, "Upload-Complete: ?1 with \(body.count) of the \(length) bytes announced")
      }
      return try await receive(upload, body: body, slot: slot, player: player)
    }
    // The precondition now, so a client does not send a whole upload to learn it was stale.
    let head = try await storage.head(player: player, slot: slot)
    switch precondition {
    case .create where head != nil, .head where head?.revision != precondition.expected:
      throw staleError(head: head, precondition: precondition, slot: slot)
    default: break
    }
    let now = clock()
    try await storage.expireUploads(before: now - Self.uploadLifetime)
    var random = SystemRandomNumberGenerator()
    let id = (0..<4).map { _ in String(random.next() as UInt32, radix: 16) }.map {
      String(repeating: "0", count: 8 - $0.count) + $0
    }.joined()
    let created = try await storage.createUpload(
      player: player, slot: slot, id: id, at: now, length: length, headers: headers.json, deltaRevision: deltaBase)
    if created == .baseGone {
      // Pruned since the check above: the head moved on (another server stored two revisions
      // in between), so the upload is stale, and a 412 tells the client to fetch the head.
      let current = try await storage.head(player: player, slot: slot)
      if case .head = precondition, current?.revision != precondition.expected {
        throw staleError(head: current, precondition: precondition, slot: slot)
      }
      throw APIError(
        .conflict,
        "the delta is made against revision \(deltaBase ?? 0) of slot '\(slot)', which the server no longer keeps: "
          + "send the whole file")
    }
    var received: Int64 = 0
    if !body.isEmpty,
      case .appended(let now) = try await storage.appendToUpload(
        player: player, id: id, offset: 0, bytes: body)
    {
      received = now
    }
    var response = jsonResponse(
      [
        "upload": .string(id), "slot": .string(slot), "offset": .int(received), "length": .int(length),
        "expiresAt": .string(isoDate(now + Self.uploadLifetime)),
      ], status: .created)
    response.headers[.location] = "/v1/uploads/\(id)"
    response.headers[uploadOffsetHeader] = "\(received)"
    return response
  }

  private func appendToUpload(_ request: Request, _ context: ServerContext) async throws -> Response {
    let player = try context.requirePlayer()
    let upload = try await pendingUpload(context)
    guard let text = request.headers[uploadOffsetHeader], let offset = Int64(text), offset >= 0 else {
      throw APIError(.badRequest, "a part needs Upload-Offset: where it starts")
    }
    let complete = try parseComplete(request)
    let body = [UInt8](buffer: try await collectBody(request.body, limit: Self.largestPart))
    let received: Int64
    switch try await storage.appendToUpload(player: player, id: upload.id, offset: offset, bytes: body) {
    case .appended(let now): received = now
    case .notFound: throw APIError(.notFound, "no upload '\(upload.id)'")
    case .tooLong(let length):
      throw APIError(.badRequest, "the part passes the upload's length of \(length) bytes")
    case .mismatch(let now):
      var error = APIError(.conflict, "the upload has \(now) bytes; this part starts at \(offset)")
      error.headers[uploadOffsetHeader] = "\(now)"
      throw error
    }
    guard complete else {
      var response = Response(status: .noContent)
      response.headers[uploadOffsetHeader] = "\(received)"
      return response
    }
    guard received == upload.length else {
      throw APIError(.badRequest, "Upload-Complete: ?1 with \(received) of the \(upload.length) bytes announced")
    }
    guard let body = try await storage.uploadBody(player: player, id: upload.id),
      let headers = UploadHeaders(json: upload.headers)
    else { throw APIError(.notFound, "no upload '\(upload.id)'") }
    do {
      // Parsed again from what was kept: the same checks the creating request passed.
      let answer = try await receive(
        try UploadRequest(headers), body: body, slot: upload.slot, player: player, pinned: upload.deltaPiece)
      _ = try await storage.removeUpload(player: player, id: upload.id)
      return answer
    } catch let error as APIError {
      // Answered for good (a 412, a 400): the upload is over. A failure of the server's own
      // leaves it, so the last part can be sent again.
      _ = try await storage.removeUpload(player: player, id: upload.id)
      throw error
    }
  }

  private func pendingUpload(_ context: ServerContext) async throws -> PendingUpload {
    let id = context.parameters.get("id") ?? ""
    guard let upload = try await storage.upload(player: context.requirePlayer(), id: id) else {
      throw APIError(.notFound, "no upload '\(id)'")
    }
    return upload
  }

  /// `Upload-Complete: ?1` (the last part) or `?0`, a structured-field boolean; required.
  private func parseComplete(_ request: Request) throws -> Bool {
    switch request.headers[uploadCompleteHeader]?.trimmingCharacters(in: .whitespaces) {
    case "?1": true
    case "?0": false
    default: throw APIError(.badRequest, "an upload's request needs Upload-Complete: ?1 (its last part) or ?0")
    }
  }
}

/// `Upload-Offset`: the bytes an upload has received, or where a part starts.
let uploadOffsetHeader = HTTPField.Name("Upload-Offset")!
/// `Upload-Length`: the bytes an upload has in all.
let uploadLengthHeader = HTTPField.Name("Upload-Length")!
/// `Upload-Complete: ?1` on an upload's last request.
let uploadCompleteHeader = HTTPField.Name("Upload-Complete")!
