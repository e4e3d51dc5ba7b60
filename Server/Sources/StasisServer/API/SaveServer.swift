import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOCore
@_spi(Plumbing) import Stasis
import StasisDelta

#if canImport(Glibc)
  import Glibc
#endif

/// The v1 API over a backend: routes, preconditions, validation of uploads with the Stasis
/// reader, and the JSON the contract names.
package struct SaveServer: Sendable {
  let backend: any SaveBackend
  let options: ServerOptions
  let clock: @Sendable () -> Int64
  let metrics: @Sendable () -> [UInt8]
  /// The staff's actions, for the admin API and the console.
  let studio: Studio

  /// A server over `backend`; `metrics` writes the Prometheus text for `/metrics`.
  package init(
    backend: any SaveBackend, options: ServerOptions,
    clock: @escaping @Sendable () -> Int64 = nowMilliseconds,
    metrics: @escaping @Sendable () -> [UInt8] = { [] }
  ) {
    self.backend = backend
    self.options = options
    self.clock = clock
    self.metrics = metrics
    self.studio = Studio(backend: backend, options: options, clock: clock)
  }

  /// The router: `/health`, `/metrics` (no token), and `/v1/...` (a token).
  package func router() -> Router<ServerContext> {
    let router = Router(context: ServerContext.self)
    router.middlewares.add(RequestLogMiddleware())
    router.middlewares.add(JSONErrorMiddleware())
    router.middlewares.add(HeaderSizeMiddleware())
    router.middlewares.add(MetricsMiddleware())
    router.get("health") { _, _ in
      do {
        try await backend.ping()
        return jsonResponse(["status": .string("ok")], status: .ok)
      } catch {
        throw APIError(.serviceUnavailable, "the database does not answer")
      }
    }
    router.get("metrics") { _, _ in
      var buffer = ByteBuffer()
      buffer.writeBytes(metrics())
      return Response(
        status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
        body: .init(byteBuffer: buffer))
    }
    let v1 = router.group("v1").add(middleware: FeaturesMiddleware(bodyBytes: options.limits.bodyBytes))
      .add(middleware: BearerAuthMiddleware(backend: backend))
    v1.get("slots") { _, context in
      let slots = try await backend.slots(player: context.requirePlayer())
      return jsonResponse(["slots": .array(slots.map(\.json))], status: .ok)
    }
    v1.put("slots/:slot") { request, context in try await put(request, context) }
    addResumableRoutes(to: v1)
    addSettingsRoutes(to: v1)
    v1.get("slots/:slot") { request, context in
      let slot = try slotName(context)
      // A client that has a revision asks with If-None-Match: the head's metadata answers it
      // without reading the file's bytes.
      if let match = request.headers[.ifNoneMatch] {
        guard let head = try await backend.head(player: context.requirePlayer(), slot: slot) else {
          throw APIError(.notFound, "no slot '\(slot)'")
        }
        if match == "*" || etags(match).contains(head.revision) {
          return Response(status: .notModified, headers: [.eTag: etag(head.revision)])
        }
      }
      guard let (metadata, file) = try await backend.file(player: context.requirePlayer(), slot: slot, revision: nil)
      else {
        throw APIError(.notFound, "no slot '\(slot)'")
      }
      return try await fileResponse(metadata, file, request: request, player: context.requirePlayer())
    }
    v1.get("slots/:slot/revisions") { _, context in
      let slot = try slotName(context)
      guard let list = try await backend.revisions(player: context.requirePlayer(), slot: slot) else {
        throw APIError(.notFound, "no slot '\(slot)'")
      }
      let stored = try await backend.storedBytes(player: context.requirePlayer(), slot: slot)
      return jsonResponse(["revisions": .array(list.map(\.json)), "storedBytes": .int(stored)], status: .ok)
    }
    v1.get("slots/:slot/revisions/:revision") { request, context in
      let slot = try slotName(context)
      guard let text = context.parameters.get("revision"), let revision = Int64(text), revision > 0 else {
        throw APIError(.badRequest, "a revision is a positive whole number")
      }
      guard
        let (metadata, file) = try await backend.file(player: context.requirePlayer(), slot: slot, revision: revision)
      else { throw APIError(.notFound, "slot '\(slot)' has no revision \(revision)") }
      if let match = request.headers[.ifNoneMatch], match == "*" || etags(match).contains(revision) {
        return Response(status: .notModified, headers: [.eTag: etag(revision)])
      }
      return try await fileResponse(metadata, file, request: request, player: context.requirePlayer())
    }
    v1.delete("slots/:slot/revisions/:revision") { _, context in
      let slot = try slotName(context)
      guard let text = context.parameters.get("revision"), let revision = Int64(text), revision > 0 else {
        throw APIError(.badRequest, "a revision is a positive whole number")
      }
      switch try await backend.discard(player: context.requirePlayer(), slot: slot, revision: revision) {
      case .discarded: return Response(status: .noContent)
      case .notFound: throw APIError(.notFound, "slot '\(slot)' has no revision \(revision)")
      case .head:
        throw APIError(
          .conflict,
          "revision \(revision) is the head of slot '\(slot)': delete the slot instead (DELETE /v1/slots/\(slot))")
      }
    }
    v1.delete("slots/:slot") { request, context in
      let slot = try slotName(context)
      guard let precondition = try parsePrecondition(UploadHeaders(request)), case .head(let expected) = precondition
      else {
        throw APIError(.preconditionRequired, "a delete needs If-Match: \"N\", the slot's head revision")
      }
      switch try await backend.delete(player: context.requirePlayer(), slot: slot, head: expected) {
      case .deleted: return Response(status: .noContent)
      case .notFound: throw APIError(.notFound, "no slot '\(slot)'")
      case .stale(let head):
        throw APIError(
          .preconditionFailed, "the slot's head is revision \(head.revision), not \(expected)", head: head)
      }
    }
    addAdminRoutes(to: router)
    do {
      try Console(studio: studio, secureCookies: options.secureCookies).addRoutes(to: router)
    } catch {
      // The templates are compiled into the server; ConsoleTests renders every one.
      preconditionFailure("the console's templates do not parse: \(error)")
    }
    return router
  }

  // MARK: Upload

  private func put(_ request: Request, _ context: ServerContext) async throws -> Response {
    let slot = try slotName(context)
    // Every header checked once, before the body is read, so a client learns at once what is wrong.
    let upload = try UploadRequest(UploadHeaders(request))
    // The body is checked as a save whatever its Content-Type says (curl's default included).
    let limit = options.limits.bodyBytes
    if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
      throw APIError(.contentTooLarge, "the upload is \(length) bytes; the limit is \(limit)")
    }
    let body = try await collect(request.body, limit: limit)
    return try await receive(upload, body: [UInt8](buffer: body), slot: slot, player: context.requirePlayer())
  }

  /// The body, refusing it once it passes `limit` bytes. The request deadline
  /// (``RequestDeadlineHandler``) bounds how long it may take: when it passes, the stream fails
  /// and the deadline's `408` is the answer.
  func collect(_ body: RequestBody, limit: Int) async throws -> ByteBuffer {
    var buffer = ByteBuffer()
    do {
      for try await part in body {
        guard buffer.readableBytes + part.readableBytes <= limit else {
          throw APIError(.contentTooLarge, "the upload passes the limit of \(limit) bytes")
        }
        var part = part
        buffer.writeBuffer(&part)
      }
    } catch let error as APIError {
      throw error
    } catch {
      throw APIError(.requestTimeout, "the upload's body did not arrive whole: \(error)")
    }
    return buffer
  }

  /// A revision's file; as a delta (RFC 3229: `226 IM Used`) when the client accepts one
  /// (`A-IM: vnd.stasis.delta`) and names in `If-None-Match` a revision it holds that the slot
  /// still has, and the delta is smaller.
  private func fileResponse(_ metadata: RevisionMetadata, _ file: [UInt8], request: Request, player: Player)
    async throws -> Response
  {
    var headers: HTTPFields = [
      .eTag: etag(metadata.revision), .contentType: "application/vnd.stasis", revisionHeader: "\(metadata.revision)",
    ]
    let accepted = request.headers[acceptIMHeader].map { $0.lowercased().contains(deltaIM) } ?? false
    if accepted, let match = request.headers[.ifNoneMatch] {
      for base in etags(match).sorted(by: >) where base != metadata.revision {
        guard let (_, held) = try await backend.file(player: player, slot: metadata.slot, revision: base) else {
          continue
        }
        let delta = SaveDelta.make(from: held, to: file)
        guard delta.count < file.count else { break }
        headers[.contentType] = SaveDelta.mediaType
        headers[imHeader] = deltaIM
        headers[deltaBaseResponseHeader] = etag(base)
        headers[.cacheControl] = "no-store"
        return Response(
          status: .init(code: 226, reasonPhrase: "IM Used"), headers: headers,
          body: .init(byteBuffer: ByteBuffer(bytes: delta)))
      }
    }
    return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: file)))
  }
}

