import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOCore
@_spi(Plumbing) import Stasis

#if canImport(Glibc)
  import Glibc
#endif

/// The v1 API over a backend: routes, preconditions, validation of uploads with the Stasis
/// reader, and the JSON the contract names.
public struct SaveServer: Sendable {
  let backend: any SaveBackend
  let options: ServerOptions
  let clock: @Sendable () -> Int64
  let metrics: @Sendable () -> [UInt8]

  /// A server over `backend`; `metrics` writes the Prometheus text for `/metrics`.
  public init(
    backend: any SaveBackend, options: ServerOptions,
    clock: @escaping @Sendable () -> Int64 = nowMilliseconds,
    metrics: @escaping @Sendable () -> [UInt8] = { [] }
  ) {
    self.backend = backend
    self.options = options
    self.clock = clock
    self.metrics = metrics
  }

  /// The router: `/health`, `/metrics` (no token), and `/v1/...` (a token).
  public func router() -> Router<ServerContext> {
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
    let v1 = router.group("v1").add(middleware: BearerAuthMiddleware(backend: backend))
    v1.get("slots") { _, context in
      let slots = try await backend.slots(player: context.player!)
      return jsonResponse(["slots": .array(slots.map(\.json))], status: .ok)
    }
    v1.put("slots/:slot") { request, context in try await put(request, context) }
    v1.get("slots/:slot") { request, context in
      let slot = try slotName(context)
      // A client that has a revision asks with If-None-Match: the head's metadata answers it
      // without reading the file's bytes.
      if let match = request.headers[.ifNoneMatch] {
        guard let head = try await backend.head(player: context.player!, slot: slot) else {
          throw APIError(.notFound, "no slot '\(slot)'")
        }
        if match == "*" || etags(match).contains(head.revision) {
          return Response(status: .notModified, headers: [.eTag: etag(head.revision)])
        }
      }
      guard let (metadata, file) = try await backend.file(player: context.player!, slot: slot, revision: nil) else {
        throw APIError(.notFound, "no slot '\(slot)'")
      }
      return fileResponse(metadata, file)
    }
    v1.get("slots/:slot/revisions") { _, context in
      let slot = try slotName(context)
      guard let list = try await backend.revisions(player: context.player!, slot: slot) else {
        throw APIError(.notFound, "no slot '\(slot)'")
      }
      return jsonResponse(["revisions": .array(list.map(\.json))], status: .ok)
    }
    v1.get("slots/:slot/revisions/:revision") { _, context in
      let slot = try slotName(context)
      guard let text = context.parameters.get("revision"), let revision = Int64(text), revision > 0 else {
        throw APIError(.badRequest, "a revision is a positive whole number")
      }
      guard let (metadata, file) = try await backend.file(player: context.player!, slot: slot, revision: revision)
      else { throw APIError(.notFound, "slot '\(slot)' has no revision \(revision)") }
      return fileResponse(metadata, file)
    }
    v1.delete("slots/:slot/revisions/:revision") { _, context in
      let slot = try slotName(context)
      guard let text = context.parameters.get("revision"), let revision = Int64(text), revision > 0 else {
        throw APIError(.badRequest, "a revision is a positive whole number")
      }
      switch try await backend.discard(player: context.player!, slot: slot, revision: revision) {
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
      guard let precondition = try parsePrecondition(request), case .head(let expected) = precondition else {
        throw APIError(.preconditionRequired, "a delete needs If-Match: \"N\", the slot's head revision")
      }
      switch try await backend.delete(player: context.player!, slot: slot, head: expected) {
      case .deleted: return Response(status: .noContent)
      case .notFound: throw APIError(.notFound, "no slot '\(slot)'")
      case .stale(let head):
        throw APIError(
          .preconditionFailed, "the slot's head is revision \(head.revision), not \(expected)", head: head)
      }
    }
    return router
  }

  // MARK: Upload

  private func put(_ request: Request, _ context: ServerContext) async throws -> Response {
    let slot = try slotName(context)
    guard let precondition = try parsePrecondition(request) else {
      throw APIError(
        .preconditionRequired, "an upload needs If-None-Match: * (to create the slot) or If-Match: \"N\" (its head)")
    }
    // The body is checked as a save whatever its Content-Type says (curl's default included).
    let limit = options.limits.bodyBytes
    if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
      throw APIError(.contentTooLarge, "the upload is \(length) bytes; the limit is \(limit)")
    }
    let loser = try parseLoser(request)
    let parent = try parseParent(request, precondition: precondition)
    let body = try await collect(request.body, limit: limit)
    let bytes = [UInt8](buffer: body)
    // The Stasis reader checks every checksum and decodes every section's tree before anything
    // is stored; the metadata comes from the document it read, in the same pass.
    let document: SaveDocument
    do {
      document = try SaveFileFormat.decode(bytes)
    } catch {
      throw APIError(.badRequest, error.description)
    }
    let summary = document.summary
    let device = summary.device.isEmpty ? (request.headers[deviceHeader] ?? "") : summary.device
    let summaryJSON = JSON(summary.details).text
    let baseRevision: Int64? = if case .head(let base) = precondition { base } else { nil }
    var metadata = RevisionMetadata(
      slot: slot, revision: 0, baseRevision: baseRevision, bytes: Int64(bytes.count),
      sha256: hexEncoded(SHA256.hash(data: bytes)), uploadedAt: clock(),
      device: String(device.prefix(255)), game: document.game.name, build: document.game.build,
      schema: Int64(document.game.schemaVersion), createdAt: document.createdAt, playTime: summary.playTime,
      progress: summary.progress, summaryJSON: summaryJSON)
    if let parent { metadata.parent = parent }
    let outcome = try await backend.put(
      player: context.player!, precondition: precondition, loser: loser, metadata: metadata, file: bytes,
      keep: options.keepRevisions, limits: options.limits)
    switch outcome {
    case .created(let stored):
      Counter(label: "stasis_uploads_total").increment()
      var response = jsonResponse(
        [
          "slot": .string(stored.slot), "revision": .int(stored.revision),
          "baseRevision": stored.baseRevision.map(JSON.int) ?? .null, "parent": stored.parent.map(JSON.int) ?? .null,
          "bytes": .int(stored.bytes),
          "sha256": .string(stored.sha256),
        ], status: .created)
      response.headers[.eTag] = etag(stored.revision)
      response.headers[.location] = "/v1/slots/\(stored.slot)/revisions/\(stored.revision)"
      return response
    case .stale(let head):
      Counter(label: "stasis_conflicts_total").increment()
      guard let head else { throw APIError(.notFound, "no slot '\(slot)': create it with If-None-Match: *") }
      let message =
        if case .head(let base) = precondition {
          "the slot's head is revision \(head.revision), not \(base): another device saved first; fetch it and merge"
        } else {
          "the slot exists (head revision \(head.revision)): upload with If-Match: \"\(head.revision)\""
        }
      throw APIError(.preconditionFailed, message, head: head)
    case .overLimit(let message):
      throw APIError(.contentTooLarge, message)
    case .tooManySlots(let message):
      throw APIError(.forbidden, message)
    case .unknownLoser(let revision):
      throw APIError(
        .badRequest, "X-Stasis-Conflict-Loser names revision \(revision), which slot '\(slot)' does not have")
    }
  }

