import Foundation
import Stasis
import StasisTestSupport
import Testing

/// `Examples/ECSGame`: an asteroids game on TinyECS, saved by entity, run as a player runs it.
@Suite("The ECS example game saves its world by entity")
struct ECSExampleTests {
  private func play(_ arguments: [String]) throws -> ProcessResult {
    let result = try run("stasis-example-ecs", ["--headless"] + arguments)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    return result
  }

  private func digest(_ result: ProcessResult) throws -> String {
    try #require(result.lines.last { $0.hasPrefix("digest: ") })
  }

  private func ids(_ result: ProcessResult, _ prefix: String) throws -> Set<Int> {
    let line = try #require(result.lines.first { $0.hasPrefix(prefix) })
    return Set(line.dropFirst(prefix.count).split(separator: " ").compactMap { Int($0) })
  }

  @Test(
    "a kill in the background and a cold start in which every entity got a new ECS id reach the uninterrupted digest")
  func killAndColdRestore() throws {
    let plain = try digest(try play(["--saves", try temporaryFolder().path, "--frames", "900", "--print-digest"]))
    let away = try play([
      "--saves", try temporaryFolder().path, "--frames", "900", "--background-at", "450", "--print-digest",
    ])
    #expect(try digest(away) == plain)

    let saves = try temporaryFolder().path
    let killed = try play([
      "--saves", saves, "--frames", "900", "--background-at", "450", "--terminate-in-background", "--print-ids",
    ])
    #expect(killed.lines.contains("killed in the background at frame 450"))
    let resumed = try play([
      "--saves", saves, "--frames", "900", "--resume", "--fresh-ids", "--print-ids", "--print-digest",
    ])
    #expect(resumed.lines.contains("load: restored generation 2 at frame 450"))
    let before = try ids(killed, "ids at the background save: ")
    let after = try ids(resumed, "ids after restore: ")
    #expect(before.count == after.count && before.count > 5)
    #expect(before.isDisjoint(with: after), "every entity should have a new ECS id")
    #expect(!resumed.lines.contains { $0.hasPrefix("restore: ") }, "no dangling reference")
    #expect(try digest(resumed) == plain)
  }

  @Test(
    "every run's replay verifies by stepping the world in place, across a kill too; a drift names the entity and component"
  )
  func replays() throws {
    let saves = try temporaryFolder().path
    _ = try play(["--saves", saves, "--frames", "600"])
    let replay = "\(saves)/replays/asteroids.stasis"
    let verified = try run("stasis-example-ecs", ["--verify-replay", replay])
    #expect(verified.status == 0, "\(verified.stdout)")
    #expect(verified.lines.contains { $0.hasPrefix("replay verified: 600 ticks from 0, 600 digests") })

    let drifted = try run("stasis-example-ecs", ["--verify-replay", replay, "--desync-at", "200"])
    #expect(drifted.status == 1)
    #expect(drifted.lines.first == "first divergence at tick 200")
    #expect(drifted.lines.contains { $0.hasPrefix("world[#1].motion.x: ") }, "\(drifted.stdout)")

    let killedSaves = try temporaryFolder().path
    _ = try play(["--saves", killedSaves, "--frames", "600", "--background-at", "300", "--terminate-in-background"])
    _ = try play(["--saves", killedSaves, "--frames", "600", "--resume", "--fresh-ids"])
    let across = try run("stasis-example-ecs", ["--verify-replay", "\(killedSaves)/replays/asteroids.stasis"])
    #expect(across.status == 0, "\(across.stdout)")
    #expect(across.lines.contains { $0.hasPrefix("replay verified: 600 ticks from 0") })
  }

  @Test(
    "two devices' saves merge by entity: one side's change alone is that side's state, bit for bit; both sides' spawns all stay"
  )
  func merges() throws {
    // The common base: a save at frame 300, copied to two devices.
    let base = try temporaryFolder().path
    _ = try play(["--saves", base, "--frames", "600", "--background-at", "300", "--terminate-in-background"])
    let baseFile = "\(base)/asteroids/0000000001.stasis"
    func device(_ arguments: [String]) throws -> (file: String, digest: String) {
      let folder = try temporaryFolder()
      try FileManager.default.createDirectory(
        at: folder.appendingPathComponent("asteroids"), withIntermediateDirectories: true)
      try FileManager.default.copyItem(atPath: baseFile, toPath: folder.path + "/asteroids/0000000001.stasis")
      let result = try play(["--saves", folder.path, "--resume", "--print-digest"] + arguments)
      let newest = try SaveStore(directory: folder.path).generations(of: "asteroids").first!
      return ("\(folder.path)/asteroids/\(String(format: "%010d", newest)).stasis", try digest(result))
    }
    func resumeMerged(_ file: String, frames: String) throws -> String {
      let folder = try temporaryFolder()
      try FileManager.default.createDirectory(
        at: folder.appendingPathComponent("asteroids"), withIntermediateDirectories: true)
      try FileManager.default.copyItem(atPath: file, toPath: folder.path + "/asteroids/0000000001.stasis")
      return try digest(try play(["--saves", folder.path, "--resume", "--frames", frames, "--print-digest"]))
    }
    func count(_ file: String) throws -> Int {
      let dump = try run("stasis", ["dump", file, "--section", "world"])
      let object = try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any]
      return try #require((object?["$world"] as? [String: Any])?["count"] as? Int)
    }

    let ours = try device(["--frames", "600"])
    let merged = try temporaryFolder().path + "/merged.stasis"
    let oneSided = try run(
      "stasis", ["merge", baseFile, ours.file, baseFile, "-o", merged, "--rule", "world=by-entity"])
    #expect(oneSided.status == 0, "\(oneSided.stdout)\(oneSided.stderr)")
    #expect(try resumeMerged(merged, frames: "600") == ours.digest)

    let theirs = try device(["--frames", "600", "--reseed", "2"])
    let both = try temporaryFolder().path + "/both.stasis"
    let twoSided = try run(
      "stasis", ["merge", baseFile, ours.file, theirs.file, "-o", both, "--rule", "world=by-entity", "--take", "ours"])
    #expect(twoSided.status == 1, "conflicts settled by --take: \(twoSided.stdout)\(twoSided.stderr)")
    #expect(FileManager.default.fileExists(atPath: both))
    #expect(twoSided.stdout.contains("world[#"), "conflicts are named by entity: \(twoSided.stdout)")
    #expect(try count(both) > max(try count(ours.file), try count(theirs.file)), "both devices' spawns stay")
    let onceMore = try resumeMerged(both, frames: "700")
    #expect(try resumeMerged(both, frames: "700") == onceMore)
  }
}

@Suite("The guide's FirebladeECS adoption is short")
struct WorldAdoptionSizeTests {
  @Test("the guide's adapter and registration are at most 40 lines (the Asteroids game's were 164)")
  func adapterLines() throws {
    let source = try String(
      contentsOf: packageRoot.appendingPathComponent("Examples/Snippets/WorldSnippets.swift"), encoding: .utf8)
    let lines = source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
    let start = try #require(lines.firstIndex { $0.hasPrefix("// MARK: The adapter and the registration") })
    let end = try #require(lines.firstIndex { $0.hasPrefix("// MARK: The state a save holds") })
    let code = lines[(start + 1)..<end].filter { !$0.isEmpty && !$0.hasPrefix("//") }
    #expect(code.count <= 40)
    #expect(code.count == 33, "the guide and the MARK say 33: \(code.count)")
  }
}
