import Foundation
import Stasis
import StasisTestSupport
import Testing

/// A city-builder the CLI has never seen: its agents are a bulk array (a million of them in the
/// benchmark's saves), its map a byte grid, and its books a ledger.
private struct City: Codable, Sendable {
  struct Agent: BulkStorable, Equatable {
    var x: Float = 0
    var y: Float = 0
    var home: UInt32 = 0
    var mood: UInt16 = 0
    var job: UInt8 = 0
    var asleep = false
    static let bulkLayout = BulkLayout(
      of: Agent.self,
      [
        .field("x", \.x), .field("y", \.y), .field("home", \.home), .field("mood", \.mood), .field("job", \.job),
        .field("asleep", \.asleep),
      ])
  }
  struct Entry: Codable {
    var day: Int
    var amount: Int
    var memo: String
  }
  var agents: [Agent]
  var grid: [UInt8]
  var ledger: [Entry]

  /// `count` agents on a `side` × `side` grid with `entries` ledger lines; the agents at
  /// `moved` stepped one tile east, and the tiles at `built` were built on.
  init(agents count: Int, side: Int = 8, entries: Int = 3, moved: [Int] = [], built: [Int] = []) {
    agents = (0..<count).map { (index: Int) -> Agent in
      let x = Float(index % 1000) * 0.5
      let y = Float(index / 1000) * 0.5
      return Agent(
        x: x, y: y, home: UInt32(index), mood: UInt16(index % 100), job: UInt8(index % 7), asleep: index % 2 == 0)
    }
    for index in moved { agents[index].x += 1 }
    grid = (0..<(side * side)).map { UInt8($0 % 4) }
    for tile in built { grid[tile] = 9 }
    ledger = (0..<entries).map { Entry(day: $0, amount: 100 * $0 - 50, memo: "day \($0)") }
  }
}

/// A folder for the city's saves, and `stasis` run inside it.
private struct CityFixtures {
  let root: URL
  static let codec = SaveCodec<City>(game: GameIdentity(name: "city", build: "0.9", schemaVersion: 1))

  init() throws {
    root = try temporaryFolder()
  }

  func path(_ name: String) -> String { root.appendingPathComponent(name).path }

  /// Writes `city` as `name`.
  func write(_ name: String, _ city: City) throws {
    let document = try Self.codec.document(for: city, summary: SaveSummary(), createdAt: 1_767_225_600_000)
    try Data(SaveFileFormat.encode(document)).write(to: root.appendingPathComponent(name))
  }

  /// Writes a document built by hand (bytes a game's encoder would not write).
  func write(_ name: String, sections: [(String, SaveValue)]) throws {
    let document = SaveDocument(
      game: GameIdentity(name: "city", build: "0.9"), createdAt: 1_767_225_600_000, summary: SaveSummary(),
      sections: sections.map { SaveSection(name: $0.0, content: .tree($0.1)) })
    try Data(SaveFileFormat.encode(document)).write(to: root.appendingPathComponent(name))
  }

  func stasis(_ arguments: String...) throws -> (status: Int32, out: String, err: String) {
    var environment = ProcessInfo.processInfo.environment
    environment["STASIS_KEY_FILE"] = nil
    let result = try run("stasis", arguments, in: root, environment: environment)
    return (result.status, result.stdout, result.stderr)
  }
}

/// Parses JSON text, failing the test when it is not JSON.
private func parse(_ text: String) throws -> Any {
  try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
}

/// The agents moved between the saves of `diff`'s tests: eleven runs, the first of three agents.
private let movedAgents = [3, 4, 5, 10, 20, 21, 30, 40, 50, 60, 70, 80, 90, 91, 92, 99]

@Suite("stasis on bulk arrays: summaries by default, every element with --all-elements")
struct CLIBulkArrayTests {
  @Test("dump summarises a bulk array: its count, stride, fields and first five elements")
  func dumpSummary() throws {
    let fixtures = try CityFixtures()
    try fixtures.write("city.stasis", City(agents: 1000))
    let result = try fixtures.stasis("dump", "city.stasis", "--section", "agents")
    #expect(result.status == 0, "\(result.err)")
    expectGolden(result.out, "dumpSummary.result")
    let whole = try #require(try parse(try fixtures.stasis("dump", "city.stasis").out) as? [String: Any])
    #expect(Set(whole.keys) == ["agents", "grid", "ledger"])
    #expect((whole["ledger"] as? [[String: Any]])?.count == 3, "arrays of objects are not bulk arrays: whole")
    #expect(whole["grid"] as? String == Data(City(agents: 0).grid).base64EncodedString())
  }

