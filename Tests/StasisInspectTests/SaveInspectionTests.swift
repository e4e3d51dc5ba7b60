import Foundation
import Stasis
import StasisInspect
import StasisTestSupport
import Testing

/// A bulk array of `count` two-field elements (`x` f32, `id` u32); the elements at `moved`
/// have `x` one higher.
private func crowd(_ count: Int, moved: Set<Int> = []) -> SaveValue {
  let layout = BulkLayout(
    stride: 8,
    fields: [BulkField(name: "x", type: .float32, offset: 0), BulkField(name: "id", type: .uint32, offset: 4)])
  var bytes = [UInt8](repeating: 0, count: layout.stride * count)
  bytes.withUnsafeMutableBytes { raw in
    for index in 0..<count {
      let x = Float(index) * 0.5 + (moved.contains(index) ? 1 : 0)
      raw.storeBytes(of: x.bitPattern.littleEndian, toByteOffset: index * 8, as: UInt32.self)
      raw.storeBytes(of: UInt32(index).littleEndian, toByteOffset: index * 8 + 4, as: UInt32.self)
    }
  }
  return .bulk(BulkArray(layout: layout, count: count, bytes: bytes[...]))
}

/// A save with what the renderers treat apart: nested objects and arrays, a bulk array, a byte
/// string, strings to escape, non-finite floats, keys JSON sorts oddly, a raw section. `day`
/// changes its metadata and a few values; `moved` the bulk array's elements.
private func document(day: Int, moved: Set<Int> = []) throws -> SaveDocument {
  let monsters: [SaveValue] = (0..<(day == 1 ? 3 : 2)).map { index in
    .object(SaveObject([("id", .int64(Int64(index))), ("hp", .int32(Int32(10 * index + day)))]))
  }
  var camera: [(String, SaveValue)] = [("x", .float64(Double(day) * 1.5)), ("zoom", .float32(.infinity))]
  if day > 1 { camera.append(("shake", .bool(true))) }
  let notes = SaveValue.object(
    SaveObject([
      ("memo", .string("a \"quote\", a back\\slash, a tab\t, a newline\n, \u{1}, é, 😀")),
      ("B", .uint64(.max)), ("b", .int8(-3)), ("_", .null), ("10", .bool(false)), ("2", .float64(.nan)),
      ("empty", .object(SaveObject())), ("none", .array([])),
    ]))
  return SaveDocument(
    game: GameIdentity(name: "arena", build: "1.\(day)", schemaVersion: UInt32(day)), createdAt: 1_767_225_600_000,
    summary: SaveSummary(
      frame: Int64(day * 3600), playTime: 60 * Double(day), progress: Double(day) / 4, device: "test",
      details: .object(SaveObject([("wave", .int64(Int64(day)))]))),
    sections: [
      SaveSection(name: "camera", content: .tree(.object(SaveObject(camera)))),
      SaveSection(name: "monsters", content: .tree(.array(monsters))),
      SaveSection(name: "crowd", content: .tree(crowd(40, moved: moved))),
      SaveSection(name: "grid", content: .tree(.bytes((0..<16).map { UInt8($0 == 3 && day > 1 ? 9 : $0) }))),
      SaveSection(name: "notes", content: .tree(notes)),
      SaveSection(name: "thumbnail", content: .raw([0x89, 0x50, 0x4E, 0x47])),
    ])
}

/// Saves written into a fresh folder, and `stasis` run on them.
private struct Saves {
  let root: URL

  init() throws {
    root = try temporaryFolder()
  }

  /// Writes `document` as `name` and returns what the CLI will read back.
  func write(_ name: String, _ document: SaveDocument) throws -> SaveDocument {
    let bytes = SaveFileFormat.encode(document)
    try Data(bytes).write(to: root.appendingPathComponent(name))
    return try SaveFileFormat.decode(bytes)
  }

