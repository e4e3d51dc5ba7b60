import Foundation
import Stasis
import StasisTestSupport
import StasisTesting
import Testing

/// A game the CLI has never seen: its own types, its own sections.
private struct Garden: Codable, Sendable {
  struct Plant: Codable {
    var kind: String
    var height: Double
    var watered: Bool
  }
  struct Sprinkler: BulkStorable, Equatable {
    var x: Float = 0
    var y: Float = 0
    var flow: UInt16 = 0
    static let bulkLayout = BulkLayout(
      of: Sprinkler.self, [.field("x", \.x), .field("y", \.y), .field("flow", \.flow)])
  }
  var plants: [Plant]
  var weather: [String: Double]
  var sprinklers: [Sprinkler]
}

/// The garden's own summary fields, as its load menu shows them.
private struct GardenSummary: Codable {
  var day: Int
  var harvest: Int
}

/// The garden's summary on `day` (of four), written on the greenhouse's tablet.
private func gardenSummary(day: Int) throws -> SaveSummary {
  try SaveSummary(
    GardenSummary(day: day, harvest: day * 100), frame: Int64(day * 3600), playTime: 60 * Double(day),
    progress: Double(day) / 4, device: "greenhouse")
}

/// Fixture saves written into a fresh folder: a slot with three generations of the garden,
/// and broken copies of one of them.
private struct Fixtures {
  let root: URL
  var saves: String { root.appendingPathComponent("Saves").path }
  func path(_ name: String) -> String { root.appendingPathComponent(name).path }

  init() throws {
    root = try temporaryFolder()
    let codec = SaveCodec<Garden>(game: GameIdentity(name: "garden", build: "2.1", schemaVersion: 3))
    let store = SaveStore(
      directory: root.appendingPathComponent("Saves").path,
      wallClock: ManualWallClock(unixMilliseconds: 1_767_225_600_000))
    for day in 1...3 {
      let garden = Garden(
        plants: [
          .init(kind: "tomato", height: 0.5 * Double(day), watered: day % 2 == 1),
          .init(kind: "basil", height: 0.2, watered: true),
        ],
        weather: ["rain": Double(day), "sun": 8],
        sprinklers: (0..<4).map { .init(x: Float($0), y: 1, flow: UInt16(day == 3 && $0 == 2 ? 9 : 5)) })
      _ = try store.save(
        garden, codec: codec, slot: "spring",
        summary: try gardenSummary(day: day)
      ).wait()
    }
    let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store.path(of: "spring", generation: 3))))
    try Data(good).write(to: root.appendingPathComponent("good.stasis"))
    try Data(good[0..<(good.count - 9)]).write(to: root.appendingPathComponent("truncated.stasis"))
    var flipped = good
    flipped[good.count / 2] ^= 0x04
    try Data(flipped).write(to: root.appendingPathComponent("flipped.stasis"))
    var newer = good
    newer[8] = 9
    try Data(newer).write(to: root.appendingPathComponent("newer.stasis"))
    try Data("PK\u{3}\u{4} not a save".utf8).write(to: root.appendingPathComponent("wrong-magic.stasis"))
    try Data().write(to: root.appendingPathComponent("empty.stasis"))
    try FileManager.default.createDirectory(
      at: root.appendingPathComponent("folder.stasis"), withIntermediateDirectories: true)
  }

  /// Runs `stasis` and replaces the fixture folder with `$DIR` in what it printed.
  func stasis(_ arguments: String...) throws -> (status: Int32, out: String, err: String) {
    try stasis(environment: [:], arguments)
  }

  /// Runs `stasis` with `environment` added to this process's, less any `STASIS_KEY_FILE` of
  /// the machine's (so a developer's key never changes a golden output).
  func stasis(environment: [String: String], _ arguments: [String]) throws -> (
    status: Int32, out: String, err: String
  ) {
    var base = ProcessInfo.processInfo.environment
    base["STASIS_KEY_FILE"] = nil
    let result = try run("stasis", arguments, in: root, environment: base.merging(environment) { $1 })
    func clean(_ text: String) -> String { text.replacingOccurrences(of: root.path, with: "$DIR") }
    return (result.status, clean(result.stdout), clean(result.stderr))
  }

  /// `signed.stasis` (good.stasis's content signed with `game.key`), `game.key` (32 bytes),
  /// `other.key` (another 32) and `short.key` (8 bytes: not a key).
  func writeSigned() throws {
    let key = Array("the garden's key, thirty-two b!!".utf8)
    let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path("good.stasis"))))
    let signed = SaveFileFormat.encode(try SaveFileFormat.decode(good), signingKey: SigningKey(bytes: key))
    try Data(signed).write(to: root.appendingPathComponent("signed.stasis"))
    try Data(key).write(to: root.appendingPathComponent("game.key"))
    try Data("someone else's key, 32 bytes!!!!".utf8).write(to: root.appendingPathComponent("other.key"))
    try Data("too shor".utf8).write(to: root.appendingPathComponent("short.key"))
  }
}

