import Foundation
import Stasis

/// What the server keeps of a desync bundle a device sent (`POST /v1/bundles`).
public struct RemoteBundle: Sendable, Equatable {
  /// The server's number for it: the studio's console shows it as `#id`.
  public var id: Int
  /// The first divergent tick, from the bundle's report.
  public var tick: Int64
  /// The report's one line (`first divergence at tick N`).
  public var summary: String
  /// The bundle's size.
  public var bytes: Int
  /// Its SHA-256, lowercase hex.
  public var sha256: String
  /// False when the server already had it (a retry of a send whose answer was lost): it keeps
  /// one copy.
  public var isNew: Bool

  init?(json: [String: Any], isNew: Bool) {
    guard let id = json["id"] as? Int, let tick = json["tick"] as? Int, let summary = json["summary"] as? String,
      let bytes = json["bytes"] as? Int, let sha256 = json["sha256"] as? String
    else { return nil }
    self.id = id
    self.tick = Int64(tick)
    self.summary = summary
    self.bytes = bytes
    self.sha256 = sha256
    self.isNew = isNew
  }
}

extension CloudClient {
  /// `POST /v1/bundles`: sends a desync bundle (`StasisReplay`'s `DesyncBundle.encoded()`, or a
  /// `.desync.stasis` file) for the studio to read in its console. Sending the same bundle again
  /// is safe: the server keeps one copy and answers with it.
  ///
  /// A file that is not a bundle, or one past the server's limit, throws
  /// ``CloudError/Kind/refused``; a server from before bundles answers `404`:
  /// ``CloudError/Kind/notFound``.
  public func sendDesyncBundle(_ bytes: [UInt8]) async throws(CloudError) -> RemoteBundle {
    let reply = try await send(
      "POST", "/v1/bundles", headers: [("Content-Type", "application/vnd.stasis")], body: bytes)
    session.sent(bytes.count)
    guard reply.status == 201 || reply.status == 200 else {
      var error = reply.error
      if reply.status == 404 { error.message = "the server has no /v1/bundles (older than bundles): \(error.message)" }
      throw error
    }
    guard let bundle = RemoteBundle(json: reply.json, isNew: reply.status == 201) else {
      throw CloudError(.server, "the server's answer to a bundle is not the JSON it should be")
    }
    return bundle
  }
}

/// What the server keeps of a replay a device sent (`PUT /v1/replays/{name}`).
public struct RemoteReplay: Sendable, Equatable {
  /// Its name, as sent.
  public var name: String
  /// Its first tick and how many ticks it holds, from its manifest.
  public var startTick: Int64
  public var ticks: Int64
  /// The replay's size.
  public var bytes: Int
  /// Its SHA-256, lowercase hex.
  public var sha256: String
  /// True when the server had no replay of this name (it replaced one otherwise).
  public var isNew: Bool

  init?(json: [String: Any], isNew: Bool) {
    guard let name = json["name"] as? String, let startTick = json["startTick"] as? Int,
      let ticks = json["ticks"] as? Int, let bytes = json["bytes"] as? Int, let sha256 = json["sha256"] as? String
    else { return nil }
    self.name = name
    self.startTick = Int64(startTick)
    self.ticks = Int64(ticks)
    self.bytes = bytes
    self.sha256 = sha256
    self.isNew = isNew
  }
}

extension CloudClient {
  /// `PUT /v1/replays/{name}`: sends a replay (`StasisReplay`'s file, `SAVES/replays/NAME.stasis`)
  /// for the studio to download from its console. The server keeps the last one sent under each
  /// name: send it again as it grows.
  ///
  /// A file that is not a replay, a name that is not a slot's, or one past the server's limit
  /// throws ``CloudError/Kind/refused``; a server from before replays answers `404`:
  /// ``CloudError/Kind/notFound``.
  public func sendReplay(_ bytes: [UInt8], named name: String) async throws(CloudError) -> RemoteReplay {
    let path = "/v1/replays/" + (name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name)
    let reply = try await send("PUT", path, headers: [("Content-Type", "application/vnd.stasis")], body: bytes)
    session.sent(bytes.count)
    guard reply.status == 201 || reply.status == 200 else {
      var error = reply.error
      if reply.status == 404 { error.message = "the server has no /v1/replays (older than replays): \(error.message)" }
      throw error
    }
    guard let replay = RemoteReplay(json: reply.json, isNew: reply.status == 201) else {
      throw CloudError(.server, "the server's answer to a replay is not the JSON it should be")
    }
    return replay
  }
}
