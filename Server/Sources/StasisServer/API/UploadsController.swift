import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Metrics
import NIOCore
@_spi(Plumbing) import Stasis
import StasisDelta

/// Uploads: `PUT /v1/slots/{slot}` with the whole file, and the resumable routes
/// (`UploadsController+Resumable.swift`), over the revisions and the uploads in progress.
struct UploadsController: Sendable {
  /// Where revisions and uploads in progress are kept.
  let storage: any RevisionRepository & UploadRepository
  /// The server's limits and how many revisions a slot keeps.
  let options: ServerOptions
  /// Milliseconds since the Unix epoch.
  let clock: @Sendable () -> Int64

  func addRoutes(to v1: RouterGroup<ServerContext>) {
    v1.put("slots/:slot") { request, context in try await put(request, context) }
    addResumableRoutes(to: v1)
  }

  private func put(_ request: Request, _ context: ServerContext) async throws -> Response {
    let slot = try slotName(context)
    // Every header checked once, before the body is read, so a client learns at once what is wrong.
    let upload = try UploadRequest(UploadHeaders(request))
    // The body is checked as a save whatever its Content-Type says (curl's default included).
    let limit = options.limits.bodyBytes
    if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
      throw APIError(.contentTooLarge, "the upload is \(length) bytes; the limit is \(limit)")
    }
    let body = try await collectBody(request.body, limit: limit)
    return try await receive(upload, body: [UInt8](buffer: body), slot: slot, player: context.requirePlayer())
  }

  /// Stores an upload's file, whole or rebuilt from a delta: every checksum (and the
  /// signature's place) checked by the Stasis reader, the `Repr-Digest` when one is given, then
  /// the conditional write. `pinned` is the piece a resumable upload's delta was pinned to.
  func receive(
    _ upload: UploadRequest, body: [UInt8], slot: String, player: Player, pinned: Int64? = nil
  ) async throws -> Response {
    let precondition = upload.precondition
    let (loser, parent, digest) = (upload.loser, upload.parent, upload.digest)
    let limit = options.limits.bodyBytes
    var bytes = body
    var stored: StoredDelta?
    if let deltaBase = upload.deltaBase {
      let base: (piece: Int64?, bytes: [UInt8])?
      if let pinned, let file = try await storage.pieceFile(player: player, slot: slot, piece: pinned) {
        base = (pinned, file)
      } else {
        base = try await storage.file(player: player, slot: slot, revision: deltaBase).map { ($0.0.piece, $0.1) }
      }
      guard let base else {
        throw APIError(
          .conflict,
          "the delta is made against revision \(deltaBase) of slot '\(slot)', which the server no longer keeps: "
            + "send the whole file")
      }
      do {
        // The limit applies to what the save becomes, not to the delta's few bytes.
        bytes = try SaveDelta.apply(body, to: base.bytes, limit: limit, path: "the upload's delta")
      } catch {
        switch error.kind {
        case .limitExceeded: throw APIError(.contentTooLarge, error.description)
        case .wrongBase:
          // The device's copy of the base is not the server's (a tool edited the local file):
          // like a base the server no longer keeps, the answer is "send the whole file", and the
          // client does. A 400 here made the client drop a good save as refused (stasis-sim).
          throw APIError(
            .conflict,
            "the delta is made against other bytes than revision \(deltaBase) of slot '\(slot)': \(error.description); "
              + "send the whole file")
        default: throw APIError(.badRequest, error.description)
        }
      }
      if let piece = base.piece { stored = StoredDelta(basePiece: piece, bytes: body) }
      Counter(label: "stasis_delta_uploads_total").increment()
    }
    let sha256 = hexEncoded(SHA256.hash(data: bytes))
    if let digest, digest != sha256 {
      throw APIError(.badRequest, "the file's SHA-256 is \(sha256); Repr-Digest says \(digest)")
    }
    // The Stasis reader checks the header, every section's checksum and the trailer before
    // anything is stored; the metadata is the header's. The sections' trees are not decoded:
    // their checksums say they are the bytes the game wrote, and decoding them here only to
    // learn the header's metadata was repeated work (issue 46; measured, it moved the server's
    // CPU per write little: PERFORMANCE.md). A game decodes what it downloads, and refuses a
    // file it cannot read.
    let verification = bytes.withUnsafeBytes { SaveFileFormat.verify($0) }
    if let error = verification.error { throw APIError(.badRequest, error.description) }
    guard let document = verification.header else {
      throw APIError(.badRequest, "the upload is not a Stasis save file")
    }
    let summary = document.summary
    let device = summary.device.isEmpty ? (upload.device ?? "") : summary.device
    let baseRevision = precondition.expected
    var metadata = RevisionMetadata(
      slot: slot, revision: 0, baseRevision: baseRevision, bytes: Int64(bytes.count), sha256: sha256,
      uploadedAt: clock(), device: String(device.prefix(255)), game: document.game.name,
      build: document.game.build, schema: Int64(document.game.schemaVersion), createdAt: document.createdAt,
      playTime: summary.playTime, progress: summary.progress, summaryJSON: JSON(summary.details).text)
    if let parent { metadata.parent = parent }
    if stored == nil, bytes.count >= storage.smallestDelta, let baseRevision,
      let (head, file) = try await storage.file(player: player, slot: slot, revision: baseRevision),
      let piece = head.piece
    {
      // A whole file of 64 KiB or more on a stored head: kept as its delta on the head, which it
      // most resembles (storage follows change: DeltaTests). It costs a rebuild of the head and
      // a diff, in this server's CPU; StasisCloud sends deltas, stored as they came, and files
      // under 64 KiB are stored whole (PERFORMANCE.md, "More than one machine", measures it).
      stored = StoredDelta(basePiece: piece, bytes: SaveDelta.make(from: file, to: bytes))
    }
    let outcome = try await storage.put(
      player: player, precondition: precondition, loser: loser, metadata: metadata, file: bytes, delta: stored,
      keep: options.keepRevisions, limits: options.limits)
    switch outcome {
    case .created(let stored):
      Counter(label: "stasis_uploads_total").increment()
      return created(stored)
    case .stale(let head?) where head.sha256 == sha256 && head.baseRevision == baseRevision:
      // The same bytes on the same base are the head already: this is a retry of an upload
      // that was stored though its answer was lost (the connection died during `COMMIT`, a
      // failover, a 503 after the deadline). Answered with the revision stored, never a second.
      Counter(label: "stasis_upload_retries_answered_total").increment()
      return created(head)
    case .stale(let head):
      throw staleError(head: head, precondition: precondition, slot: slot)
    case .overLimit(let message):
      throw APIError(.contentTooLarge, message)
    case .tooManySlots(let message):
      throw APIError(.forbidden, message)
    case .unknownLoser(let revision):
      throw APIError(
        .badRequest, "X-Stasis-Conflict-Loser names revision \(revision), which slot '\(slot)' does not have")
    }
  }

  /// The `201` of a stored revision.
  private func created(_ stored: RevisionMetadata) -> Response {
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
  }

  /// The `412` (or `404`) of an upload whose precondition does not hold.
  func staleError(head: RevisionMetadata?, precondition: WritePrecondition, slot: String) -> APIError {
    Counter(label: "stasis_conflicts_total").increment()
    guard let head else { return APIError(.notFound, "no slot '\(slot)': create it with If-None-Match: *") }
    let message =
      if case .head(let base) = precondition {
        "the slot's head is revision \(head.revision), not \(base): another device saved first; fetch it and merge"
      } else {
        "the slot exists (head revision \(head.revision)): upload with If-Match: \"\(head.revision)\""
      }
    return APIError(.preconditionFailed, message, head: head)
  }
}