@Suite("stasis CLI golden tests")
struct CLIGoldenTests {
  @Test("inspect: a valid save from a game the CLI has never seen")
  func inspectValid() throws {
    let fixtures = try Fixtures()
    let result = try fixtures.stasis("inspect", "good.stasis")
    #expect(result.status == 0)
    expectGolden(result.out, "inspectValid.result")
  }

  @Test("inspect --json carries the documented keys")
  func inspectJSON() throws {
    let fixtures = try Fixtures()
    let result = try fixtures.stasis("inspect", "flipped.stasis", "--json")
    #expect(result.status == 1)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any])
    for key in ["path", "valid", "formatVersion", "schemaVersion", "game", "metadata", "sections", "error"] {
      #expect(object[key] != nil, "missing \(key)")
    }
    let metadata = try #require(object["metadata"] as? [String: Any])
    #expect(Set(metadata.keys) == ["slot", "createdAt", "frame", "playTime", "progress", "device", "summary"])
    #expect(metadata["summary"] as? [String: Any] != nil, "the game's own fields, only under summary")
    let error = try #require(object["error"] as? [String: Any])
    #expect(error["kind"] as? String == "checksumMismatch")
    #expect(error["section"] as? String == "plants")
    #expect(error["offset"] as? Int != nil)
    let sections = try #require(object["sections"] as? [[String: Any]])
    #expect(sections.map { $0["checksumOK"] as? Bool } == [false, true, true])
  }

  @Test("every broken input is exit 1 (or 74 when unreadable) with a one-line reason naming the part and offset")
  func brokenInputs() throws {
    let fixtures = try Fixtures()
    let cases: [(String, Int32, String)] = [
      ("truncated.stasis", 1, "error: truncated.stasis: truncated in trailer at byte "),
      ("flipped.stasis", 1, "error: flipped.stasis: checksum mismatch in section 'plants' at byte 261: "),
      (
        "newer.stasis", 1,
        "error: newer.stasis: newer format version in header at byte 8: format version 9; this reader knows up to 2"
      ),
      (
        "wrong-magic.stasis", 1,
        "error: wrong-magic.stasis: not a Stasis save in header at byte 0: the file does not start with the Stasis magic number"
      ),
      ("empty.stasis", 1, "error: empty.stasis: truncated in header at byte 0: the file is empty"),
      ("folder.stasis", 74, "error: folder.stasis: not a regular file: is a folder, not a save file"),
      ("missing.stasis", 74, "error: missing.stasis: not found: no such file"),
    ]
    for (file, status, line) in cases {
      for command in ["dump", "thumbnail"] {
        let result =
          command == "dump" ? try fixtures.stasis("dump", file) : try fixtures.stasis("thumbnail", file, "-o", "x.png")
        #expect(result.status == status, "\(command) \(file)")
        #expect(result.err.hasPrefix(line), "\(command) \(file): \(result.err)")
        #expect(result.err.split(separator: "\n").count == 1, "one line")
        // dump still prints what survives of a file whose header is whole (below).
        let salvaged = command == "dump" && ["truncated.stasis", "flipped.stasis"].contains(file)
        #expect(result.out.isEmpty != salvaged, "\(command) \(file)")
      }
    }
    #expect(!FileManager.default.fileExists(atPath: fixtures.path("x.png")))
  }

