import Foundation
import Stasis
import StasisTestSupport
import Testing

private struct Options: Codable, Sendable, Equatable {
  var volume = 0.8
  var palette = "standard"
  var bindings = Bindings()

  struct Bindings: Codable, Sendable, Equatable {
    var jump = "space"
    var left = "a"
  }
}

@MainActor
@Suite("stasis settings: a game's settings without the game")
struct CLISettingsTests {
  let root = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("stasis-settings-\(UUID().uuidString)")

  func stasis(_ arguments: String...) throws -> (status: Int32, out: String, err: String) {
    let result = try run("stasis", arguments + ["--saves", root.path], in: root)
    return (result.status, result.stdout, result.stderr)
  }

  @Test("list, get and set keep each key's type; the game takes the change; a wrong value is one line, exit 1")
  func listGetSet() throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let settings = try SettingsStore(store: SaveStore(directory: root.path), defaults: Options())
    var changes: [String] = []
    settings.addObserver { changes.append($0.description) }

    let list = try stasis("settings", "list")
    #expect(list.status == 0)
    #expect(
      list.out.split(separator: "\n") == [
        #"bindings  {"jump":"space","left":"a"}  (default)"#, "palette   \"standard\"  (default)",
        "volume    0.8  (default)",
      ])
    #expect(try stasis("settings", "get", "bindings.jump").out == "\"space\"\n")

    let set = try stasis("settings", "set", "volume", "1")
    #expect(set.status == 0)
    #expect(set.out == "volume: 0.8 → 1\n")
    #expect(try stasis("settings", "set", "bindings.jump", "w").status == 0)
    try settings.reload()
    #expect(settings.value.volume == 1.0, "a volume of 1 stays a float")
    #expect(settings.value.bindings == .init(jump: "w", left: "a"))
    #expect(
      changes == [#"bindings: {"jump":"space","left":"a"} → {"jump":"w","left":"a"} (file)"#, "volume: 0.8 → 1 (file)"])

    let wrong = try stasis("settings", "set", "volume", "loud")
    #expect(wrong.status == 1)
    #expect(wrong.err.split(separator: "\n").count == 1)
    #expect(wrong.err.contains("'volume' is a number; 'loud' is not"))
    #expect(try stasis("settings", "set", "bindings", "w").err.contains("set one of its fields, as bindings.FIELD"))
    #expect(try stasis("settings", "get", "nothing").status != 0)

    let json = try stasis("settings", "list", "--json")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: [String: Any]])
    #expect(object["volume"]?["value"] as? Double == 1.0)
    #expect((object["volume"]?["stamp"] as? String)?.contains("@stasis-cli@") == true)
    #expect(
      try run("stasis", ["dump", root.appendingPathComponent(".settings").path]).status == 0,
      "a Stasis file: dump opens it")
  }

  @Test("get of a key the file does not hold: exit 1 (not 74, an I/O error) and one line naming the key")
  func unknownKey() throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    _ = try SettingsStore(store: SaveStore(directory: root.path), defaults: Options())
    for key in ["nosuchkey", "bindings.nosuchfield"] {
      let result = try stasis("settings", "get", key)
      #expect(result.status == 1, "\(key): \(result.err)")
      #expect(result.out.isEmpty)
      let lines = result.err.split(separator: "\n")
      #expect(lines.count == 1, "\(result.err)")
      #expect(lines.first?.contains("no setting '\(key)'") == true, "\(result.err)")
    }
  }
}
