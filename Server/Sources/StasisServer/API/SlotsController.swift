import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Stasis
import StasisDelta

/// `/v1/slots/…` that read, discard and delete: the player's slots, a slot's head and its
/// revisions (whole, or as a delta against one the client holds), over the revisions alone.
struct SlotsController: Sendable {
  /// Where slots and their revisions are kept.
  let revisions: any RevisionRepository

  func addRoutes(to v1: RouterGroup<ServerContext>) {
    v1.get("slots") { _, context in
      let slots = try await revisions.slots(player: context.requirePlayer())
      return jsonResponse(["slots": .array(slots.map(\.json))], status: .ok)
    }
    v1.get("slots/:slot") { request, context in
      let slot = try slotName(context)
      // A client that has a revision asks with If-None-Match: the head's metadata answers it
      // without reading the file's bytes.
      if let match = request.headers[.ifNoneMatch] {
        guard let head = try await revisions.head(player: context.requirePlayer(), slot: slot) else {
          throw APIError(.notFound, "no slot '\(slot)'")
        }
        if match == "*" || etags(match).contains(head.revision) {
          return Response(status: .notModified, headers: [.eTag: etag(head.revision)])
        }
      }
      guard let (metadata, file) = try await revisions.file(player: context.requirePlayer(), slot: slot, revision: nil)
      else {
        throw APIError(.notFound, "no slot '\(slot)'")
      }
      return try await fileResponse(metadata, file, request: request, player: context.requirePlayer())
    }
    v1.get("slots/:slot/revisions") { _, context in
      let slot = try slotName(context)
      guard let list = try await revisions.revisions(player: context.requirePlayer(), slot: slot) else {
        throw APIError(.notFound, "no slot '\(slot)'")
      }
      let stored = try await revisions.storedBytes(player: context.requirePlayer(), slot: slot)
      return jsonResponse(["revisions": .array(list.map(\.json)), "storedBytes": .int(stored)], status: .ok)
    }
    v1.get("slots/:slot/revisions/:revision") { request, context in
      let slot = try slotName(context)
      let revision = try revisionNumber(context)
      guard
        let (metadata, file) = try await revisions.file(player: context.requirePlayer(), slot: slot, revision: revision)
      else { throw APIError(.notFound, "slot '\(slot)' has no revision \(revision)") }
      if let match = request.headers[.ifNoneMatch], match == "*" || etags(match).contains(revision) {
        return Response(status: .notModified, headers: [.eTag: etag(revision)])
      }
      return try await fileResponse(metadata, file, request: request, player: context.requirePlayer())
    }
    v1.delete("slots/:slot/revisions/:revision") { _, context in
      let slot = try slotName(context)
      let revision = try revisionNumber(context)
      switch try await revisions.discard(player: context.requirePlayer(), slot: slot, revision: revision) {
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
      switch try await revisions.delete(player: context.requirePlayer(), slot: slot, head: expected) {
      case .deleted: return Response(status: .noContent)
      case .notFound: throw APIError(.notFound, "no slot '\(slot)'")
      case .stale(let head):
        throw APIError(
          .preconditionFailed, "the slot's head is revision \(head.revision), not \(expected)", head: head)
      }
    }
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
        guard let (_, held) = try await revisions.file(player: player, slot: metadata.slot, revision: base) else {
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
