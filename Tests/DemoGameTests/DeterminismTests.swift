import Foundation
import StasisTestSupport
import Testing

/// The headless runner's promises, checked on the built executable.
@Suite("Determinism across save, kill and restore", .serialized)
struct DeterminismTests {
  static let cases: [(level: Int, seed: Int, frames: Int, at: Int)] = [
    (1, 1, 600, 250), (1, 7, 480, 100), (2, 3, 600, 301), (2, 11, 420, 60), (3, 1, 300, 120), (3, 9, 240, 200),
  ]

  private func digest(_ arguments: [String]) throws -> String {
    let result = try run("stasis-demo", ["--headless", "--print-digest"] + arguments)
    #expect(result.status == 0, "\(arguments): \(result.stderr)")
    let last = try #require(result.lines.last)
    #expect(last.hasPrefix("digest: ") && last.count == 8 + 64, "last line: \(last)")
    return String(last.dropFirst(8))
  }

  @Test(
    "--frames N gives the same digest uninterrupted, with a background round trip, and after a kill and a cold --resume",
    arguments: cases.indices)
  func sameDigest(_ index: Int) throws {
    let (level, seed, frames, at) = Self.cases[index]
    let common = ["--level", "\(level)", "--seed", "\(seed)", "--frames", "\(frames)", "--autosave", "0"]
    let plain = try digest(common + ["--saves", try temporaryFolder().path])
    let roundTrip = try digest(
      common + ["--background-at", "\(at)", "--foreground-at", "\(at)", "--saves", try temporaryFolder().path])
    #expect(roundTrip == plain, "level \(level) seed \(seed): background round trip at \(at)")

    let saves = try temporaryFolder().path
    let killed = try run(
      "stasis-demo",
      ["--headless", "--json", "--background-at", "\(at)", "--terminate-in-background", "--saves", saves] + common)
    #expect(killed.status == 0, "\(killed.stderr)")
    let summary = try JSONSerialization.jsonObject(with: Data(killed.stdout.utf8)) as? [String: Any]
    #expect(summary?["frame"] as? Int == at, "the killed run stopped at the background step")
    let resumed = try digest(["--resume", "--frames", "\(frames)", "--saves", saves])
    #expect(resumed == plain, "level \(level) seed \(seed): kill at \(at) then a cold --resume")
  }

  @Test("different seeds play differently")
  func seedsMatter() throws {
    let a = try digest(["--seed", "1", "--frames", "300", "--saves", try temporaryFolder().path])
    let b = try digest(["--seed", "2", "--frames", "300", "--saves", try temporaryFolder().path])
    #expect(a != b)
  }

  @Test("--sync-test 8 passes over 600 steps of every level", arguments: [1, 2, 3])
  func syncTest(_ level: Int) throws {
    let result = try run(
      "stasis-demo",
      [
        "--headless", "--level", "\(level)", "--frames", "600", "--sync-test", "8", "--autosave", "0", "--saves",
        try temporaryFolder().path,
      ])
    #expect(result.status == 0, "\(result.stderr)")
  }

  @Test("--resume on an empty slot exits 1 naming what failed")
  func resumeNothing() throws {
    let saves = try temporaryFolder().path
    let result = try run("stasis-demo", ["--headless", "--resume", "--saves", saves])
    #expect(result.status == 1)
    #expect(result.stderr.contains("cannot resume slot 'autosave'"))
    #expect(result.stderr.contains("has no saves"))
  }

  @Test("--resume past the requested frame exits 0 right after the restore")
  func resumePastEnd() throws {
    let saves = try temporaryFolder().path
    _ = try run(
      "stasis-demo",
      ["--headless", "--frames", "200", "--background-at", "150", "--terminate-in-background", "--saves", saves])
    let result = try run("stasis-demo", ["--headless", "--resume", "--frames", "100", "--json", "--saves", saves])
    #expect(result.status == 0)
    let summary = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
    #expect(summary?["frame"] as? Int == 150)
  }
}
