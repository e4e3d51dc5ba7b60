import Foundation
@_spi(Plumbing) import Stasis
import StasisDemoGame
import StasisTestSupport
import Testing

/// The reproduction: a newer build of the demo (schema + 1) wrote the slot's newest
/// generation; this build must neither load an older one silently nor rotate it away.
@Suite("The demo and a newer build's save")
struct NewerBuildTests {
  static let newer = SaveCodec<GameState>(
    game: GameIdentity(
      name: DemoSaveFormat.game.name, build: "next", schemaVersion: DemoSaveFormat.game.schemaVersion + 1))

  /// A slot with two generations of this build, then one of the newer build on top.
  private func slotWithNewerSave() throws -> (saves: String, newest: String, bytes: Data) {
    let saves = try temporaryFolder().path
    let first = try run("stasis-demo", ["--headless", "--frames", "120", "--autosave", "1", "--saves", saves])
    #expect(first.status == 0, "\(first.stderr)")
    let store = SaveStore(directory: saves)
    let loaded = try store.load(codec: DemoSaveFormat.codec, slot: "autosave")
    let receipt = try store.save(
      loaded.state, codec: Self.newer, slot: "autosave", summary: try loaded.state.summary()
    ).wait()
    return (saves, receipt.path, try Data(contentsOf: URL(fileURLWithPath: receipt.path)))
  }

  @Test("--resume on a slot whose newest save is from a newer schema exits 1 and names it in one line")
  func resumeRefuses() throws {
    let (saves, newest, _) = try slotWithNewerSave()
    let result = try run("stasis-demo", ["--headless", "--resume", "--frames", "200", "--saves", saves])
    #expect(result.status == 1)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 1, "one line: \(result.stderr)")
    #expect(lines.first?.contains("cannot resume slot 'autosave'") == true)
    #expect(lines.first?.contains("newer schema version") == true)
    #expect(lines.first?.contains(newest) == true)
    #expect(lines.first?.contains("update the game") == true)
  }

  @Test("new games on the older build save beside the newer build's file, which stays whole and kept")
  func sessionsKeepIt() throws {
    let (saves, newest, bytes) = try slotWithNewerSave()
    let newestGeneration = try #require(
      SaveStore.generationNumber(fileName: String(newest.split(separator: "/").last!)))
    for _ in 0..<3 {
      let result = try run(
        "stasis-demo", ["--headless", "--frames", "90", "--autosave", "0.5", "--json", "--saves", saves])
      #expect(result.status == 0, "a new game saves beside it: \(result.stderr)")
      let summary = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
      #expect((summary?["saveFailures"] as? [[String: Any]] ?? []).isEmpty)
    }
    #expect(try Data(contentsOf: URL(fileURLWithPath: newest)) == bytes)
    let store = SaveStore(directory: saves)
    #expect(store.keptGenerations(of: "autosave").map(\.generation).contains(newestGeneration))
    #expect(try store.generations(of: "autosave").count > 4, "the sessions' saves went beside it")
    #expect(
      try store.load(codec: Self.newer, slot: "autosave", generation: newestGeneration).path == newest,
      "the newer build still finds its save")
  }
}
