import Foundation
import Stasis
import StasisDemoGame
import StasisTestSupport
import Testing

@Suite("The background budget, end to end")
struct BudgetTests {
  @Test("a save too slow for the budget expires: the previous save stays the newest valid one, nothing crashes")
  func expiredBudget() throws {
    let saves = try temporaryFolder().path
    let first = try run(
      "stasis-demo",
      [
        "--headless", "--level", "3", "--frames", "60", "--background-at", "30", "--terminate-in-background", "--saves",
        saves,
      ])
    #expect(first.status == 0, "\(first.stderr)")

    // ~210 KB at 20 KB/s cannot be written within half a second. (No replay: its batch, written
    // through the same slow disk, would be a second task the expiry cuts.)
    let slow = try run(
      "stasis-demo",
      [
        "--headless", "--level", "3", "--frames", "120", "--background-at", "60", "--foreground-at", "90",
        "--budget", "0.5", "--io-throttle", "20000", "--autosave", "0", "--json", "--no-replay", "--saves", saves,
      ])
    #expect(slow.status == 1, "a cancelled save is a failed save: exit 1")
    let summary = try #require(try JSONSerialization.jsonObject(with: Data(slow.stdout.utf8)) as? [String: Any])
    let episodes = try #require(summary["backgroundEpisodes"] as? [[String: Any]])
    #expect(episodes.count == 1)
    #expect(episodes.first?["outcome"] as? String == "expired")
    #expect(episodes.first?["cutTasks"] as? [String] == ["save autosave"])
    let failures = try #require(summary["saveFailures"] as? [[String: Any]])
    #expect(failures.first?["error"] as? String == "cancelled")
    #expect(summary["frame"] as? Int == 120, "the game played on after coming back")
    let events = summary["events"] as? [String] ?? []
    #expect(events.contains { $0.contains("kept the in-memory state") })

    let store = SaveStore(directory: saves)
    #expect(try store.generations(of: "autosave") == [1])
    let loaded = try store.load(codec: DemoSaveFormat.codec, slot: "autosave")
    #expect(loaded.state.level.runFrame == 30)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: saves + "/autosave").filter {
      $0.contains("tmp")
    }
    #expect(leftovers.isEmpty)
  }
}
