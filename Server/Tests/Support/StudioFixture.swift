import Foundation
import Stasis
import StasisDemoGame

/// A studio for the console's tests: three staff members (support, viewer, admin) with
/// passwords and API keys, and a player whose slot `autosave` has five revisions of the demo,
/// each with the thumbnail the demo draws: r1, r2 from "phone", r3 from "tablet", r4 from
/// "phone", and r5 from "tablet", which resolved a conflict that r3 lost by merging it (it names
/// r3 as the loser and as its parent, written on r4): r3 is kept, and is r5's merge input.
struct StudioFixture: Sendable {
  let database: Database
  let player: (name: String, token: String)
  let playerId: Int
  /// By role: name, password, API key.
  let staff: [String: (name: String, password: String, key: String)]
  let slot = "autosave"
  /// Each revision's bytes, by revision.
  let files: [Int: [UInt8]]

  /// Adds the staff and the player to `database` (`stasis-server staff add`, `players add`) and
  /// uploads the revisions through `client`: a client, for a token, of a server on `database`.
  init(_ database: Database, client: (String) -> Client) async throws {
    self.database = database
    var staff: [String: (String, String, String)] = [:]
    for role in ["support", "viewer", "admin"] {
      let name = "\(role)-\(UUID().uuidString.prefix(6))"
      let password = "pw-\(UUID().uuidString)"
      let added = try run(
        serverBinary, ["staff", "add", name, "--role", role] + database.arguments, input: password + "\n")
      guard added.status == 0 else { throw ServerTestError("staff add failed: \(added.err)") }
      let key = try run(serverBinary, ["staff", "key", name] + database.arguments)
      guard key.status == 0 else { throw ServerTestError("staff key failed: \(key.err)") }
      staff[role] = (name, password, key.out.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    self.staff = staff
    player = try database.addPlayer("player-\(UUID().uuidString.prefix(6))")
    let playerClient = client(player.token)
    var files: [Int: [UInt8]] = [:]
    let devices = ["phone", "phone", "tablet", "phone", "tablet"]
    for (index, device) in devices.enumerated() {
      let revision = index + 1
      let bytes = try Self.saveWithThumbnail(steps: 40 + index * 45)
      var headers = [("X-Stasis-Device", device)]
      if revision == 1 {
        headers.append(("If-None-Match", "*"))
      } else {
        headers.append(("If-Match", "\"\(revision - 1)\""))
      }
      if revision == 5 { headers += [("X-Stasis-Conflict-Loser", "\"3\""), ("X-Stasis-Parent", "\"3\"")] }
      let reply = try await playerClient.send(.PUT, "/v1/slots/autosave", headers: headers, body: bytes)
      guard reply.status == 201 else { throw ServerTestError("upload r\(revision): \(reply.status) \(reply.text)") }
      files[revision] = bytes
    }
    self.files = files
    let admin = client(staff["admin"]!.2)
    let found = try await admin.send(.GET, "/v1/admin/players?query=\(player.name)").json["players"] as? [[String: Any]]
    guard let id = found?.first?["id"] as? Int else { throw ServerTestError("the admin API did not find the player") }
    playerId = id
  }

  /// A demo save `steps` into the first level, with the thumbnail `stasis-demo --render-thumbnail` draws of it.
  static func saveWithThumbnail(steps: Int) throws -> [UInt8] {
    let bytes = try DemoSaves.save(level: 1, steps: steps, seed: 3)
    let folder = temporaryURL("stasis-thumb")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let save = folder.appendingPathComponent("save.stasis")
    let png = folder.appendingPathComponent("thumb.png")
    try Data(bytes).write(to: save)
    let drawn = try run(
      product("stasis-demo"), ["--render-thumbnail", save.path, "--output", png.path],
      environment: ["SDL_VIDEODRIVER": "dummy"])
    guard drawn.status == 0 else { throw ServerTestError("render-thumbnail failed: \(drawn.err)") }
    var document = try SaveFileFormat.decode(bytes)
    document.sections.append(SaveSection(name: "thumbnail", content: .raw([UInt8](try Data(contentsOf: png)))))
    return SaveFileFormat.encode(document)
  }
}