/// `X-Stasis-Revision`: the revision a file answer holds.
let revisionHeader = HTTPField.Name("X-Stasis-Revision")!
/// `A-IM` (RFC 3229): the instance manipulations a client accepts.
let acceptIMHeader = HTTPField.Name("A-IM")!
/// `IM` (RFC 3229): the one a `226` applied.
let imHeader = HTTPField.Name("IM")!
/// `Delta-Base` (RFC 3229): the entity tag of the revision a `226`'s delta applies to.
let deltaBaseResponseHeader = HTTPField.Name("Delta-Base")!
/// The instance manipulation of a Stasis delta (``SaveDelta``).
let deltaIM = "vnd.stasis.delta"

func jsonResponse(_ object: [String: JSON], status: HTTPResponse.Status) -> Response {
  Response(
    status: status, headers: [.contentType: "application/json"],
    body: .init(byteBuffer: ByteBuffer(string: JSON.object(object).text)))
}

extension RevisionMetadata {
  /// The metadata as the API's JSON.
  /// (The summary is JSON text the server wrote when it stored the revision.)
  var json: JSON {
    .object([
      "slot": .string(slot), "revision": .int(revision), "baseRevision": baseRevision.map(JSON.int) ?? .null,
      "parent": parent.map(JSON.int) ?? .null,
      "bytes": .int(bytes), "sha256": .string(sha256), "uploadedAt": .string(isoDate(uploadedAt)),
      "device": .string(device), "game": .string(game), "build": .string(build), "schema": .int(schema),
      "createdAt": .string(isoDate(createdAt)), "playTime": .double(playTime),
      "progress": progress.map(JSON.double) ?? .null, "summary": summaryJSON.isEmpty ? .null : .raw(summaryJSON),
      "kept": .bool(isKept), "keptReason": keptReason.map(JSON.string) ?? .null,
      "lostTo": lostTo.map(JSON.int) ?? .null,
    ])
  }
}

