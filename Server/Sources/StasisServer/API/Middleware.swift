import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Refuses requests whose header fields pass 16 KB with a JSON `431`, before anything else
/// reads them (the HTTP parser itself stops at 1 MB).
struct HeaderSizeMiddleware: RouterMiddleware {
  typealias Context = ServerContext
  static let limit = 16 * 1024

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    let size = request.headers.reduce(0) { $0 + $1.name.rawName.utf8.count + $1.value.utf8.count + 4 }
    guard size <= Self.limit else {
      throw APIError(.requestHeaderFieldsTooLarge, "the headers are \(size) bytes; the limit is \(Self.limit)")
    }
    return try await next(request, context)
  }
}

/// Every error as the API's JSON: the router's own `404` for an unknown route (a `400` when it
/// is a `/v1/slots/…` path whose slot is not one name), Hummingbird's `HTTPError`s, and anything
/// unexpected as a `500` (logged, its text not sent).
struct JSONErrorMiddleware: RouterMiddleware {
  typealias Context = ServerContext

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    do {
      return try await next(request, context)
    } catch let error as APIError {
      throw error
    } catch let error as HTTPError {
      if error.status == .notFound || error.status == .methodNotAllowed,
        let slot = Self.badSlotPath(request.uri.path)
      {
        throw APIError(.badRequest, "'\(slot)' is not a slot name: one name of 1-64 letters, digits, '-', '_' or '.'")
      }
      if error.status == .notFound {
        throw APIError(.notFound, "no route \(request.method) \(request.uri.path)")
      }
      var converted = APIError(error.status, error.body ?? error.status.reasonPhrase)
      converted.headers = error.headers.filter { $0.name != .contentType && $0.name != .contentLength }
      throw converted
    } catch let error as any HTTPResponseError {
      // Another library's error with its own status: its status, our JSON.
      throw APIError(error.status, error.status.reasonPhrase)
    } catch  where DatabaseUnavailable.matches(error) {
      // Nothing was acknowledged (a COMMIT whose answer was lost may have happened: an upload's
      // retry learns it): the client tries again (a failover takes seconds).
      context.logger.warning("\(request.method) \(request.uri.path): the database is unavailable: \(error)")
      var unavailable = APIError(
        .serviceUnavailable,
        "the database is unavailable (it may be failing over): try again; an upload sent again is answered "
          + "with its revision if it was stored")
      unavailable.headers[.retryAfter] = String(DatabaseUnavailable.retryAfter)
      throw unavailable
    } catch {
      context.logger.error("\(request.method) \(request.uri.path): \(error)")
      throw APIError(.internalServerError, "the server failed to answer this request; it was logged")
    }
  }

  /// The slot part of a `/v1/slots/…` path that no route took (`a/b`, or empty for
  /// `/v1/slots/`), except the paths of real routes with a wrong method.
  static func badSlotPath(_ path: String) -> String? {
    let prefix = "/v1/slots/"
    guard path.hasPrefix(prefix) else { return nil }
    let rest = String(path.dropFirst(prefix.count))
    let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
    if parts.count == 1, !rest.isEmpty { return nil }
    if parts.count >= 2, parts[1] == "revisions", parts.count <= 3, !parts[0].isEmpty { return nil }
    return rest.removingPercentEncoding ?? rest
  }
}

/// One log line per request, when it is answered: method, path, status and time taken (never
/// the token; the player is not known yet at this layer, which runs before authentication).
struct RequestLogMiddleware: RouterMiddleware {
  typealias Context = ServerContext

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    let start = ContinuousClock.now
    func log(_ status: HTTPResponse.Status) {
      let ms = (ContinuousClock.now - start) / .milliseconds(1)
      context.logger.info("\(request.method) \(request.uri.path) \(status.code) \(String(format: "%.1f", ms)) ms")
    }
    do {
      let response = try await next(request, context)
      log(response.status)
      return response
    } catch let error as HTTPResponseError {
      log(error.status)
      throw error
    } catch {
      log(.internalServerError)
      throw error
    }
  }
}

/// Tells every client what this server speaks, on every `/v1` answer, errors included:
/// `X-Stasis-Features: delta, resumable` (a client sends deltas and resumable uploads only to
/// a server that says so, and whole files to an older one) and `Upload-Limit` (the
/// resumable-uploads draft's: the largest file an upload may become, and the largest part).
struct FeaturesMiddleware: RouterMiddleware {
  typealias Context = ServerContext
  static let featuresHeader = HTTPField.Name("X-Stasis-Features")!
  static let uploadLimitHeader = HTTPField.Name("Upload-Limit")!
  let limits: HTTPFields

  init(bodyBytes: Int) {
    limits = [
      Self.featuresHeader: "delta, resumable",
      Self.uploadLimitHeader: "max-size=\(bodyBytes), max-append-size=\(UploadsController.largestPart)",
    ]
  }

  func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
    -> Response
  {
    do {
      var response = try await next(request, context)
      for field in limits { response.headers[field.name] = field.value }
      return response
    } catch var error as APIError {
      for field in limits { error.headers[field.name] = field.value }
      throw error
    }
  }
}
