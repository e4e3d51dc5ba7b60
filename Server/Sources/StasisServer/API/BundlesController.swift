import Foundation
import HTTPTypes
import Hummingbird
import Metrics
import NIOCore
import Stasis
import StasisReplay

/// Desync bundles (issue 45): `POST /v1/bundles` takes a bundle a player's device made at a
/// replay's first divergence (``DesyncBundle``), read with `StasisReplay`'s own reader, and
/// keeps it for the studio's console; `GET /v1/bundles` lists the player's. A bundle sent again
/// (the same bytes: a retry whose answer was lost) is the one stored before: `200`, not a second
/// `201`.
struct BundlesController: Sendable {
  /// Where bundles are kept.
  let bundles: any BundleRepository
  /// The largest bundle and how many a player keeps.
  let limits: PlayerLimits
  /// Milliseconds since the Unix epoch.
  let clock: @Sendable () -> Int64

  func addRoutes(to v1: RouterGroup<ServerContext>) {
    v1.get("bundles") { _, context in
      let stored = try await bundles.bundles(player: context.requirePlayer())
      return jsonResponse(["bundles": .array(stored.map { .object(Self.fields($0)) })], status: .ok)
    }
    v1.post("bundles") { request, context in
      let player = try context.requirePlayer()
      let limit = limits.bundleBytes
      if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
        throw APIError(.contentTooLarge, "the bundle is \(length) bytes; the limit is \(limit)")
      }
      let bytes = [UInt8](buffer: try await collectBody(request.body, limit: limit))
      let bundle: DesyncBundle
      do throws(SaveFileError) {
        bundle = try DesyncBundle(bytes: bytes)
      } catch {
        throw APIError(.badRequest, "not a desync bundle: \(error.description)")
      }
      // Names a database keeps as text: no NUL (PostgreSQL refuses one), and short.
      for (what, name) in [("game", bundle.game.name), ("build", bundle.game.build)]
      where name.contains("\0") || name.utf8.count > Self.longestName {
        throw APIError(.badRequest, "the bundle's \(what) name is not 0-\(Self.longestName) bytes without NUL")
      }
      let report = bundle.report
      let draft = BundleDraft(
        createdAt: clock(), game: bundle.game.name, build: bundle.game.build, tick: report.tick,
        summary: report.summary, bytes: bytes)
      let (stored, created) = try await bundles.addBundle(player: player, draft, keep: limits.bundlesKept)
      if created { Counter(label: "stasis_bundles_stored_total").increment() }
      context.logger.info(
        "desync bundle \(created ? "stored" : "sent again")",
        metadata: [
          "player": .string(player.name), "bundle": .stringConvertible(stored.id),
          "tick": .stringConvertible(report.tick), "bytes": .stringConvertible(bytes.count),
        ])
      return jsonResponse(Self.fields(stored), status: created ? .created : .ok)
    }
  }

  /// The longest game and build name a bundle may carry, in UTF-8 bytes.
  static let longestName = 255

  /// A bundle as the API describes it.
  static func fields(_ bundle: StoredBundle) -> [String: JSON] {
    [
      "id": .int(bundle.id), "createdAt": .int(bundle.createdAt), "game": .string(bundle.game),
      "build": .string(bundle.build), "tick": .int(bundle.tick), "summary": .string(bundle.summary),
      "bytes": .int(bundle.length), "sha256": .string(bundle.sha256),
    ]
  }
}