  /// What `stasis ARGUMENTS` prints to standard output, and its exit status.
  func stasis(_ arguments: String...) throws -> (status: Int32, out: String) {
    var environment = ProcessInfo.processInfo.environment
    environment["STASIS_KEY_FILE"] = nil
    let result = try run("stasis", arguments, in: root, environment: environment)
    return (result.status, result.stdout)
  }
}

@Suite("SaveInspection renders exactly what the stasis CLI prints")
struct SaveInspectionTests {
  @Test("dump is stasis dump's output, with bulk arrays summarised or, with allElements, listed")
  func dump() throws {
    let saves = try Saves()
    let save = try saves.write("day1.stasis", try document(day: 1))
    let printed = try saves.stasis("dump", "day1.stasis")
    #expect(printed.status == 0)
    #expect(SaveInspection.dump(save.tree) == printed.out)
    #expect(SaveInspection.dump(save.tree).contains("\"$bulk\" : {"))
    #expect(
      SaveInspection.dump(save.tree, allElements: true)
        == (try saves.stasis("dump", "day1.stasis", "--all-elements").out))
    let crowd = try #require(save.tree[field: "crowd"])
    #expect(SaveInspection.dump(crowd) == (try saves.stasis("dump", "day1.stasis", "--section", "crowd").out))
  }

  @Test("diff and diffJSON are stasis diff's and diff --json's output; differences count its lines")
  func diff() throws {
    let saves = try Saves()
    let old = try saves.write("day1.stasis", try document(day: 1))
    let new = try saves.write("day2.stasis", try document(day: 2, moved: [2, 3, 4, 9, 20, 21, 30, 39]))
    let printed = try saves.stasis("diff", "day1.stasis", "day2.stasis")
    #expect(printed.status == 1)
    #expect(SaveInspection.diff(old, new) == printed.out)
    #expect(SaveInspection.diffJSON(old, new) == (try saves.stasis("diff", "day1.stasis", "day2.stasis", "--json").out))
    #expect(
      SaveInspection.diff(old, new, allElements: true)
        == (try saves.stasis("diff", "day1.stasis", "day2.stasis", "--all-elements").out))

    let differences = SaveInspection.differences(old, new)
    #expect(printed.out.hasSuffix("\n\(differences.count) differences\n"))
    #expect(differences.map(\.text).joined(separator: "\n") + "\n\(differences.count) differences\n" == printed.out)
    #expect(SaveInspection.diff(differences) == printed.out)
    #expect(
      differences.map(\.path) == [
        "metadata.summary.wave", "metadata.playTime", "metadata.frame", "metadata.progress", "metadata.schemaVersion",
        "camera.x", "camera.shake", "monsters.count", "monsters[0].hp", "monsters[1].hp", "crowd", "grid",
      ])
    let shake = try #require(differences.first { $0.path == "camera.shake" })
    #expect(shake.old == nil && shake.new == .bool(true))
    #expect((shake.oldText, shake.newText) == ("(absent)", "true"))
    let crowd = try #require(differences.first { $0.path == "crowd" })
    #expect(crowd.text.hasPrefix("crowd: 8 of 40 elements differ, in 5 ranges: 2..<5, 9, 20..<22, 30, 39\n"))
  }

  @Test("two equal saves: no differences, as stasis diff says it")
  func noDifferences() throws {
    let saves = try Saves()
    let save = try saves.write("a.stasis", try document(day: 2))
    _ = try saves.write("b.stasis", try document(day: 2))
    let printed = try saves.stasis("diff", "a.stasis", "b.stasis")
    #expect(printed.status == 0)
    #expect(printed.out == "no differences\n")
    #expect(SaveInspection.differences(save, save).isEmpty)
    #expect(SaveInspection.diff(save, save) == "no differences\n")
    #expect(SaveInspection.diffJSON(save, save) == (try saves.stasis("diff", "a.stasis", "b.stasis", "--json").out))
  }
}
