import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Stasis
import Synchronization
import Testing

@testable import ServerTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Uploads that race (through the server's router in this process), servers that share a
/// database, and servers that are killed mid-upload.
@Suite("stasis-server: concurrency and durability", .serialized)
struct ServerConcurrencyTests {
  /// Saves that differ from one another: the same bytes sent twice on one base are one upload
  /// and its retry, answered with the same revision (`FailoverTests`).
  private static let distinct: [[UInt8]] = (0..<32).map { try! DemoSaves.save(level: 1, steps: 40 + $0) }

  /// `count` uploads of different saves on the same base at once, spread over `clients`; the statuses.
  private func race(_ clients: [Client], slot: String, base: Int64, count: Int) async throws -> [Int] {
    try await withThrowingTaskGroup(of: Int.self) { group in
      for index in 0..<count {
        let client = clients[index % clients.count]
        group.addTask { try await client.put(slot, Self.distinct[index % Self.distinct.count], ifMatch: base).status }
      }
      return try await group.reduce(into: []) { $0.append($1) }
    }
  }

  @Test(
    "32 uploads on the same base at once: exactly one 201, every other 412, round after round",
    arguments: Backend.allCases)
  func sameBase(backend: Backend) async throws {
    try await RouterServer.test(try Database(backend)) { server in
      let client = server.client(token: try await server.addPlayer().token)
      #expect(try await client.put("race", DemoSaves.small[0], create: true).status == 201)
      for round in 1...5 {
        let statuses = try await race([client], slot: "race", base: Int64(round), count: 32)
        #expect(statuses.filter { $0 == 201 }.count == 1, "round \(round): \(statuses)")
        #expect(statuses.filter { $0 == 412 }.count == 31, "round \(round)")
      }
      let list = try await client.send(.GET, "/v1/slots/race/revisions").json["revisions"] as? [[String: Any]]
      #expect(list?.map { $0["revision"] as? Int } == [6, 5, 4, 3, 2, 1])
      #expect(list?.dropLast().map { $0["baseRevision"] as? Int } == [5, 4, 3, 2, 1], "a chain, no fork")
    }
  }

  // Live: two server processes.
  @Test("two server processes on one PostgreSQL: of two uploads on one base exactly one wins")
  func twoServers() async throws {
    try await withTwoServers { clients in
      #expect(try await clients[0].put("shared", DemoSaves.small[0], create: true).status == 201)
      #expect(
        try await clients[1].send(.GET, "/v1/slots/shared").body == DemoSaves.small[0], "one database behind both")
      for round in 1...8 {
        let statuses = try await race(clients, slot: "shared", base: Int64(round), count: 16)
        #expect(statuses.filter { $0 == 201 }.count == 1, "round \(round): \(statuses)")
        #expect(statuses.filter { $0 == 412 }.count == 15, "round \(round)")
      }
      // Creations race too: one slot, one winner.
      let creations = try await withThrowingTaskGroup(of: Int.self) { group in
        for index in 0..<16 {
          group.addTask { try await clients[index % 2].put("fresh", Self.distinct[index], create: true).status }
        }
        return try await group.reduce(into: []) { $0.append($1) }
      }
      #expect(creations.filter { $0 == 201 }.count == 1, "\(creations)")
    }
  }

  // Live: a process killed with SIGKILL and restarted.
  @Test(
    "SIGKILL in the middle of uploads: every acknowledged revision is there after a restart, nothing partial",
    arguments: Backend.allCases)
  func killed(backend: Backend) async throws {
    let database = try Database(backend)
    let player = try database.addPlayer()
    let server = try ServerProcess(database, ["--keep-revisions", "1000"])
    let client = Client(base: server.base, token: player.token)
    let ledger = Ledger()
    let killAfter = 60
    await withTaskGroup(of: Void.self) { group in
      for writer in 0..<8 {
        group.addTask {
          let slot = "writer-\(writer)"
          var head: Int64? = nil
          var index = writer
          while true {
            let file = index % 5 == 4 ? DemoSaves.large : DemoSaves.small[index % 4]
            index += 1
            guard let reply = try? await client.put(slot, file, ifMatch: head, create: head == nil),
              reply.status == 201,
              let revision = reply.json["revision"] as? Int
            else { return }  // the server is gone
            head = Int64(revision)
            // The kill is synchronised on acknowledgements, not on time.
            if ledger.record(slot: slot, revision: revision, sha: sha256(file)) == killAfter {
              kill(server.process.processIdentifier, SIGKILL)
            }
          }
        }
      }
    }
    server.process.waitUntilExit()
    #expect(server.process.terminationReason == .uncaughtSignal)
    let acked = ledger.entries.withLock { $0 }
    #expect(acked.values.reduce(0) { $0 + $1.count } >= killAfter)

    let restarted = try ServerProcess(database, ["--keep-revisions", "1000"])
    defer { restarted.stop() }
    let after = Client(base: restarted.base, token: player.token)
    var checked = 0
    var unanswered = 0
    for (slot, revisions) in acked {
      let list = try await after.send(.GET, "/v1/slots/\(slot)/revisions").json["revisions"] as? [[String: Any]] ?? []
      let stored = Dictionary(
        uniqueKeysWithValues: list.compactMap { entry -> (Int, String)? in
          guard let revision = entry["revision"] as? Int, let sha = entry["sha256"] as? String else { return nil }
          return (revision, sha)
        })
      for entry in revisions {
        #expect(stored[entry.revision] == entry.sha, "\(slot) revision \(entry.revision) was acknowledged")
      }
      // At most the one upload in flight at the kill committed without its answer.
      #expect(stored.count - revisions.count <= 1, "\(slot): \(stored.count) stored, \(revisions.count) acknowledged")
      unanswered += stored.count - revisions.count
      for (revision, sha) in stored {
        let file = try await after.send(.GET, "/v1/slots/\(slot)/revisions/\(revision)").body
        #expect(sha256(file) == sha, "\(slot) revision \(revision) is whole")
        #expect(file.withUnsafeBytes { (try? SaveFileFormat.decode($0)) != nil }, "every checksum verifies")
        checked += 1
      }
    }
    #expect(checked >= killAfter)
    // The figures docs/RELIABILITY.md quotes.
    print(
      "kill (\(backend)): \(acked.values.reduce(0) { $0 + $1.count }) acknowledged over \(acked.count) slots, "
        + "\(checked) stored after the restart, each whole; \(unanswered) committed but never answered")
  }
}

/// The uploads the server acknowledged, by slot, and how many in all.
private final class Ledger: Sendable {
  let entries = Mutex<[String: [(revision: Int, sha: String)]]>([:])
  private let count = Mutex(0)

  /// Records an acknowledgement; returns how many there are now.
  func record(slot: String, revision: Int, sha: String) -> Int {
    entries.withLock { $0[slot, default: []].append((revision, sha)) }
    return count.withLock {
      $0 += 1
      return $0
    }
  }
}