/// An upload's headers, parsed once and checked before its body is read: what `PUT`, a
/// resumable upload's creation and its last part act on.
struct UploadRequest: Sendable {
  /// `If-None-Match: *` or `If-Match: "N"`.
  var precondition: WritePrecondition
  /// `X-Stasis-Conflict-Loser`.
  var loser: Int64?
  /// `X-Stasis-Parent` (`.some(nil)`: none).
  var parent: Int64??
  /// `Repr-Digest`'s SHA-256, lowercase hex.
  var digest: String?
  /// `X-Stasis-Delta-Base`: the body is a delta on this revision.
  var deltaBase: Int64?
  /// `X-Stasis-Device`.
  var device: String?

  /// Parses and checks every header an upload acts on; `428` without a precondition.
  init(_ headers: UploadHeaders) throws {
    guard let precondition = try parsePrecondition(headers) else {
      throw APIError(
        .preconditionRequired, "an upload needs If-None-Match: * (to create the slot) or If-Match: \"N\" (its head)")
    }
    self.precondition = precondition
    loser = try parseLoser(headers)
    parent = try parseParent(headers, precondition: precondition)
    digest = try parseDigest(headers)
    deltaBase = try parseDeltaBase(headers)
    device = headers[deviceHeader]
  }
}

/// The headers an upload acts on, apart from its request: a resumable upload acts on its
/// creating request's headers when its last part arrives.
struct UploadHeaders: Sendable {
  static let names: [HTTPField.Name] = [
    .ifMatch, .ifNoneMatch, parentHeader, conflictLoserHeader, deviceHeader, .contentType, deltaBaseHeader,
    reprDigestHeader,
  ]
  /// By lowercased name.
  private(set) var values: [String: String] = [:]

