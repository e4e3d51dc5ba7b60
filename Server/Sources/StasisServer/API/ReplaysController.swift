import Foundation
import HTTPTypes
import Hummingbird
import Metrics
import NIOCore
import Stasis
import StasisReplay

/// Replays (issue 45): `PUT /v1/replays/{name}` takes a replay a player's device recorded
/// (`ReplayFile`, read with `StasisReplay`'s own reader) and keeps the last one sent under that
/// name, for the studio to download from the console; `GET /v1/replays` lists the player's.
struct ReplaysController: Sendable {
  /// Where replays are kept.
  let replays: any ReplayRepository
  /// The largest replay and how many a player keeps.
  let limits: PlayerLimits
  /// Milliseconds since the Unix epoch.
  let clock: @Sendable () -> Int64

  func addRoutes(to v1: RouterGroup<ServerContext>) {
    v1.get("replays") { _, context in
      let stored = try await replays.replays(player: context.requirePlayer())
      return jsonResponse(["replays": .array(stored.map { .object(Self.fields($0)) })], status: .ok)
    }
    v1.put("replays/:name") { request, context in
      let player = try context.requirePlayer()
      // A replay's name is a slot's: letters, digits, `-`, `_` and `.`.
      let name = try slotName(context, parameter: "name")
      let limit = limits.replayBytes
      if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
        throw APIError(.contentTooLarge, "the replay is \(length) bytes; the limit is \(limit)")
      }
      let bytes = [UInt8](buffer: try await collectBody(request.body, limit: limit))
      let replay: ReplayFile
      do throws(SaveFileError) {
        replay = try ReplayFile(bytes: bytes)
      } catch {
        throw APIError(.badRequest, "not a replay: \(error.description)")
      }
      let manifest = replay.manifest
      for (what, text) in [("game", manifest.game), ("build", manifest.build)]
      where text.contains("\0") || text.utf8.count > BundlesController.longestName {
        throw APIError(
          .badRequest, "the replay's \(what) name is not 0-\(BundlesController.longestName) bytes without NUL")
      }
      let draft = ReplayDraft(
        name: name, updatedAt: clock(), game: manifest.game, build: manifest.build, startTick: manifest.startTick,
        ticks: manifest.ticks, bytes: bytes)
      let (stored, created) = try await replays.putReplay(player: player, draft, keep: limits.replaysKept)
      Counter(label: "stasis_replays_stored_total").increment()
      return jsonResponse(Self.fields(stored), status: created ? .created : .ok)
    }
  }

  /// A replay as the API describes it.
  static func fields(_ replay: StoredReplay) -> [String: JSON] {
    [
      "id": .int(replay.id), "name": .string(replay.name), "updatedAt": .int(replay.updatedAt),
      "game": .string(replay.game), "build": .string(replay.build), "startTick": .int(replay.startTick),
      "ticks": .int(replay.ticks), "bytes": .int(replay.length), "sha256": .string(replay.sha256),
    ]
  }
}
