import Foundation
import Stasis
import StasisTestSupport
import Testing

/// A shooter the CLI has never seen: its bullets are a bulk array, each with a `serial` that
/// names it from the frame it is fired to the frame it expires.
private struct Shooter: Codable, Sendable {
  struct Bullet: BulkStorable, Equatable {
    var serial: UInt32 = 0
    var x: Float = 0
    var y: Float = 0
    var ttl: UInt16 = 0
    static let bulkLayout = BulkLayout(
      of: Bullet.self, [.field("serial", \.serial), .field("x", \.x), .field("y", \.y), .field("ttl", \.ttl)])
  }
  var bullets: [Bullet]
  var frame: Int

  /// Six bullets in flight, serials 148 to 153.
  static let before = Shooter(
    bullets: (0..<6).map { Bullet(serial: 148 + UInt32($0), x: Float($0) * 2, y: 1, ttl: 30 - UInt16($0)) },
    frame: 100)

  /// A frame later: 148 expired, 157 was fired, the others flew on (their ttl down one) and
  /// stand an index lower.
  static var after: Shooter {
    var bullets = before.bullets.dropFirst().map { bullet in
      var bullet = bullet
      bullet.x += 0.5
      bullet.ttl -= 1
      return bullet
    }
    bullets.append(Bullet(serial: 157, x: 0, y: 2, ttl: 30))
    return Shooter(bullets: bullets, frame: 101)
  }
}

/// A folder for the shooter's saves, and `stasis` run inside it.
private struct ShooterFixtures {
  let root: URL
  static let codec = SaveCodec<Shooter>(game: GameIdentity(name: "shooter", build: "2.1", schemaVersion: 1))

  init() throws {
    root = try temporaryFolder()
    try write("before.stasis", Shooter.before)
    try write("after.stasis", Shooter.after)
  }

  func write(_ name: String, _ shooter: Shooter) throws {
    let document = try Self.codec.document(for: shooter, summary: SaveSummary(), createdAt: 1_767_225_600_000)
    try Data(SaveFileFormat.encode(document)).write(to: root.appendingPathComponent(name))
  }

  func write(_ name: String, text: String) throws {
    try Data(text.utf8).write(to: root.appendingPathComponent(name))
  }

  func stasis(_ arguments: String...) throws -> (status: Int32, out: String, err: String) {
    var environment = ProcessInfo.processInfo.environment
    environment["STASIS_KEY_FILE"] = nil
    let result = try run("stasis", arguments, in: root, environment: environment)
    return (result.status, result.stdout, result.stderr)
  }
}

@Suite("stasis diff pairs a bulk array's elements by key, as stasis merge pairs them")
struct CLIBulkKeyTests {
  @Test("diff --key serial: one expired bullet removed, one fired added, each that flew on changed, by serial")
  func diffBulkByKey() throws {
    let fixtures = try ShooterFixtures()
    let byIndex = try fixtures.stasis("diff", "before.stasis", "after.stasis")
    #expect(byIndex.status == 1)
    #expect(byIndex.out.contains("bullets: 6 of 6 elements differ"), "index by index without a key")

    let byKey = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--key", "serial")
    #expect(byKey.status == 1, "\(byKey.err)")
    #expect(byKey.err == "")
    expectGolden(byKey.out, "diffBulkByKey.byKey")
    #expect(!byKey.out.contains("serial "), "no two serials shown as one element: \(byKey.out)")

    let json = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--key", "serial", "--json")
    #expect(json.status == 1)
    let list = try #require(try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [[String: Any]])
    #expect(
      list.map { $0["path"] as? String } == [
        "bullets[serial=148]",
        "bullets[serial=149].x", "bullets[serial=149].ttl", "bullets[serial=150].x", "bullets[serial=150].ttl",
        "bullets[serial=151].x", "bullets[serial=151].ttl", "bullets[serial=152].x", "bullets[serial=152].ttl",
        "bullets[serial=153].x", "bullets[serial=153].ttl",
        "bullets[serial=157]",
        "frame",
      ])
    #expect(list.allSatisfy { Set($0.keys) == ["path", "old", "new"] }, "the shape of a keyed array of objects")
    let expired = try #require(list.first)
    #expect(expired["new"] is NSNull)
    let bullet = try #require(expired["old"] as? [String: Any])
    #expect(Set(bullet.keys) == ["serial", "x", "y", "ttl"])
    #expect(bullet["serial"] as? Int == 148 && bullet["ttl"] as? Int == 30)
    let fired = try #require(list.dropLast().last)
    #expect(fired["old"] is NSNull)
    #expect((fired["new"] as? [String: Any])?["serial"] as? Int == 157)
    #expect(list[1]["old"] as? Double == 2 && list[1]["new"] as? Double == 2.5)

    // The game's merge declarations pair the same array, with no --key: as stasis merge does.
    try fixtures.write("merge.txt", text: "# the shooter's merge\nbullets = by-key serial\n")
    let declared = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--declarations", "merge.txt")
    #expect(declared.status == 1)
    #expect(declared.out == byKey.out)
    #expect(declared.err == "")
    // A merge by the same declaration: ours fired 160 while theirs went a frame on; what the merge
    // took beyond theirs is 160, as the same pairing says.
    var ours = Shooter.before
    ours.bullets.append(Shooter.Bullet(serial: 160, x: 7, y: 3, ttl: 30))
    try fixtures.write("ours.stasis", ours)
    let merged = try fixtures.stasis(
      "merge", "before.stasis", "ours.stasis", "after.stasis", "-o", "merged.stasis", "--declarations", "merge.txt")
    #expect(merged.status == 0, "\(merged.out)\(merged.err)")
    let sinceTheirs = try fixtures.stasis("diff", "after.stasis", "merged.stasis", "--declarations", "merge.txt")
    #expect(sinceTheirs.out == "bullets[serial=160]: (absent) → {4 fields}\n1 difference\n", "\(sinceTheirs.out)")
  }

  @Test(
    "diff --key on a bulk array: a serial on two bullets or a float field falls back, warned; a field none has is 64")
  func diffBulkKeyFallbacks() throws {
    let fixtures = try ShooterFixtures()
    var twice = Shooter.after
    twice.bullets[3].serial = twice.bullets[2].serial  // two bullets 151
    try fixtures.write("twice.stasis", twice)
    let duplicate = try fixtures.stasis("diff", "before.stasis", "twice.stasis", "--key", "serial")
    #expect(duplicate.status == 1)
    #expect(duplicate.out.hasPrefix("bullets: 6 of 6 elements differ"), "\(duplicate.out)")
    #expect(
      duplicate.err
        == "warning: bullets: not paired by 'serial': serial 151 is on the new save's elements 2 and 3; "
        + "compared index by index\n")

    let float = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--key", "x")
    #expect(float.status == 1)
    #expect(float.out.hasPrefix("bullets: 6 of 6 elements differ"), "\(float.out)")
    #expect(
      float.err
        == "warning: bullets: not paired by 'x': it is a f32 field, and elements pair only by an integer or bool "
        + "field; compared index by index\n")

    let unknown = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--key", "id")
    #expect(unknown.status == 64)
    #expect(unknown.err.contains("--key id: no array of objects or bulk array in either save has a field 'id'"))
    try fixtures.write("typo.txt", text: "bullets = by-key serail\n")
    let typo = try fixtures.stasis("diff", "before.stasis", "after.stasis", "--declarations", "typo.txt")
    #expect(typo.status == 64)
    #expect(typo.err.contains("'bullets[*].serail'"), "\(typo.err)")
  }
}