  init(_ request: Request) {
    for name in Self.names { if let value = request.headers[name] { values[name.canonicalName] = value } }
  }

  /// The headers kept as JSON text (``json``).
  init?(json: String) {
    guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String] else {
      return nil
    }
    values = object
  }

  /// As JSON text, for the backend to keep with the upload.
  var json: String { JSON.object(values.mapValues(JSON.string)).text }

  subscript(_ name: HTTPField.Name) -> String? { values[name.canonicalName] }
}

/// `X-Stasis-Delta-Base: "N"`: the body is a delta (`application/vnd.stasis.delta`) that
/// rebuilds the file from revision N of the slot.
let deltaBaseHeader = HTTPField.Name("X-Stasis-Delta-Base")!

/// `Repr-Digest: sha-256=:BASE64:` (RFC 9530): the SHA-256 of the file the upload stores; when
/// given, the rebuilt file must have it.
let reprDigestHeader = HTTPField.Name("Repr-Digest")!

/// The revision a delta upload is made against; nil for a whole file.
func parseDeltaBase(_ request: UploadHeaders) throws -> Int64? {
  let isDelta = request[.contentType]?.lowercased().hasPrefix(SaveDelta.mediaType) ?? false
  guard let value = request[deltaBaseHeader] else {
    if isDelta { throw APIError(.badRequest, "a delta (\(SaveDelta.mediaType)) needs X-Stasis-Delta-Base: \"N\"") }
    return nil
  }
  guard isDelta else {
    throw APIError(.badRequest, "X-Stasis-Delta-Base goes with Content-Type: \(SaveDelta.mediaType)")
  }
  guard let revision = revisionTag(Substring(value.trimmingCharacters(in: .whitespaces))) else {
    throw APIError(.badRequest, "X-Stasis-Delta-Base must be one revision in quotes, such as \"3\"")
  }
  return revision
}

/// The SHA-256 (lowercase hex) `Repr-Digest` gives; nil without one. Other algorithms are ignored.
func parseDigest(_ request: UploadHeaders) throws -> String? {
  guard let value = request[reprDigestHeader] else { return nil }
  for member in value.split(separator: ",") {
    let parts = member.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
    guard parts.count == 2, parts[0].lowercased() == "sha-256" else { continue }
    let encoded = parts[1]
    guard encoded.count >= 2, encoded.first == ":", encoded.last == ":",
      let digest = Data(base64Encoded: String(encoded.dropFirst().dropLast())), digest.count == 32
    else {
      throw APIError(.badRequest, "Repr-Digest's sha-256 must be 32 bytes in base64 between colons")
    }
    return hexEncoded(digest)
  }
  return nil
}

/// `X-Stasis-Device`: the uploading device's name, for saves whose header names none.
let deviceHeader = HTTPField.Name("X-Stasis-Device")!

/// `X-Stasis-Conflict-Loser: "N"`: the upload resolves a conflict that revision N of the slot
/// lost; N is kept out of pruning until it is discarded.
let conflictLoserHeader = HTTPField.Name("X-Stasis-Conflict-Loser")!

/// The revision `X-Stasis-Conflict-Loser` names (quoted, as in `If-Match`); nil without one.
func parseLoser(_ request: UploadHeaders) throws -> Int64? {
  guard let value = request[conflictLoserHeader] else { return nil }
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
func parseParent(_ request: UploadHeaders, precondition: WritePrecondition) throws -> Int64?? {
  guard let value = request[parentHeader] else { return nil }
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

/// The route's `:revision`, a positive whole number (`400` otherwise).
func revisionNumber(_ context: ServerContext) throws -> Int64 {
  guard let text = context.parameters.get("revision"), let revision = Int64(text), revision > 0 else {
    throw APIError(.badRequest, "a revision is a positive whole number")
  }
  return revision
}

/// The route's `:slot` (or another `parameter` named as a slot is, such as a replay's), a
/// valid slot name (`400` otherwise).
func slotName(_ context: ServerContext, parameter: String = "slot") throws -> String {
  let raw = context.parameters.get(parameter) ?? ""
  let name = raw.removingPercentEncoding ?? raw
  do {
    return try SaveSlot(name).name
  } catch {
    throw APIError(.badRequest, error.description)
  }
}

func etag(_ revision: Int64) -> String { "\"\(revision)\"" }

/// The revisions named by an `If-None-Match` list such as `"3", "4"`.
func etags(_ value: String) -> [Int64] {
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
func parsePrecondition(_ request: UploadHeaders) throws -> WritePrecondition? {
  let match = request[.ifMatch]
  let noneMatch = request[.ifNoneMatch]
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