  @Test("dump of a damaged file prints its whole sections and marks the bad ones; inspect says cut off, not BAD")
  func damagedSections() throws {
    let fixtures = try Fixtures()
    let flipped = try fixtures.stasis("dump", "flipped.stasis")
    #expect(flipped.status == 1)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(flipped.out.utf8)) as? [String: Any])
    let plants = try #require(object["plants"] as? [String: Any])
    #expect((plants["$damaged"] as? String)?.hasPrefix("checksum mismatch in section 'plants' at byte 261") == true)
    #expect((object["weather"] as? [String: Any])?["sun"] as? Double == 8, "a whole section, printed")

    // Cut inside the last section: the earlier ones are whole, the cut one is missing.
    let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("good.stasis"))))
    try Data(good.prefix(good.count - 60)).write(to: URL(fileURLWithPath: fixtures.path("cut.stasis")))
    let cut = try fixtures.stasis("dump", "cut.stasis")
    #expect(cut.status == 1)
    let cutObject = try #require(try JSONSerialization.jsonObject(with: Data(cut.out.utf8)) as? [String: Any])
    #expect((cutObject["weather"] as? [String: Any])?["$missing"] != nil)
    #expect(cutObject["plants"] is [Any])
    let inspect = try fixtures.stasis("inspect", "cut.stasis")
    #expect(inspect.out.contains("weather     tree"))
    #expect(inspect.out.contains("missing (the file ends before it)"))
    #expect(!inspect.out.contains("BAD"))
  }

  @Test("verify: a line per file and a closing count; exit 1 when any is invalid")
  func verify() throws {
    let fixtures = try Fixtures()
    let all = try fixtures.stasis("verify", "good.stasis", "flipped.stasis", "Saves")
    #expect(all.status == 1)
    expectGolden(all.out, "verify.all")
    let good = try fixtures.stasis("verify", "Saves")
    #expect(good.status == 0)
    #expect(good.out.hasSuffix("3 valid, 0 invalid\n"))
    #expect(try fixtures.stasis("verify", "missing.stasis").status == 74)
  }

  @Test("dump: the content as JSON with sorted keys, from the description alone")
  func dump() throws {
    let fixtures = try Fixtures()
    let result = try fixtures.stasis("dump", "good.stasis", "--section", "weather")
    #expect(result.status == 0)
    #expect(result.out == "{\n  \"rain\" : 3,\n  \"sun\" : 8\n}\n")
    let whole = try fixtures.stasis("dump", "good.stasis")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(whole.out.utf8)) as? [String: Any])
    #expect(Set(object.keys) == ["plants", "sprinklers", "weather"])
    // A bulk array is summarised (its first five elements); --all-elements prints every one.
    let summary = try #require((object["sprinklers"] as? [String: Any])?["$bulk"] as? [String: Any])
    #expect(summary["count"] as? Int == 4)
    #expect((summary["first"] as? [[String: Any]])?[2]["flow"] as? Int == 9)
    let every = try fixtures.stasis("dump", "good.stasis", "--all-elements")
    let all = try #require(try JSONSerialization.jsonObject(with: Data(every.out.utf8)) as? [String: Any])
    let sprinklers = try #require(all["sprinklers"] as? [[String: Any]])
    #expect(sprinklers.count == 4)
    #expect(sprinklers[2]["flow"] as? Int == 9)
    #expect(try fixtures.stasis("dump", "good.stasis", "--section", "nope").status == 64)
  }

  @Test("diff: field by field, bulk arrays summarised; exit 0 equal, 1 different")
  func diff() throws {
    let fixtures = try Fixtures()
    let same = try fixtures.stasis("diff", "good.stasis", "Saves/spring/0000000003.stasis")
    #expect(same.status == 0)
    #expect(same.out == "no differences\n")
    let result = try fixtures.stasis("diff", "Saves/spring/0000000002.stasis", "Saves/spring/0000000003.stasis")
    #expect(result.status == 1)
    expectGolden(result.out, "diff.result")
    let json = try fixtures.stasis("diff", "Saves/spring/0000000002.stasis", "Saves/spring/0000000003.stasis", "--json")
    let list = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]])
    #expect(list.count == 9)
    #expect(list.allSatisfy { $0["path"] is String })
  }

  @Test("slots: a table of slots and generations, newest first")
  func slots() throws {
    let fixtures = try Fixtures()
    let result = try fixtures.stasis("slots", "Saves")
    #expect(result.status == 0)
    expectGolden(result.out, "slots.result")
    let json = try fixtures.stasis("slots", "Saves", "--json")
    let list = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]])
    #expect(list.first?["slot"] as? String == "spring")
    #expect(try fixtures.stasis("slots", "nowhere").status == 74)
  }

  @Test("slots marks a newer build's generation kept, and why")
  func slotsKept() throws {
    let fixtures = try Fixtures()
    // A newer build (schema 4) saved, then this build (schema 3) saved alongside it.
    let newer = SaveCodec<Garden>(game: GameIdentity(name: "garden", build: "2.2", schemaVersion: 4))
    let older = SaveCodec<Garden>(game: GameIdentity(name: "garden", build: "2.1", schemaVersion: 3))
    let garden = Garden(plants: [], weather: [:], sprinklers: [])
    _ = try SaveStore(directory: fixtures.saves, wallClock: ManualWallClock(unixMilliseconds: 1_767_225_600_000)).save(
      garden, codec: newer, slot: "summer", summary: try gardenSummary(day: 4)
    ).wait()
    _ = try SaveStore(directory: fixtures.saves, wallClock: ManualWallClock(unixMilliseconds: 1_767_225_600_000)).save(
      garden, codec: older, slot: "summer", summary: try gardenSummary(day: 4), unreadableNewest: .saveAlongside
    ).wait()
    let result = try fixtures.stasis("slots", "Saves")
    #expect(result.status == 0)
    let rows = result.out.split(separator: "\n").filter { $0.hasPrefix("summer") }
    #expect(rows.count == 2)
    #expect(rows.last?.hasSuffix("kept: schema 4, newer than the build that saved after it (schema 3)") == true)
    let marked = try fixtures.stasis("slots", "Saves", "--schema", "3", "--json")
    let list = try #require(try JSONSerialization.jsonObject(with: Data(marked.out.utf8)) as? [[String: Any]])
    let summer = try #require(list.first { $0["slot"] as? String == "summer" }?["generations"] as? [[String: Any]])
    #expect(summer.first?["kept"] == nil)
    #expect(summer.last?["kept"] as? String == "kept: schema 4, newer than the build that saved after it (schema 3)")
  }

  @Test("recover makes an older valid generation the newest, keeps every other one, refuses an invalid one")
  func recover() throws {
    let fixtures = try Fixtures()
    let folder = fixtures.saves + "/spring"
    let before = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    let originals = try before.filter { $0.hasSuffix(".stasis") }.map {
      try Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0))
    }
    // Corrupt generation 2, then ask for it: refused, nothing written.
    var broken = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/0000000002.stasis")))
    broken[100] ^= 1
    try Data(broken).write(to: URL(fileURLWithPath: folder + "/0000000002.stasis"))
    let refused = try fixtures.stasis("recover", "spring", "--saves", "Saves", "--generation", "2")
    #expect(refused.status == 1)
    #expect(refused.err.contains("checksum mismatch"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == before)

    let done = try fixtures.stasis("recover", "spring", "--saves", "Saves", "--generation", "1")
    #expect(done.status == 0, "\(done.err)")
    #expect(done.out == "generation 1 is now the newest, as generation 4 (Saves/spring/0000000004.stasis)\n")
    let after = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    #expect(after == before + ["0000000004.stasis"])
    #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/0000000004.stasis")) == originals[0])
    #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/0000000003.stasis")) == originals[2])
  }

  @Test("reformat leaves a current save alone, refuses an invalid one, and --dry-run writes nothing")
  func reformat() throws {
    let fixtures = try Fixtures()
    let current = try fixtures.stasis("reformat", "Saves/spring/0000000003.stasis", "--dry-run")
    #expect(current.status == 0)
    #expect(current.out == "up to date  Saves/spring/0000000003.stasis (format 2)\n")
    #expect(current.err.isEmpty)
    let old = try fixtures.stasis("migrate", "Saves/spring/0000000003.stasis", "--dry-run")
    #expect(old.status == 0 && old.out == current.out, "the old name still works")
    #expect(old.err.contains("'stasis migrate' is now 'stasis reformat'"), "and says it is the old name")
    let invalid = try fixtures.stasis("reformat", "flipped.stasis")
    #expect(invalid.status == 1)
    #expect(invalid.err.contains("checksum mismatch"))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: fixtures.saves + "/spring").filter { $0.hasSuffix(".stasis") }
        .count == 3)
  }

  @Test(
    "reformat rewrites the committed format-1 fixture to format 2: it verifies, keeps every section and the old file")
  func reformatFormatOne() throws {
    let fixtures = try Fixtures()
    let fixture = packageRoot.appendingPathComponent("Tests/StasisTests/Fixtures/schema-v1.stasis")
    let original = try Data(contentsOf: fixture)
    let folder = fixtures.saves + "/fixture"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    try original.write(to: URL(fileURLWithPath: folder + "/0000000001.stasis"))

    let dryRun = try fixtures.stasis("reformat", "Saves/fixture/0000000001.stasis", "--dry-run")
    #expect(dryRun.out == "would reformat Saves/fixture/0000000001.stasis from format 1 to 2\n")
    let result = try fixtures.stasis("reformat", "Saves/fixture/0000000001.stasis")
    #expect(result.status == 0, "\(result.err)")
    #expect(result.out == "reformatted Saves/fixture/0000000001.stasis → $DIR/Saves/fixture/0000000002.stasis\n")
    #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/0000000001.stasis")) == original, "the old one stays")
    let oldName = try fixtures.stasis("migrate", "Saves/fixture/0000000001.stasis", "--dry-run")
    #expect(
      oldName.out == "would migrate Saves/fixture/0000000001.stasis from format 1 to 2\n",
      "under its old name, the old words: a script may read them")

    let verify = try fixtures.stasis("verify", "Saves/fixture/0000000002.stasis")
    #expect(verify.status == 0)
    #expect(verify.out.hasPrefix("ok      Saves/fixture/0000000002.stasis"))
    let inspect = try fixtures.stasis("inspect", "Saves/fixture/0000000002.stasis")
    #expect(inspect.out.contains("format:    2\n"))
    #expect(
      inspect.out.contains("summary:   level: 0\n           score: 4200\n"),
      "format 1's level and score are the summary")
    let migrated = try SaveFileFormat.decode(
      [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/0000000002.stasis"))))
    let old = try SaveFileFormat.decode([UInt8](original))
    #expect(migrated.sections == old.sections)
    #expect(migrated.summary == old.summary)
    #expect(migrated.createdAt == old.createdAt && migrated.game == old.game)
    let again = try fixtures.stasis("reformat", "Saves/fixture/0000000002.stasis")
    #expect(again.out == "up to date  Saves/fixture/0000000002.stasis (format 2)\n")
  }

  @Test("thumbnail: the stored one byte for byte; a save without one is refused and the demo draws its own")
  func thumbnail() throws {
    let fixtures = try Fixtures()
    // A stored thumbnail comes back exactly.
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3]
    let codec = SaveCodec<Garden>(game: GameIdentity(name: "garden"))
    let garden = Garden(plants: [], weather: [:], sprinklers: [])
    let store = SaveStore(directory: fixtures.saves)
    _ = try store.save(garden, codec: codec, slot: "pictured", summary: try gardenSummary(day: 0), thumbnail: png)
      .wait()
    let stored = try fixtures.stasis("thumbnail", "Saves/pictured/0000000001.stasis", "-o", "stored.png")
    #expect(stored.status == 0)
    #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("stored.png")))) == png)

    // A demo save with no thumbnail: the CLI (which knows no game) says so and names the demo's
    // renderer; `stasis-demo --render-thumbnail` draws a real 320 × 180 PNG from its state.
    let demo = try run(
      "stasis-demo",
      [
        "--headless", "--frames", "120", "--background-at", "100", "--terminate-in-background", "--saves",
        fixtures.saves,
      ])
    #expect(demo.status == 0)
    let file = fixtures.path("Saves/autosave/0000000001.stasis")
    let none = try fixtures.stasis("thumbnail", "Saves/autosave/0000000001.stasis", "-o", "none.png")
    #expect(none.status == 1)
    #expect(none.err.contains("the save has no thumbnail section"))
    #expect(none.err.contains("stasis-demo --render-thumbnail"))
    let drawn = try run(
      "stasis-demo", ["--render-thumbnail", file, "--output", fixtures.path("drawn.png")], in: packageRoot)
    #expect(drawn.status == 0, "\(drawn.stderr)")
    #expect(drawn.stdout.contains("drawn from the saved state"))
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("drawn.png"))))
    #expect(Array(bytes.prefix(8)) == Array(png.prefix(8)), "a PNG signature")
    #expect(Array(bytes[16..<24]) == [0, 0, 1, 0x40, 0, 0, 0, 0xB4], "320 × 180")

    let refused = try run(
      "stasis-demo", ["--render-thumbnail", fixtures.path("good.stasis"), "--output", fixtures.path("x.png")],
      in: packageRoot)
    #expect(refused.status == 1)
    #expect(refused.stderr.contains("written by 'garden', not 'stasis-demo'"))
  }

  @Test("inspect --key-file: signature valid, invalid or unsigned; without a key a signed save is not called valid")
  func inspectSignature() throws {
    let fixtures = try Fixtures()
    try fixtures.writeSigned()
    let header = """
      path:      signed.stasis
      format:    2
      game:      garden 2.1 (schema 3)
      created:   2026-01-01T00:00:00Z
      slot:      spring
      summary:   day:     3
                 harvest: 300
      play time: 180.0 s
      progress:  75 %
      device:    greenhouse
      frame:     10800

      """
    let sections = """

      section     encoding  bytes  checksum
      plants      tree        107  ok
      sprinklers  tree        112  ok
      weather     tree         58  ok


      """
    let noKey = try fixtures.stasis("inspect", "signed.stasis")
    #expect(noKey.status == 0)
    #expect(
      noKey.out
        == header + "signed:    yes (not checked: no key)\n" + sections
        + "intact (every checksum is right; the signature was not checked: no key)\n")
    #expect(!noKey.out.contains("valid"), "never reads as verified")

    let valid = try fixtures.stasis("inspect", "signed.stasis", "--key-file", "game.key")
    #expect(valid.status == 0)
    #expect(valid.out == header + "signature: valid\n" + sections + "valid\n")

    let invalid = try fixtures.stasis("inspect", "signed.stasis", "--key-file", "other.key")
    #expect(invalid.status == 1)
    #expect(
      invalid.out
        == header + "signature: invalid\n" + sections
        + "invalid: signed.stasis: signature mismatch in signature at byte 562: the HMAC-SHA256 signature does not match: the save was edited or signed with another key\n"
    )

    let unsigned = try fixtures.stasis("inspect", "good.stasis", "--key-file", "game.key")
    #expect(unsigned.status == 0)
    #expect(unsigned.out.contains("\nsignature: unsigned\n"))
    #expect(!unsigned.out.contains("signed:"))
    #expect(try fixtures.stasis("inspect", "good.stasis").out.contains("\nsigned:    no\n"))

    // --json: "signature" is valid, invalid, unsigned or not checked.
    func signature(_ arguments: String...) throws -> String? {
      let result = try fixtures.stasis(environment: [:], ["inspect", "--json"] + arguments)
      let object = try #require(try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any])
      #expect(object["signed"] is Bool)
      return object["signature"] as? String
    }
    #expect(try signature("signed.stasis", "--key-file", "game.key") == "valid")
    #expect(try signature("signed.stasis", "--key-file", "other.key") == "invalid")
    #expect(try signature("good.stasis", "--key-file", "game.key") == "unsigned")
    #expect(try signature("signed.stasis") == "not checked")
    #expect(try signature("good.stasis") == "unsigned")
  }

  @Test("verify --key-file: signed files checked; a wrong signature is INVALID and exit 1; no key is never `ok`")
  func verifySignature() throws {
    let fixtures = try Fixtures()
    try fixtures.writeSigned()
    let noKey = try fixtures.stasis("verify", "good.stasis", "signed.stasis")
    #expect(noKey.status == 0)
    expectGolden(noKey.out, "verifySignature.noKey")

    let key = try fixtures.stasis("verify", "--key-file", "game.key", "good.stasis", "signed.stasis")
    #expect(key.status == 0)
    expectGolden(key.out, "verifySignature.key")

    let wrong = try fixtures.stasis("verify", "--key-file", "other.key", "good.stasis", "signed.stasis")
    #expect(wrong.status == 1)
    expectGolden(wrong.out, "verifySignature.wrong")
    #expect(!wrong.out.contains("other.key") && !wrong.out.contains("someone else"), "the key is never printed")
  }

  @Test("verify: an unsigned file in a signed slot is INVALID, named so, with or without a key")
  func verifyUnsignedInSignedSlot() throws {
    let fixtures = try Fixtures()
    try fixtures.writeSigned()
    let key = SigningKey(bytes: Array("the garden's key, thirty-two b!!".utf8))
    let store = SaveStore(directory: fixtures.saves, signing: .signed(with: key, acceptingUnsigned: true))
    let signed = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("signed.stasis"))))
    let first = try store.save(fileBytes: signed, slot: "signed").wait()
    let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("good.stasis"))))
    let stripped = store.path(of: "signed", generation: first.generation + 1)
    try Data(good).write(to: URL(fileURLWithPath: stripped))
    for arguments in [["verify", stripped], ["verify", "--key-file", "game.key", stripped]] {
      let result = try fixtures.stasis(environment: [:], arguments)
      #expect(result.status == 1, "\(result.out)")
      #expect(result.out.contains(": not signed in signature: unsigned in a signed slot"), "\(result.out)")
    }
    #expect(try fixtures.stasis("verify", "good.stasis").status == 0, "outside a slot, unsigned is fine")
  }

  @Test("dump --key-file: a wrong signature is refused in one line; the signature's state goes to standard error")
  func dumpSignature() throws {
    let fixtures = try Fixtures()
    try fixtures.writeSigned()
    let weather = "{\n  \"rain\" : 3,\n  \"sun\" : 8\n}\n"
    let valid = try fixtures.stasis("dump", "signed.stasis", "--section", "weather", "--key-file", "game.key")
    #expect(valid.status == 0)
    #expect(valid.out == weather)
    #expect(valid.err == "signature: valid\n")

    let invalid = try fixtures.stasis("dump", "signed.stasis", "--key-file", "other.key")
    #expect(invalid.status == 1)
    #expect(invalid.out.isEmpty)
    #expect(
      invalid.err
        == "error: signed.stasis: signature mismatch in signature at byte 562: the HMAC-SHA256 signature does not match: the save was edited or signed with another key\n"
    )

    let unsigned = try fixtures.stasis("dump", "good.stasis", "--section", "weather", "--key-file", "game.key")
    #expect(unsigned.status == 0)
    #expect(unsigned.out == weather)
    #expect(unsigned.err == "signature: unsigned\n")

    let noKey = try fixtures.stasis("dump", "signed.stasis", "--section", "weather")
    #expect(noKey.status == 0)
    #expect(noKey.out == weather)
    #expect(noKey.err == "signed: yes (not checked: no key)\n")
    #expect(try fixtures.stasis("dump", "good.stasis", "--section", "weather").err.isEmpty)
  }

  @Test("STASIS_KEY_FILE names the key when --key-file is not given; --key-file wins; a bad key file is one line")
  func keyFileEnvironment() throws {
    let fixtures = try Fixtures()
    try fixtures.writeSigned()
    let fromEnvironment = try fixtures.stasis(
      environment: ["STASIS_KEY_FILE": "game.key"], ["verify", "signed.stasis"])
    #expect(fromEnvironment.status == 0)
    #expect(fromEnvironment.out == "ok      signed.stasis  signature: valid\n1 valid, 0 invalid\n")
    let wrong = try fixtures.stasis(environment: ["STASIS_KEY_FILE": "other.key"], ["inspect", "signed.stasis"])
    #expect(wrong.status == 1)
    #expect(wrong.out.contains("\nsignature: invalid\n"))
    let dumped = try fixtures.stasis(
      environment: ["STASIS_KEY_FILE": "game.key"], ["dump", "signed.stasis", "--section", "weather"])
    #expect(dumped.err == "signature: valid\n")
    let flagWins = try fixtures.stasis(
      environment: ["STASIS_KEY_FILE": "other.key"], ["verify", "--key-file", "game.key", "signed.stasis"])
    #expect(flagWins.status == 0)
    let empty = try fixtures.stasis(environment: ["STASIS_KEY_FILE": ""], ["verify", "signed.stasis"])
    #expect(empty.out.hasPrefix("intact  signed.stasis  signed: yes (not checked: no key)\n"))

    let short = try fixtures.stasis("verify", "--key-file", "short.key", "signed.stasis")
    #expect(short.status == 64)
    #expect(short.err == "error: short.key: a signing key file holds 16 to 4096 bytes; this one has 8\n")
    #expect(!short.err.contains("too shor"), "the key is never printed")
    let missing = try fixtures.stasis(environment: ["STASIS_KEY_FILE": "nowhere.key"], ["inspect", "signed.stasis"])
    #expect(missing.status == 74)
    #expect(missing.err == "error: nowhere.key: the signing key file could not be read\n")
    #expect(missing.out.isEmpty)
  }

  @Test("--help gives an example for every command; a bad flag is exit 64")
  func help() throws {
    let fixtures = try Fixtures()
    for command in [
      "inspect", "verify", "dump", "diff", "merge", "slots", "thumbnail", "recover", "reformat", "records", "cloud",
      "cloud login",
      "cloud status", "cloud push", "cloud pull", "cloud log", "cloud resolve", "cloud release", "cloud discard",
    ] {
      let result = try fixtures.stasis(environment: [:], command.split(separator: " ").map(String.init) + ["--help"])
      #expect(result.status == 0)
      #expect(result.out.contains("Example:"), "\(command) --help has an example")
      #expect(result.out.contains("USAGE: stasis \(command)"))
    }
    let root = try fixtures.stasis("--help")
    #expect(root.out.contains("Exit codes: 0 success or valid; 1 invalid, corrupt or different; 64 usage; 74"))
    #expect(try fixtures.stasis("inspect", "--bogus").status == 64)
    #expect(try fixtures.stasis("frobnicate").status == 64)
  }

  @Test(
    "merge: sections from each side, whole; conflicts listed and nothing written; --rule, --declarations and --take settle them"
  )
  func merge() throws {
    let fixtures = try Fixtures()
    let codec = SaveCodec<Garden>(game: GameIdentity(name: "garden", build: "2.1", schemaVersion: 3))
    let base = Garden(
      plants: [.init(kind: "tomato", height: 1, watered: false)], weather: ["rain": 1, "sun": 8],
      sprinklers: (0..<3).map { .init(x: Float($0), y: 1, flow: 5) })
    var ours = base
    ours.plants[0].height = 1.5  // ours only
    ours.sprinklers[1].flow = 7  // both
    var theirs = base
    theirs.weather["rain"] = 4  // theirs only
    theirs.sprinklers[1].flow = 9  // both
    theirs.sprinklers[2].flow = 6  // theirs only
    for (name, garden) in [("base", base), ("ours", ours), ("theirs", theirs)] {
      let document = try codec.document(for: garden, summary: SaveSummary(), createdAt: 1_767_225_600_000)
      try Data(SaveFileFormat.encode(document)).write(to: URL(fileURLWithPath: fixtures.path("\(name).stasis")))
    }
    let conflicting = try fixtures.stasis("merge", "base.stasis", "ours.stasis", "theirs.stasis", "-o", "out.stasis")
    #expect(conflicting.status == 1)
    expectGolden(conflicting.out, "merge.conflicting")
    #expect(
      conflicting.err
        == "nothing written: settle the conflicts with --rule PATH=RULE, --declarations FILE or --take ours|theirs|base\n"
    )
    #expect(!FileManager.default.fileExists(atPath: fixtures.path("out.stasis")), "nothing written")

    // Nothing declared: --take's side, whole — never ours' plants beside theirs' weather.
    let taken = try fixtures.stasis(
      "merge", "base.stasis", "ours.stasis", "theirs.stasis", "-o", "out.stasis", "--take", "theirs")
    #expect(taken.status == 1, "written, but values conflicted: \(taken.err)")
    #expect(taken.out.hasSuffix("merged → out.stasis (3 conflicting values settled by --take theirs)\n"))
    let merged = try codec.state(
      from: SaveFileFormat.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("out.stasis"))))))
    #expect(merged.plants[0].height == 1)
    #expect(merged.weather == ["rain": 4, "sun": 8])
    #expect(merged.sprinklers.map(\.flow) == [5, 9, 6])
    #expect(
      try fixtures.stasis("merge", "base.stasis", "ours.stasis", "theirs.stasis", "-o", "ours.out", "--take", "ours")
        .status == 1)
    let whole = try codec.state(
      from: SaveFileFormat.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("ours.out"))))))
    #expect(whole.sprinklers.map(\.flow) == [5, 7, 5])
    #expect(whole.plants[0].height == 1.5 && whole.weather == base.weather, "ours, whole")

    // Theirs from another game: refused as not mergeable, in one line, and nothing written.
    let stranger = try SaveCodec<Garden>(game: GameIdentity(name: "orchard", build: "1")).document(
      for: theirs, summary: SaveSummary(), createdAt: 1_767_225_600_000)
    try Data(SaveFileFormat.encode(stranger)).write(to: URL(fileURLWithPath: fixtures.path("orchard.stasis")))
    let refused = try fixtures.stasis("merge", "base.stasis", "ours.stasis", "orchard.stasis", "-o", "no.stasis")
    #expect(refused.status == 1)
    #expect(refused.err.hasPrefix("error: orchard.stasis: not mergeable in header: "), "\(refused.err)")
    #expect(!FileManager.default.fileExists(atPath: fixtures.path("no.stasis")))

    // The same declarations from a file: the sprinklers by index (theirs where both changed one),
    // the plants and the weather as a group, which both sides changed: --take's side, ours.
    try """
    # the garden's merge declarations
    sprinklers[*] = theirs
    group plants, weather   # what grows depends on the weather
    """.write(toFile: fixtures.path("garden.merge"), atomically: true, encoding: .utf8)
    let declared = try fixtures.stasis(
      "merge", "base.stasis", "ours.stasis", "theirs.stasis", "-o", "declared.stasis", "--declarations",
      "garden.merge", "--take", "ours")
    #expect(declared.status == 1, "the group was settled by --take: \(declared.err)")
    expectGolden(declared.out, "merge.declared")
    let grouped = try codec.state(
      from: SaveFileFormat.decode(
        try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("declared.stasis"))))))
    #expect(grouped.plants[0].height == 1.5)
    #expect(grouped.weather == base.weather, "with the group: ours' weather, which is the base's")
    #expect(grouped.sprinklers.map(\.flow) == [5, 9, 6])
    try "sprinklers = by-key\n".write(toFile: fixtures.path("bad.merge"), atomically: true, encoding: .utf8)
    let bad = try fixtures.stasis(
      "merge", "base.stasis", "ours.stasis", "theirs.stasis", "-o", "x.stasis", "--declarations", "bad.merge")
    #expect(bad.status == 64)
    let rules = "max, min, ours, theirs, union, by-index, by-entity or by-key FIELD"
    #expect(bad.err.contains("bad.merge, line 1: the rule is \(rules)"))

    // Every section declared: each merges on its own, and the merge is clean.
    let ruled = try fixtures.stasis(
      "merge", "base.stasis", "ours.stasis", "theirs.stasis", "-o", "ruled.stasis", "--rule", "sprinklers[*]=ours",
      "--rule", "plants=ours", "--rule", "weather=theirs", "--json")
    #expect(ruled.status == 0, "\(ruled.err)")
    let object = try JSONSerialization.jsonObject(with: Data(ruled.out.utf8)) as? [String: Any]
    let conflicts = object?["conflicts"] as? [[String: Any]]
    #expect(conflicts?.first?["path"] as? String == "sprinklers[1]")
    #expect(conflicts?.first?["settled"] as? String == "rule ours (sprinklers[*])")
    #expect(try fixtures.stasis("merge", "base.stasis", "ours.stasis", "flipped.stasis", "-o", "x.stasis").status == 1)
    #expect(try fixtures.stasis("merge", "a", "b", "c", "-o", "x", "--rule", "nonsense").status == 64)
    let ruledGarden = try codec.state(
      from: SaveFileFormat.decode(try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("ruled.stasis"))))))
    #expect(ruledGarden.plants[0].height == 1.5 && ruledGarden.weather["rain"] == 4)
    #expect(ruledGarden.sprinklers.map(\.flow) == [5, 7, 6])

    // A path, a key or a summary path the saves do not have: named, exit 64, nothing written.
    for (flag, value, named) in [
      ("--rule", "sprinkler[*]=ours", "'sprinkler[*]'"), ("--rule", "plants=by-key id", "'plants[*].id'"),
    ] {
      let typo = try fixtures.stasis(
        "merge", "base.stasis", "ours.stasis", "theirs.stasis", "-o", "typo.stasis", flag, value, "--take", "ours")
      #expect(typo.status == 64, "\(typo.err)")
      #expect(typo.err.contains("not in any of the three saves: \(named); nothing written"), "\(typo.err)")
      #expect(!FileManager.default.fileExists(atPath: fixtures.path("typo.stasis")))
    }
    // A merged save's summary from the merged state, by `summary FIELD = PATH`.
    try """
    plants = ours
    weather = theirs
    sprinklers[*] = ours
    summary rain = weather.rain
    summary tallest = plants
    """.write(toFile: fixtures.path("summary.merge"), atomically: true, encoding: .utf8)
    let summarized = try fixtures.stasis(
      "merge", "base.stasis", "ours.stasis", "theirs.stasis", "-o", "summarized.stasis", "--declarations",
      "summary.merge")
    #expect(summarized.status == 0, "\(summarized.err)")
    let header = try SaveFileFormat.decode(
      try [UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("summarized.stasis"))))
    ).summary.details
    #expect(header[field: "rain"] == .float64(4), "\(header)")
  }
}