  @Test("dump --all-elements prints every element, byte for byte what JSONSerialization writes for the tree")
  func dumpAllElements() throws {
    let fixtures = try CityFixtures()
    // Floats JSON writes in many ways, keys it sorts oddly, strings it escapes, empty containers.
    let layout = BulkLayout(
      stride: 24,
      fields: [
        BulkField(name: "Zeta", type: .float32, offset: 0), BulkField(name: "alpha", type: .float64, offset: 4),
        BulkField(name: "x10", type: .int64, offset: 12), BulkField(name: "x9", type: .uint16, offset: 20),
        BulkField(name: "on", type: .bool, offset: 22), BulkField(name: "é", type: .int8, offset: 23),
      ])
    let floats: [Float] = [0.1, -0.0, .nan, 1e20, 16_777_216, -.infinity, 3]
    let doubles: [Double] = [1e-7, 123_456_789.123, .infinity, 1e16, 1e15, -2.5, 0]
    var bytes = [UInt8](repeating: 0, count: layout.stride * floats.count)
    bytes.withUnsafeMutableBytes { raw in
      for index in floats.indices {
        let base = index * layout.stride
        raw.storeBytes(of: floats[index].bitPattern.littleEndian, toByteOffset: base, as: UInt32.self)
        raw.storeBytes(of: doubles[index].bitPattern.littleEndian, toByteOffset: base + 4, as: UInt64.self)
        raw.storeBytes(of: (Int64.min + Int64(index)).littleEndian, toByteOffset: base + 12, as: Int64.self)
        raw.storeBytes(of: UInt16(65_535 - index).littleEndian, toByteOffset: base + 20, as: UInt16.self)
        raw[base + 22] = UInt8(index % 2)
        raw[base + 23] = UInt8(bitPattern: Int8(-index))
      }
    }
    let bulk = SaveValue.bulk(BulkArray(layout: layout, count: floats.count, bytes: bytes[...]))
    let notes = SaveValue.object(
      SaveObject([
        ("memo", .string("a \"quote\", a back\\slash, a/slash, a tab\t, a newline\n, \u{1}, \u{1F}, é, 😀")),
        ("B", .uint64(.max)), ("b", .int8(-3)), ("_", .null), ("10", .bool(false)), ("2", .float64(-0.0)),
        ("empty", .object(SaveObject())), ("none", .array([])), ("bytes", .bytes([0, 1, 254, 255])),
        ("nested", .array([.object(SaveObject([("crowd", bulk), ("n", .uint32(7))])), .array([.string("")])])),
      ]))
    try fixtures.write("odd.stasis", sections: [("agents", bulk), ("notes", notes)])

    let result = try fixtures.stasis("dump", "odd.stasis", "--all-elements")
    #expect(result.status == 0, "\(result.err)")
    let tree = try SaveFileFormat.decode([UInt8](Data(contentsOf: URL(fileURLWithPath: fixtures.path("odd.stasis")))))
      .tree
    let expected = try JSONSerialization.data(
      withJSONObject: tree.jsonObject, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    #expect(result.out == String(decoding: expected, as: UTF8.self) + "\n")
    // The same tree summarised is JSON too, with the bulk array nested in an array summarised.
    let summary = try #require(try parse(try fixtures.stasis("dump", "odd.stasis").out) as? [String: Any])
    let nested = try #require(((summary["notes"] as? [String: Any])?["nested"] as? [Any])?.first as? [String: Any])
    let crowd = try #require((nested["crowd"] as? [String: Any])?["$bulk"] as? [String: Any])
    #expect(crowd["count"] as? Int == 7)
    #expect((crowd["first"] as? [Any])?.count == 5)
  }

  @Test("dump --all-elements streams every element of a bulk array of 20,000, in order")
  func dumpStreamsElements() throws {
    let fixtures = try CityFixtures()
    let city = City(agents: 20_000)
    try fixtures.write("city.stasis", city)
    let result = try fixtures.stasis("dump", "city.stasis", "--section", "agents", "--all-elements")
    #expect(result.status == 0)
    let agents = try #require(try parse(result.out) as? [[String: Any]])
    #expect(agents.count == 20_000)
    #expect(agents.map { $0["home"] as? Int } == city.agents.map { Int($0.home) })
    #expect(agents[19_999]["x"] as? Double == Double(city.agents[19_999].x))
  }

  @Test("diff: a bulk array's changed ranges (the first ten, then how many more) and first five elements")
  func diffSummary() throws {
    let fixtures = try CityFixtures()
    try fixtures.write("before.stasis", City(agents: 100))
    try fixtures.write("after.stasis", City(agents: 100, moved: movedAgents, built: [2, 3, 40]))
    let text = try fixtures.stasis("diff", "before.stasis", "after.stasis")
    #expect(text.status == 1)
    expectGolden(text.out, "diffSummary.text")

    let json = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--json")
    let list = try #require(try parse(json.out) as? [[String: Any]])
    #expect(list.map { $0["path"] as? String } == ["agents", "grid"])
    let agents = try #require(list.first?["bulk"] as? [String: Any])
    #expect(
      Set(agents.keys) == ["oldCount", "newCount", "differingElements", "changedRanges", "moreRanges", "first"])
    #expect(agents["differingElements"] as? Int == 16)
    #expect(
      agents["changedRanges"] as? [[Int]] == [
        [3, 6], [10, 11], [20, 22], [30, 31], [40, 41], [50, 51], [60, 61], [70, 71], [80, 81], [90, 93],
      ])
    #expect(agents["moreRanges"] as? Int == 1)
    let first = try #require(agents["first"] as? [[String: Any]])
    #expect(first.map { $0["index"] as? Int } == [3, 4, 5, 10, 20])
    let field = try #require((first.first?["fields"] as? [[String: Any]])?.first)
    #expect(field["field"] as? String == "x")
    #expect(field["old"] as? Double == 1.5)
    #expect(field["new"] as? Double == 2.5)
  }

  @Test("diff --all-elements: every changed range and every differing element, in text and JSON")
  func diffAllElements() throws {
    let fixtures = try CityFixtures()
    try fixtures.write("before.stasis", City(agents: 100))
    try fixtures.write("after.stasis", City(agents: 100, moved: movedAgents))
    let text = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--all-elements")
    #expect(text.status == 1)
    let lines = text.out.split(separator: "\n").map(String.init)
    #expect(
      lines.first
        == "agents: 16 of 100 elements differ, in 11 ranges: 3..<6, 10, 20..<22, 30, 40, 50, 60, 70, 80, 90..<93, 99"
    )
    let city = City(agents: 100)
    #expect(
      Array(lines.dropFirst().dropLast())
        == movedAgents.map { "  [\($0)] x \(city.agents[$0].x) → \(city.agents[$0].x + 1)" })
    #expect(lines.last == "1 difference")

    let json = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--json", "--all-elements")
    let bulk = try #require((try parse(json.out) as? [[String: Any]])?.first?["bulk"] as? [String: Any])
    #expect((bulk["changedRanges"] as? [[Int]])?.count == 11)
    #expect(bulk["moreRanges"] as? Int == 0)
    #expect((bulk["first"] as? [[String: Any]])?.map { $0["index"] as? Int } == movedAgents)
  }

  @Test("diff: elements only one side has are one range, each listed with its absent side")
  func diffCountChange() throws {
    let fixtures = try CityFixtures()
    try fixtures.write("small.stasis", City(agents: 10))
    try fixtures.write("grown.stasis", City(agents: 12, moved: [9]))
    let result = try fixtures.stasis("diff", "small.stasis", "grown.stasis")
    #expect(result.status == 1)
    #expect(
      result.out.hasPrefix(
        """
        agents: 3 of 12 elements differ (count 10 → 12), in 1 range: 9..<12
          [9] x 4.5 → 5.5
          [10] x (absent) → 5.0, y (absent) → 0.0, home (absent) → 10, mood (absent) → 10, job (absent) → 3, asleep (absent) → true
          [11] x (absent) → 5.5, y (absent) → 0.0, home (absent) → 11, mood (absent) → 11, job (absent) → 4, asleep (absent) → false

        """), "\(result.out)")
  }

  @Test("diff: bytes that differ only in padding, or two true bools, are no difference")
  func diffPaddingIsNoDifference() throws {
    let fixtures = try CityFixtures()
    // Two fields in an 8-byte stride: a u16 at 0 and a bool at 4; bytes 2, 3, 5, 6, 7 are padding.
    let layout = BulkLayout(
      stride: 8,
      fields: [BulkField(name: "id", type: .uint16, offset: 0), BulkField(name: "on", type: .bool, offset: 4)])
    func bulk(_ bytes: [UInt8]) -> SaveValue {
      .bulk(BulkArray(layout: layout, count: bytes.count / 8, bytes: bytes[...]))
    }
    let old: [UInt8] = [1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0]
    var padding = old
    padding[2] = 0xAA  // element 0's padding
    padding[20] = 7  // element 2's bool: 7 is true, as 1 is
    padding[15] = 0xFF  // element 1's padding
    var changed = padding
    changed[8] = 5  // element 1's id
    try fixtures.write("old.stasis", sections: [("units", bulk(old))])
    try fixtures.write("padding.stasis", sections: [("units", bulk(padding))])
    try fixtures.write("changed.stasis", sections: [("units", bulk(changed))])
    let same = try fixtures.stasis("diff", "old.stasis", "padding.stasis")
    #expect(same.status == 0)
    #expect(same.out == "no differences\n")
    let different = try fixtures.stasis("diff", "old.stasis", "changed.stasis")
    #expect(different.status == 1)
    #expect(different.out == "units: 1 of 3 elements differ, in 1 range: 1\n  [1] id 2 → 5\n1 difference\n")
  }

  @Test("merge summarises a conflicting bulk array: each side's changes since the base, and $bulk in --json")
  func mergeSummary() throws {
    let fixtures = try CityFixtures()
    try fixtures.write("base.stasis", City(agents: 50))
    try fixtures.write("ours.stasis", City(agents: 50, moved: [1, 2, 30]))
    try fixtures.write("theirs.stasis", City(agents: 50, moved: [7]))
    let text = try fixtures.stasis("merge", "base.stasis", "ours.stasis", "theirs.stasis", "-o", "out.stasis")
    #expect(text.status == 1)
    expectGolden(text.out, "mergeSummary.text")

    let json = try fixtures.stasis(
      "merge", "base.stasis", "ours.stasis", "theirs.stasis", "-o", "out.stasis", "--json", "--take", "theirs")
    #expect(json.status == 1, "settled by --take: written, exit 1")
    let object = try #require(try parse(json.out) as? [String: Any])
    #expect(object["written"] as? String == "out.stasis")
    let conflict = try #require((object["conflicts"] as? [[String: Any]])?.first)
    #expect(conflict["path"] as? String == "agents")
    #expect(conflict["settled"] as? String == "policy: theirs")
    let base = try #require((conflict["base"] as? [String: Any])?["$bulk"] as? [String: Any])
    #expect(Set(base.keys) == ["count", "stride", "fields", "first"])
    #expect(base["count"] as? Int == 50 && base["stride"] as? Int == 16)
    let ours = try #require((conflict["ours"] as? [String: Any])?["$bulk"] as? [String: Any])
    let sinceBase = try #require(ours["sinceBase"] as? [String: Any])
    #expect(sinceBase["changedRanges"] as? [[Int]] == [[1, 3], [30, 31]])
    #expect(sinceBase["differingElements"] as? Int == 3)
    let theirs = try #require((conflict["theirs"] as? [String: Any])?["$bulk"] as? [String: Any])
    #expect((theirs["sinceBase"] as? [String: Any])?["changedRanges"] as? [[Int]] == [[7, 8]])

    let all = try fixtures.stasis(
      "merge", "base.stasis", "ours.stasis", "theirs.stasis", "-o", "all.stasis", "--json", "--take", "theirs",
      "--all-elements")
    let full = try #require(((try parse(all.out) as? [String: Any])?["conflicts"] as? [[String: Any]])?.first)
    let oursElements = try #require(full["ours"] as? [[String: Any]])
    #expect(oursElements.count == 50)
    #expect(oursElements[30]["x"] as? Double == 16)
    #expect((full["theirs"] as? [[String: Any]])?[7]["x"] as? Double == 4.5)
  }

  @Test("dump, diff and merge take the same --all-elements flag, and their --help documents the summary's keys")
  func helpNamesTheFlag() throws {
    let fixtures = try CityFixtures()
    for (command, keys) in [
      ("dump", ["$bulk", "count", "stride", "fields", "first"]),
      ("diff", ["changedRanges", "moreRanges", "differingElements", "first"]),
      ("merge", ["$bulk", "sinceBase", "changedRanges"]),
    ] {
      let help = try fixtures.stasis(command, "--help")
      #expect(help.status == 0)
      #expect(help.out.contains("--all-elements"), "\(command)")
      for key in keys { #expect(help.out.contains(key), "\(command) --help names \(key)") }
    }
  }
}
