import Foundation
import HTTPTypes
import Hummingbird
import Metrics
import NIOCore
import Stasis

/// The player's settings (15.6), carried between their devices: `PUT /v1/settings` merges a
/// device's settings file into the player's, key by key (the last writer wins by
/// ``SettingsStamp``), and answers with the merged file, so the device merges the answer and
/// agrees with the server in one round trip; `GET /v1/settings` answers with the merged file.
/// A player with no settings yet has an empty file (never a `404`: to a client, a `404` on
/// these routes means a server from before them).
struct SettingsController: Sendable {
  /// Where the player's settings are kept.
  let settings: any SettingsRepository
  /// The limits a settings file is held to.
  let limits: PlayerLimits

  /// The media type of a settings file: a Stasis file, as a slot's.
  static let settingsMediaType = "application/vnd.stasis"
  /// The longest key and device name a settings file may carry, in UTF-8 bytes.
  static let longestSettingsName = 255

  func addRoutes(to v1: RouterGroup<ServerContext>) {
    v1.get("settings") { _, context in
      let stored = try await settings.settings(player: context.requirePlayer())
      return settingsResponse(stored)
    }
    v1.put("settings") { request, context in
      let player = try context.requirePlayer()
      let limit = limits.settingsBytes
      if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
        throw APIError(.contentTooLarge, "the settings file is \(length) bytes; the limit is \(limit)")
      }
      // Checked as a settings file whatever its Content-Type says, as an upload is.
      let body = try await collectBody(request.body, limit: limit)
      let sent = try Self.settingsFile([UInt8](buffer: body))
      switch try await settings.mergeSettings(player: player, sent, limits: limits) {
      case .merged(let merged, let taken):
        Counter(label: "stasis_settings_merges_total").increment()
        Counter(label: "stasis_settings_keys_taken_total").increment(by: taken)
        context.logger.debug(
          "settings merged",
          metadata: [
            "player": .string(player.name), "sent": .stringConvertible(sent.entries.count),
            "taken": .stringConvertible(taken), "keys": .stringConvertible(merged.entries.count),
          ])
        return settingsResponse(merged)
      case .overLimit(let message):
        throw APIError(.contentTooLarge, message)
      }
    }
  }

  /// A device's settings file, read with Stasis's own reader (every checksum, every entry's
  /// shape), its names bounded: a `400` naming what is wrong otherwise.
  static func settingsFile(_ bytes: [UInt8]) throws -> SettingsFile {
    let settings: SettingsFile
    do {
      settings = try SettingsFile(bytes: bytes)
    } catch {
      throw APIError(.badRequest, "not a settings file: \(error.description)")
    }
    for entry in settings.entries {
      guard !entry.key.isEmpty, entry.key.utf8.count <= longestSettingsName else {
        throw APIError(.badRequest, "a setting's key is 1-\(longestSettingsName) bytes; one is \(entry.key.utf8.count)")
      }
      guard entry.stamp.device.utf8.count <= longestSettingsName else {
        throw APIError(
          .badRequest,
          "a setting's device is at most \(longestSettingsName) bytes; '\(entry.key)' names one of "
            + "\(entry.stamp.device.utf8.count)")
      }
    }
    return settings
  }

  private func settingsResponse(_ settings: SettingsFile) -> Response {
    Response(
      status: .ok, headers: [.contentType: Self.settingsMediaType, .cacheControl: "no-store"],
      body: .init(byteBuffer: ByteBuffer(bytes: settings.encoded())))
  }
}
