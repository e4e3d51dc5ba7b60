import Foundation
import Stasis
import Testing

@testable import ServerTestSupport

/// Issue 28's "the demo shows it": the canvas level (a 12.6 MB state that changes little) on a
/// throttled link, against a real stasis-server.
@Suite("stasis-demo --upload-rate: the canvas level's background upload on a slow link", .serialized)
struct DemoUploadRateTests {
  /// The background budget of the measured episode, seconds.
  static let budget = 2.0
  /// The link: 2 MB/s, so the 12.6 MB file needs more than 6 s, three budgets.
  static let rate = 2_000_000

  /// One device of one player: its save folder and the flags every run of it shares.
  struct Device {
    let saves: String
    let flags: [String]

    init(root: URL, name: String, server: ServerProcess, token: String) throws {
      saves = root.appendingPathComponent(name).path
      let tokenFile = root.appendingPathComponent("\(name).token")
      try Data(token.utf8).write(to: tokenFile)
      flags = [
        "--saves", saves, "--device", name, "--cloud", server.base, "--token-file", tokenFile.path, "--autosave", "0",
        "--sync-patience", "300",
      ]
    }

    /// Level 4 for two seconds; the quit's save goes up whole as revision 1, on a fast link
    /// and with all the time it needs: outside the episode measured.
    func firstRun() throws -> [String: Any] {
      let run = try demo(flags + ["--level", "4", "--frames", "120", "--budget", "300"])
      #expect(run.status == 0, "\(run.err)")
      let cloud = run.json["cloud"] as? [String: Any]
      #expect(cloud?["uploaded"] as? [Int] == [1], "\(run.err)")
      return run.json
    }

    /// A cold start from revision 1, a second of play, then the background on the slow link,
    /// within the budget; the OS kills the app once the episode ends.
    func backgroundOnSlowLink(_ extra: [String] = []) throws -> (status: Int32, json: [String: Any], err: String) {
      try demo(
        flags + [
          "--resume", "--frames", "300", "--background-at", "180", "--terminate-in-background", "--budget",
          "\(DemoUploadRateTests.budget)", "--upload-rate", "\(DemoUploadRateTests.rate)",
        ] + extra)
    }

    /// The newest generation's file, as the device has it.
    func newestFile() throws -> [UInt8] {
      let store = SaveStore(directory: saves)
      let newest = try #require(try store.generations(of: "autosave").first)
      return try store.readBytes(at: store.path(of: "autosave", generation: newest))
    }
  }

  static func episode(_ json: [String: Any]) throws -> [String: Any] {
    let episodes = try #require(json["backgroundEpisodes"] as? [[String: Any]])
    #expect(episodes.count == 1)
    return try #require(episodes.first)
  }

  static func transferred(_ json: [String: Any]) throws -> [String: Int] {
    let cloud = try #require(json["cloud"] as? [String: Any])
    return try #require(cloud["transferred"] as? [String: Int])
  }

  @Test("the delta goes up inside a 2 s budget where the whole file cannot; a cut whole upload goes up later")
  func deltaFitsWholeDoesNot() async throws {
    let database = try Database(.sqlite)
    let server = try ServerProcess(database)
    defer { server.stop() }
    let root = temporaryURL("stasis-rate")
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)

    // Deltas (the default): the second episode completes, and the server has the save.
    let alice = try database.addPlayer()
    let deltas = try Device(root: root, name: "deltas", server: server, token: alice.token)
    let first = try deltas.firstRun()
    let whole = try Self.transferred(first)
    #expect(whole["bytesSent"] == whole["fileBytesUploaded"], "the first revision goes whole")
    let fileBytes = try #require(whole["fileBytesUploaded"])
    #expect(
      Double(fileBytes) / Double(Self.rate) >= 2 * Self.budget,
      "the premise: the whole file takes at least two budgets on this link")

    let delta = try deltas.backgroundOnSlowLink()
    #expect(delta.status == 0, "\(delta.err)")
    let episode = try Self.episode(delta.json)
    #expect(episode["outcome"] as? String == "completed", "\(episode)")
    #expect((episode["durationMs"] as? Double ?? .infinity) < Self.budget * 1000)
    let sent = try Self.transferred(delta.json)
    #expect(sent["filesUploaded"] == 1)
    #expect((sent["bytesSent"] ?? .max) < fileBytes / 100, "a second of play: \(sent)")
    #expect((delta.json["cloud"] as? [String: Any])?["uploaded"] as? [Int] == [2])
    let client = Client(base: server.base, token: alice.token)
    let head = try await client.send(.GET, "/v1/slots/autosave")
    #expect(head.status == 200)
    #expect(head.headers.first { $0.0.lowercased() == "etag" }?.1 == "\"2\"")
    #expect(head.body == (try deltas.newestFile()), "the server's head is the device's newest save, byte for byte")

    // Whole files: the same episode runs out of budget; the upload is cut, the save stays queued.
    let bob = try database.addPlayer()
    let wholeFiles = try Device(root: root, name: "whole", server: server, token: bob.token)
    _ = try wholeFiles.firstRun()
    let cut = try wholeFiles.backgroundOnSlowLink(["--whole-uploads"])
    #expect(cut.status == 0, "the save itself is durable: \(cut.err)")
    let expired = try Self.episode(cut.json)
    #expect(expired["outcome"] as? String == "expired", "\(expired)")
    #expect(expired["cutTasks"] as? [String] == ["upload autosave"])
    let cutCloud = try #require(cut.json["cloud"] as? [String: Any])
    #expect(cutCloud["uploaded"] as? [Int] == [])
    #expect(cutCloud["pending"] as? Int == 1, "queued for the next time")
    #expect((cut.json["saves"] as? [[String: Any]])?.first?["outcome"] as? String == "written")
    let bobClient = Client(base: server.base, token: bob.token)
    let stale = try await bobClient.send(.GET, "/v1/slots/autosave")
    #expect(stale.headers.first { $0.0.lowercased() == "etag" }?.1 == "\"1\"", "nothing half-sent became a revision")

    // The next launch (a fast link) sends what was cut: nothing is lost.
    let later = try demo(wholeFiles.flags + ["--resume", "--frames", "180"])
    #expect(later.status == 0, "\(later.err)")
    #expect((later.json["cloud"] as? [String: Any])?["uploaded"] as? [Int] == [2])
    let caughtUp = try await bobClient.send(.GET, "/v1/slots/autosave")
    #expect(caughtUp.headers.first { $0.0.lowercased() == "etag" }?.1 == "\"2\"")
    #expect(caughtUp.body == (try wholeFiles.newestFile()))
  }
}
