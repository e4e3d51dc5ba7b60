import Foundation
import Stasis
import StasisTestSupport
import StasisTesting
import Testing

/// A roguelike the CLI has never seen: a tile map as bytes, monsters with ids, and a summary
/// whose names are long or the same as the CLI's own columns.
private struct Dungeon: Codable, Sendable {
  struct Monster: Codable {
    var id: Int
    var kind: String
    var hp: Int
  }
  var map: [UInt8]
  var monsters: [Monster]
}

/// The roguelike's summary: two long names, and five named like `stasis slots`' own columns.
private struct DungeonSummary: Codable {
  var causeOfDeath: String
  var playerLevel: Int
  var device: String
  var bytes: Int
  var progress: String
  var valid: String
  var generation: Int
}

/// A folder with the roguelike's saves, and `stasis` run inside it.
private struct DungeonFixtures {
  let root: URL
  var saves: String { root.appendingPathComponent("Saves").path }
  let codec = SaveCodec<Dungeon>(game: GameIdentity(name: "rogue", build: "1.0", schemaVersion: 2))

  init() throws {
    root = try temporaryFolder()
  }

  func path(_ name: String) -> String { root.appendingPathComponent(name).path }

  static func dungeon(deadMonster: Int? = nil, changedTiles: [Int] = []) -> Dungeon {
    var map = [UInt8](repeating: 1, count: 4096)
    for tile in changedTiles { map[tile] = 2 }
    let monsters = (0..<990).filter { $0 != deadMonster }.map {
      Dungeon.Monster(id: 1000 + $0, kind: $0 % 3 == 0 ? "orc" : "rat", hp: 5)
    }
    return Dungeon(map: map, monsters: monsters)
  }

  /// Saves `dungeon` in slot `dungeon` with the colliding summary, as the deck.
  @discardableResult
  func save(_ dungeon: Dungeon) throws -> String {
    let store = SaveStore(directory: saves, wallClock: ManualWallClock(unixMilliseconds: 1_767_225_600_000))
    let summary = try SaveSummary(
      DungeonSummary(
        causeOfDeath: "killed by an orc", playerLevel: 1, device: "the orc's club", bytes: 12, progress: "deep",
        valid: "no", generation: 7),
      frame: 36_000, playTime: 600, progress: 0.5, device: "deck")
    return try store.save(dungeon, codec: codec, slot: "dungeon", summary: summary).wait().path
  }

  /// Writes `document` to `name`, signed with `key` when given.
  func write(_ name: String, _ dungeon: Dungeon, signedWith key: [UInt8]?) throws {
    let document = try codec.document(for: dungeon, summary: SaveSummary(), createdAt: 1_767_225_600_000)
    let bytes = SaveFileFormat.encode(document, signingKey: key.map { SigningKey(bytes: $0) })
    try Data(bytes).write(to: root.appendingPathComponent(name))
  }

  func stasis(_ arguments: String...) throws -> (status: Int32, out: String, err: String) {
    var environment = ProcessInfo.processInfo.environment
    environment["STASIS_KEY_FILE"] = nil
    let result = try run("stasis", arguments, in: root, environment: environment)
    return (result.status, result.stdout, result.stderr)
  }
}

@Suite("stasis on a game that is not the demo")
struct CLIAnyGameTests {
  @Test(
    "slots, inspect and --json: long summary names never run into their values; colliding names get their own columns")
  func collidingSummary() throws {
    let fixtures = try DungeonFixtures()
    try fixtures.save(DungeonFixtures.dungeon())

    let slots = try fixtures.stasis("slots", "Saves")
    #expect(slots.status == 0)
    expectGolden(slots.out, "collidingSummary.slots")

    let inspect = try fixtures.stasis("inspect", "Saves/dungeon/0000000001.stasis")
    #expect(inspect.status == 0)
    expectGolden(inspect.out, "collidingSummary.inspect")

    let json = try fixtures.stasis("inspect", "Saves/dungeon/0000000001.stasis", "--json")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
    let metadata = try #require(object["metadata"] as? [String: Any])
    #expect(
      Set(metadata.keys) == ["slot", "createdAt", "frame", "playTime", "progress", "device", "summary"],
      "the game's fields only under summary; nothing demo-shaped")
    #expect(metadata["device"] as? String == "deck")
    #expect(metadata["progress"] as? Double == 0.5)
    let summary = try #require(metadata["summary"] as? [String: Any])
    #expect(summary["device"] as? String == "the orc's club")
    #expect(summary["progress"] as? String == "deep")
    #expect(summary["causeOfDeath"] as? String == "killed by an orc")
    #expect(summary["generation"] as? Int == 7)

