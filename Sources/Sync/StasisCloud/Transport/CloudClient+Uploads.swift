import Crypto
import Foundation
import Stasis
import StasisDelta

/// The instance manipulation of a Stasis delta in `A-IM` and `IM` (RFC 3229).
let deltaIM = "vnd.stasis.delta"

extension CloudClient {
  /// What went over the wire through this client (and its copies) so far.
  public var transferred: TransferCounts { session.counts }

  /// An upload to a server that takes deltas and resumable uploads: the delta from `held` when
  /// it is smaller, in one request or in parts. A delta whose base the server no longer keeps
  /// (`409`) goes again whole.
  func sendUpload(slot: SaveSlot, bytes: [UInt8], headers: [(String, String)], held: HeldRevision?)
    async throws(CloudError) -> Reply
  {
    var payload = bytes
    var described = headers
    if let held {
      let delta = SaveDelta.make(from: held.bytes, to: bytes)
      if delta.count < bytes.count {
        payload = delta
        described += [("Content-Type", SaveDelta.mediaType), ("X-Stasis-Delta-Base", "\"\(held.revision)\"")]
      }
    }
    let isDelta = payload.count != bytes.count || described.count != headers.count
    if !isDelta { described.append(("Content-Type", "application/vnd.stasis")) }
    // The server checks the file it rebuilds against the SHA-256 of the file this device saved.
    described.append(("Repr-Digest", "sha-256=:\(Data(SHA256.hash(data: bytes)).base64EncodedString()):"))
    session.uploaded(file: bytes.count)
    let reply = try await sendInParts(slot: slot, payload: payload, headers: described)
    if reply.status == 409, isDelta, reply.header("Upload-Offset") == nil {
      return try await sendUpload(slot: slot, bytes: bytes, headers: headers, held: nil)
    }
    return reply
  }

  /// `POST /v1/slots/{slot}/uploads`, whole when it fits in one part; else created, then sent
  /// part by part with `PATCH`. A part cut on its way (the server unreachable) is asked about
  /// with `HEAD` and the upload resumes where the server's bytes end: in this call, or, when the
  /// server stays away, in the next upload of the same bytes.
  private func sendInParts(slot: SaveSlot, payload: [UInt8], headers: [(String, String)]) async throws(CloudError)
    -> Reply
  {
    let uploads = path(slot) + "/uploads"
    let partSize = transfer.partSize
    if payload.count <= partSize {
      session.sent(payload.count)
      return try await send(
        "POST", uploads, headers: headers + [("Upload-Complete", "?1"), ("Upload-Length", "\(payload.count)")],
        body: payload)
    }
    let key = headers.map { "\($0.0): \($0.1)" }.joined(separator: "\n") + "\n" + sha256Hex(payload)
    var location = session.resumable(slot: slot.name, key: key)
    var offset = 0
    if let known = location {
      let asked = try await send("HEAD", known)
      if asked.status == 204, let at = asked.header("Upload-Offset").flatMap(Int.init), at <= payload.count {
        offset = at
      } else {
        location = nil
      }
    }
    var startedOver = false
    var resumed = 0
    while true {
      if location == nil {
        let created = try await send(
          "POST", uploads, headers: headers + [("Upload-Complete", "?0"), ("Upload-Length", "\(payload.count)")])
        guard created.status == 201, let made = created.header("Location") else { return created }
        location = made
        offset = 0
        session.remember(slot: slot.name, key: key, location: made)
      }
      let end = min(offset + partSize, payload.count)
      let last = end == payload.count
      let reply: Reply
      do {
        session.sent(end - offset)
        reply = try await send(
          "PATCH", location!,
          headers: [
            ("Upload-Offset", "\(offset)"), ("Upload-Complete", last ? "?1" : "?0"),
            ("Content-Type", "application/partial-upload"),
          ], body: Array(payload[offset..<end]))
      } catch  where error.kind == .offline || error.kind == .server {
        // Cut on its way: where do the server's bytes end? (The sync's backoff takes over when
        // the server does not answer this either; the upload is remembered.)
        resumed += 1
        guard resumed <= 3 else { throw error }
        let asked = try await send("HEAD", location!)
        if asked.status == 204, let at = asked.header("Upload-Offset").flatMap(Int.init), at <= payload.count {
          offset = at
          continue
        }
        // Gone: completed by the cut part itself (its answer lost) or expired. Once more from
        // the start; a completed one answers 412 with this device's own revision as the head.
        guard !startedOver else { throw error }
        startedOver = true
        location = nil
        continue
      }
      switch reply.status {
      case 204 where !last:
        offset = reply.header("Upload-Offset").flatMap(Int.init) ?? end
      case 409 where reply.header("Upload-Offset") != nil:
        offset = reply.header("Upload-Offset").flatMap(Int.init) ?? offset
      case 404 where !startedOver:
        startedOver = true
        location = nil
      default:
        session.forget(slot: slot.name)
        return reply
      }
    }
  }
}
