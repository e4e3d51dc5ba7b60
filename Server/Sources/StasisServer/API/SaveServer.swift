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

/// The server's HTTP face over a backend: `/health`, `/metrics`, and the controllers, each over
/// the repositories it uses (``SlotsController``, ``UploadsController``, ``SettingsController``,
/// ``BundlesController``, ``ReplaysController``, ``AdminController``, and the console).
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
    SlotsController(revisions: backend).addRoutes(to: v1)
    UploadsController(storage: backend, options: options, clock: clock).addRoutes(to: v1)
    SettingsController(settings: backend, limits: options.limits).addRoutes(to: v1)
    BundlesController(bundles: backend, limits: options.limits, clock: clock).addRoutes(to: v1)
    ReplaysController(replays: backend, limits: options.limits, clock: clock).addRoutes(to: v1)
    AdminController(studio: studio).addRoutes(to: router)
    do {
      try Console(studio: studio, secureCookies: options.secureCookies).addRoutes(to: router)
    } catch {
      // The templates are compiled into the server; ConsoleTests renders every one.
      preconditionFailure("the console's templates do not parse: \(error)")
    }
    return router
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

/// The body, refusing it once it passes `limit` bytes. The request deadline
/// (``RequestDeadlineHandler``) bounds how long it may take: when it passes, the stream fails
/// and the deadline's `408` is the answer.
func collectBody(_ body: RequestBody, limit: Int) async throws -> ByteBuffer {
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