    let listed = try fixtures.stasis("slots", "Saves", "--json")
    let list = try #require(try JSONSerialization.jsonObject(with: Data(listed.out.utf8)) as? [[String: Any]])
    let generation = try #require((list.first?["generations"] as? [[String: Any]])?.first)
    #expect(generation["generation"] as? Int == 1, "the file's generation, not the game's field")
    #expect(generation["valid"] as? Bool == true)
    #expect(generation["device"] as? String == "deck")
    #expect(generation["level"] == nil && generation["score"] == nil)
    #expect((generation["summary"] as? [String: Any])?["valid"] as? String == "no")
  }

  @Test("verify, inspect and dump take the current key and the retired ones, by --key-file or a key ring")
  func retiredKeys() throws {
    let fixtures = try DungeonFixtures()
    let current = Array("the current key, thirty-two b!!!".utf8)
    let retired = Array("the retired key, thirty-two b!!!".utf8)
    try Data(current).write(to: URL(fileURLWithPath: fixtures.path("current.key")))
    try Data(retired).write(to: URL(fileURLWithPath: fixtures.path("retired.key")))
    try FileManager.default.createDirectory(atPath: fixtures.path("keys"), withIntermediateDirectories: true)
    try Data("# the game's keys, current first\ncurrent.key\n\nretired.key\n".utf8)
      .write(to: URL(fileURLWithPath: fixtures.path("keys/ring")))
    try Data(current).write(to: URL(fileURLWithPath: fixtures.path("keys/current.key")))
    try Data(retired).write(to: URL(fileURLWithPath: fixtures.path("keys/retired.key")))
    let dungeon = DungeonFixtures.dungeon()
    try fixtures.write("new.stasis", dungeon, signedWith: current)
    try fixtures.write("old.stasis", dungeon, signedWith: retired)

    let both = try fixtures.stasis(
      "verify", "--key-file", "current.key", "--key-file", "retired.key", "new.stasis", "old.stasis")
    #expect(both.status == 0, "a save signed with a retired key is one the game accepts")
    expectGolden(both.out, "retiredKeys.both")
    let ring = try fixtures.stasis("verify", "--key-ring", "keys/ring", "new.stasis", "old.stasis")
    #expect(ring.out == both.out)
    // The second --key-file no longer replaces the first.
    let inspect = try fixtures.stasis(
      "inspect", "--key-file", "current.key", "--key-file", "retired.key", "new.stasis")
    #expect(inspect.status == 0)
    #expect(inspect.out.contains("\nsignature: valid\n"))
    let dump = try fixtures.stasis("dump", "--key-ring", "keys/ring", "old.stasis", "--section", "monsters")
    #expect(dump.status == 0)
    #expect(dump.err == "signature: valid (a retired key)\n")

    let onlyCurrent = try fixtures.stasis("verify", "--key-file", "current.key", "old.stasis")
    #expect(onlyCurrent.status == 1, "without the retired key it is another key's")
    let empty = fixtures.path("keys/empty-ring")
    try Data("# nothing\n".utf8).write(to: URL(fileURLWithPath: empty))
    let refused = try fixtures.stasis("verify", "--key-ring", "keys/empty-ring", "new.stasis")
    #expect(refused.status == 64)
    #expect(refused.err == "error: keys/empty-ring: a key ring names 1 to 64 key files, one a line; this one names 0\n")
    let missing = try fixtures.stasis("verify", "--key-ring", "keys/nowhere", "new.stasis")
    #expect(missing.status == 74)
    #expect(missing.err == "error: keys/nowhere: the key ring could not be read\n")
  }

  @Test("diff --key id: one dead monster is one difference; a byte map shows its first five differing bytes")
  func diffByKey() throws {
    let fixtures = try DungeonFixtures()
    try fixtures.write("before.stasis", DungeonFixtures.dungeon(), signedWith: nil)
    try fixtures.write(
      "after.stasis", DungeonFixtures.dungeon(deadMonster: 10, changedTiles: [3, 70, 71, 900, 1000, 2000, 4095]),
      signedWith: nil)

    let byIndex = try fixtures.stasis("diff", "before.stasis", "after.stasis")
    #expect(byIndex.status == 1)
    #expect(byIndex.out.split(separator: "\n").count > 900, "index by index, every monster after the dead one moved")

    let byKey = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--key", "id")
    #expect(byKey.status == 1)
    expectGolden(byKey.out, "diffByKey.byKey")
    let json = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--key", "id", "--json")
    let list = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]])
    #expect(list.map { $0["path"] as? String } == ["map", "monsters[id=1010]"])
    let map = try #require(list.first?["bulk"] as? [String: Any])
    #expect(map["differingElements"] as? Int == 7)
    #expect(
      map["changedRanges"] as? [[Int]] == [
        [3, 4], [70, 72], [900, 901], [1000, 1001], [2000, 2001], [4095, 4096],
      ])
    #expect(map["moreRanges"] as? Int == 0)
    #expect(list.last?["new"] is NSNull)

    // The game's merge declarations align the same array, with no --key.
    try Data("# the dungeon's merge\nmonsters = by-key id\nmonsters[*].hp = min\n".utf8)
      .write(to: fixtures.root.appendingPathComponent("merge.txt"))
    let declared = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--declarations", "merge.txt")
    #expect(declared.status == 1)
    #expect(declared.out == byKey.out)
    let unreadable = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--declarations", "nowhere.txt")
    #expect(unreadable.status == 74)
    #expect(unreadable.err == "error: nowhere.txt: the merge declarations file could not be read\n")
  }
}