  /// The body, refusing it once it passes `limit` bytes. The request deadline
  /// (``RequestDeadlineHandler``) bounds how long it may take: when it passes, the stream fails
  /// and the deadline's `408` is the answer.
  private func collect(_ body: RequestBody, limit: Int) async throws -> ByteBuffer {
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

  private func fileResponse(_ metadata: RevisionMetadata, _ file: [UInt8]) -> Response {
    Response(
      status: .ok,
      headers: [
        .eTag: etag(metadata.revision), .contentType: "application/vnd.stasis",
        HTTPField.Name("X-Stasis-Revision")!: "\(metadata.revision)",
      ], body: .init(byteBuffer: ByteBuffer(bytes: file)))
  }
}

/// `X-Stasis-Device`: the uploading device's name, for saves whose header names none.
let deviceHeader = HTTPField.Name("X-Stasis-Device")!

/// `X-Stasis-Conflict-Loser: "N"`: the upload resolves a conflict that revision N of the slot
/// lost; N is kept out of pruning until it is discarded.
let conflictLoserHeader = HTTPField.Name("X-Stasis-Conflict-Loser")!

/// The revision `X-Stasis-Conflict-Loser` names (quoted, as in `If-Match`); nil without one.
private func parseLoser(_ request: Request) throws -> Int64? {
  guard let value = request.headers[conflictLoserHeader] else { return nil }
  let text = value.trimmingCharacters(in: .whitespaces)
  guard text.count >= 3, text.first == "\"", text.last == "\"", let revision = Int64(text.dropFirst().dropLast()),
    revision > 0
  else {
    throw APIError(.badRequest, "X-Stasis-Conflict-Loser must be one revision in quotes, such as \"3\"")
  }
  return revision
}

/// `X-Stasis-Parent: "N"` or `X-Stasis-Parent: none`: the revision whose state the upload
/// continues, or none (a history begun on its own). Without it, the upload continues the head
/// it names in `If-Match` (what every client before it meant). A parent is at most that head,
/// since nothing newer existed when the upload was written; a creation has none.
let parentHeader = HTTPField.Name("X-Stasis-Parent")!

/// The parent `X-Stasis-Parent` names (`.some(nil)`: none); nil without the header.
private func parseParent(_ request: Request, precondition: WritePrecondition) throws -> Int64?? {
  guard let value = request.headers[parentHeader] else { return nil }
  let text = value.trimmingCharacters(in: .whitespaces)
  if text == "none" { return .some(nil) }
  guard text.count >= 3, text.first == "\"", text.last == "\"", let revision = Int64(text.dropFirst().dropLast()),
    revision > 0
  else {
    throw APIError(.badRequest, "X-Stasis-Parent must be one revision in quotes, such as \"3\", or none")
  }
  switch precondition {
  case .create:
    throw APIError(
      .badRequest, "X-Stasis-Parent names revision \(revision), but a creation (If-None-Match: *) has none")
  case .head(let head) where revision > head:
    throw APIError(
      .badRequest, "X-Stasis-Parent names revision \(revision), newer than the head the upload was written on (\(head))"
    )
  case .head:
    return revision
  }
}

private func slotName(_ context: ServerContext) throws -> String {
  let raw = context.parameters.get("slot") ?? ""
  let name = raw.removingPercentEncoding ?? raw
  do {
    return try SaveSlot(name).name
  } catch {
    throw APIError(.badRequest, error.description)
  }
}

private func etag(_ revision: Int64) -> String { "\"\(revision)\"" }

/// The revisions named by an `If-None-Match` list such as `"3", "4"`.
private func etags(_ value: String) -> [Int64] {
  value.split(separator: ",").compactMap { tag in
    let trimmed = tag.trimmingCharacters(in: .whitespaces)
    let stripped = trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : Substring(trimmed)
    return revisionTag(stripped)
  }
}

/// The revision of an entity tag that is exactly `"N"`: 1-18 digits, no sign, no leading zero
/// (openapi.yaml's pattern `^"[1-9][0-9]{0,17}"$`).
func revisionTag(_ tag: Substring) -> Int64? {
  let bytes = Array(tag.utf8)
  guard bytes.count >= 3, bytes.count <= 20, bytes.first == UInt8(ascii: "\""), bytes.last == UInt8(ascii: "\"")
  else { return nil }
  let digits = bytes.dropFirst().dropLast()
  guard digits.first != UInt8(ascii: "0"), digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
  else { return nil }
  return Int64(String(decoding: digits, as: UTF8.self))
}

/// `If-None-Match: *` or `If-Match: "N"`; nil when neither is given.
private func parsePrecondition(_ request: Request) throws -> WritePrecondition? {
  let match = request.headers[.ifMatch]
  let noneMatch = request.headers[.ifNoneMatch]
  switch (match, noneMatch) {
  case (nil, nil): return nil
  case (nil, "*"?): return .create
  case (nil, _?): throw APIError(.badRequest, "If-None-Match on an upload must be *")
  case (let value?, nil):
    guard let revision = revisionTag(Substring(value.trimmingCharacters(in: .whitespaces))) else {
      throw APIError(.badRequest, "If-Match must be one revision in quotes, such as \"3\"")
    }
    return .head(revision)
  case (_?, _?): throw APIError(.badRequest, "give If-Match or If-None-Match, not both")
  }
}

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
