import Stasis

extension CloudClient {
  /// `PUT /v1/settings`: sends this device's settings; the server merges them into the player's,
  /// key by key (the last writer wins by `SettingsStamp`), and answers with the merged
  /// settings. Merge the answer (`SettingsStore.merge(_:)`) and this device agrees with the
  /// server in one round trip.
  ///
  /// A server from before settings answers `404`: ``CloudError/Kind/notFound``. A file the
  /// server refuses (too large, a key too long) throws ``CloudError/Kind/refused``; an answer
  /// that is not a settings file, ``CloudError/Kind/server``.
  public func mergeSettings(_ settings: SettingsFile) async throws(CloudError) -> SettingsFile {
    let bytes = settings.encoded()
    let reply = try await send(
      "PUT", settingsPath, headers: [("Content-Type", settingsMediaType)], body: bytes)
    session.sent(bytes.count)
    return try settingsAnswer(reply)
  }

  /// `GET /v1/settings`: the player's settings as the server merged them from every device (an
  /// empty file when no device sent any yet). A server from before settings answers `404`:
  /// ``CloudError/Kind/notFound``.
  public func settings() async throws(CloudError) -> SettingsFile {
    try settingsAnswer(try await send("GET", settingsPath))
  }

  private var settingsPath: String { "/v1/settings" }
  private var settingsMediaType: String { "application/vnd.stasis" }

  private func settingsAnswer(_ reply: Reply) throws(CloudError) -> SettingsFile {
    guard reply.status == 200 else {
      var error = reply.error
      // The routes answer every player, so a 404 is a server without them.
      if reply.status == 404 {
        error.message = "the server has no /v1/settings (older than settings): \(error.message)"
      }
      throw error
    }
    do {
      return try SettingsFile(bytes: reply.body, path: "the server's settings")
    } catch {
      throw CloudError(.server, "the server's settings answer is not a settings file: \(error)")
    }
  }
}
