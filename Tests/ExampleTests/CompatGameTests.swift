import Foundation
import StasisTestSupport
import Testing

/// `Examples/Compat`: a roguelike written against 0.10.0's API, unchanged, built with today's
/// package (with deprecation warnings only: `scripts/compat.sh`), and run.
@Suite("A game written against 0.10.0 builds and runs on this release")
struct CompatGameTests {
  @Test(
    "0.10.0's calls (CloudSync, cloud.onEvent, CloudCredentials, state, outcome) run: play, background, return, quit, and again"
  )
  func runsTwice() throws {
    let saves = try temporaryFolder().path
    // Port 9 refuses: the game plays offline, as a player on a train does.
    let first = try run("stasis-compat", [saves, "http://127.0.0.1:9"])
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.lines.contains("turn 60, gold 180, depth 4"), "\(first.stdout)")
    #expect(first.lines.contains { $0.hasPrefix("cloud: offline") }, "cloud.onEvent hears the sync")
    #expect(first.lines.contains { $0.hasPrefix("event: hold: the game is held while the slot catches up") })
    #expect(!first.stdout.contains("cloud: cloud:"), "each event says its category once")
    let second = try run("stasis-compat", [saves, "http://127.0.0.1:9"])
    #expect(second.status == 0, "\(second.stderr)")
    // Which generation holds frame 60 depends on how many autosaves the worker wrote and how
    // many it superseded: the first run says it, and the second restores that one.
    let newest = first.lines.filter { $0.hasPrefix("event: save:") && $0.contains("at frame 60") }.compactMap {
      line -> Int? in
      guard let range = line.range(of: #"generation \d+"#, options: .regularExpression) else { return nil }
      return Int(line[range].dropFirst("generation ".count))
    }.last
    let generation = try #require(newest, "the first run saved frame 60: \(first.stdout)")
    #expect(
      second.lines.contains("event: load: restored generation \(generation) at frame 60"), "\(second.stdout)")
    #expect(second.lines.contains("turn 120, gold 360, depth 7"), "it went on from where the first run stopped")
  }
}