/// `2026-11-22T20:06:43.123Z` (RFC 3339, UTC, milliseconds), formatted directly: creating an
/// `ISO8601DateFormatter` for each date cost more than the rest of a listing.
func isoDate(_ milliseconds: Int64) -> String {
  var seconds = time_t(milliseconds.quotient(dividingBy: 1000))
  let millis = Int(milliseconds.modulo(1000))
  var parts = tm()
  gmtime_r(&seconds, &parts)
  func digits(_ value: Int, _ count: Int) -> String {
    let text = String(value)
    return String(repeating: "0", count: max(0, count - text.count)) + text
  }
  return "\(digits(Int(parts.tm_year) + 1900, 4))-\(digits(Int(parts.tm_mon) + 1, 2))-\(digits(Int(parts.tm_mday), 2))T"
    + "\(digits(Int(parts.tm_hour), 2)):\(digits(Int(parts.tm_min), 2)):\(digits(Int(parts.tm_sec), 2)).\(digits(millis, 3))Z"
}

extension Int64 {
  /// Division rounding towards minus infinity, so dates before 1970 format right too.
  fileprivate func quotient(dividingBy divisor: Int64) -> Int64 {
    let (q, r) = quotientAndRemainder(dividingBy: divisor)
    return r < 0 ? q - 1 : q
  }

  fileprivate func modulo(_ divisor: Int64) -> Int64 {
    let r = self % divisor
    return r < 0 ? r + divisor : r
  }
}

/// Milliseconds since the Unix epoch: the server's default clock.
@usableFromInline package func nowMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
