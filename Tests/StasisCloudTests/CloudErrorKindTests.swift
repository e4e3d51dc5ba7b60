import Foundation
import Stasis
@_spi(Plumbing) import StasisCloud
import Synchronization
import Testing

/// A server that answers every request `404` and counts what it was asked.
private final class NothingThere: CloudTransport {
  let requests = Mutex(0)
  func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
    requests.withLock { $0 += 1 }
    return CloudResponse(status: 404, body: Array(#"{"error": "no such slot"}"#.utf8))
  }
}

/// A server whose head is revision 1, holding `file`.
private final class HeadIsRevisionOne: CloudTransport {
  let file: [UInt8]
  let requests = Mutex<[String]>([])
  init(file: [UInt8]) { self.file = file }
  func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
    requests.withLock { $0.append("\(request.method) \(request.path)") }
    return CloudResponse(status: 200, headers: [("ETag", "\"1\"")], body: file)
  }
}

/// A server that answers every request with one status.
private struct Answers: CloudTransport {
  let status: Int
  func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
    CloudResponse(status: status, body: Array(#"{"error": "as told"}"#.utf8))
  }
}

/// A server whose database is failing over: `503` with `Retry-After`, to every request.
private struct FailingOver: CloudTransport {
  let retryAfter: Int
  func send(_ request: CloudRequest, to server: CloudCredentials) async throws(CloudError) -> CloudResponse {
    CloudResponse(
      status: 503, headers: [("Retry-After", "\(retryAfter)")],
      body: Array(
        #"{"error": "the database is unavailable (it may be failing over); nothing was stored: try again"}"#.utf8))
  }
}

private struct Tally: Codable, Sendable { var count = 0 }

/// `CloudError`'s kinds mean one thing each (issue 44): "no such slot on the server" is not "no
/// local save", and neither is "no conflict to resolve".
@Suite("CloudError kinds: one meaning each")
struct CloudErrorKindTests {
  private func sync(_ transport: NothingThere) -> CloudSync {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stasis-kinds-\(UUID().uuidString)")
    return CloudSync(
      client: CloudClient(credentials: CloudCredentials(url: "http://127.0.0.1:9", token: "t"), transport: transport),
      store: SaveStore(directory: folder.path), slot: "autosave")
  }

  @Test("resolving a slot with no local save is noLocalSave, asked of no server")
  func noLocalSave() async {
    let transport = NothingThere()
    let report = await sync(transport).resolve(with: .mostRecent)
    #expect(report.error?.kind == .noLocalSave, "\(String(describing: report.error))")
    #expect(report.error?.kind != .notFound)
    #expect(transport.requests.withLock { $0 } == 0, "nothing to send")
  }

  @Test(
    "each status the API answers is one kind: 401 unauthorized, 404 notFound, 412 conflict, 400 and 413 refused, 503 unavailable, other 5xx server",
    arguments: [
      (401, CloudError.Kind.unauthorized), (404, .notFound), (412, .conflict), (400, .refused), (413, .refused),
      (500, .server), (503, .unavailable),
    ])
  func statuses(status: Int, kind: CloudError.Kind) async {
    let client = CloudClient(
      credentials: CloudCredentials(url: "http://127.0.0.1:9", token: "t"), transport: Answers(status: status))
    do {
      try await client.discard(slot: "autosave", revision: 1)
      Issue.record("HTTP \(status) answered as a discard")
    } catch {
      #expect(error.kind == kind, "HTTP \(status): \(error)")
    }
    do {
      _ = try await client.slots()
      Issue.record("HTTP \(status) answered as the slots")
    } catch {
      #expect(error.kind == kind, "HTTP \(status): \(error)")
    }
  }

  @Test("resolving a slot whose record holds no conflict, with the head it last synced, is noConflict")
  func noConflict() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stasis-kinds-\(UUID().uuidString)")
    let store = SaveStore(directory: folder.path)
    let file = SaveFileFormat.encode(try Self.document())
    _ = try store.save(fileBytes: file, slot: "autosave").wait()
    let credentials = CloudCredentials(url: "http://127.0.0.1:9", token: "t")
    var record = SyncRecord.load(store: store, slot: "autosave", server: credentials)
    record.base = 1
    try record.save(store: store, slot: "autosave")
    let transport = HeadIsRevisionOne(file: file)
    let sync = CloudSync(
      client: CloudClient(credentials: credentials, transport: transport), store: store, slot: "autosave")
    let report = await sync.resolve(with: .mostRecent)
    #expect(report.error?.kind == .noConflict, "\(report)")
    #expect(transport.requests.withLock { $0 } == ["GET /v1/slots/autosave"], "one look at the head, nothing sent")
    #expect(try store.generations(of: "autosave") == [1], "nothing written")
  }

  private static func document() throws -> SaveDocument {
    struct State: Codable { var score = 1 }
    return try SaveCodec<State>(game: GameIdentity(name: "kinds", build: "1")).document(
      for: State(), summary: SaveSummary(), createdAt: 0)
  }

  @Test("a switch over cloud kinds needs a default, and a later kind falls into it")
  func extensible() {
    func retries(_ kind: CloudError.Kind) -> Bool {
      switch kind {
      case .offline, .server: true
      default: false
      }
    }
    #expect(retries(.offline))
    #expect(!retries(.noConflict))
    #expect(!retries(CloudError.Kind(rawValue: "aLaterKind")))
    #expect(
      CloudError(.noLocalSave, "slot 'autosave' has no local save").description
        == "noLocalSave: slot 'autosave' has no local save")
  }

  @Test("503 is unavailable, not a conflict: its Retry-After is kept, and the sync waits at least that long")
  func unavailable() async throws {
    let client = CloudClient(
      credentials: CloudCredentials(url: "http://127.0.0.1:9", token: "t"), transport: FailingOver(retryAfter: 3))
    do {
      _ = try await client.slots()
      Issue.record("a 503 answered as the slots")
    } catch {
      #expect(error.kind == .unavailable)
      #expect(error.kind != .conflict)
      #expect(error.retryAfter == .seconds(3))
      #expect(error.message.contains("unavailable"))
    }
    let waits = Mutex<[Duration]>([])
    let stopped = AsyncStream<Void>.makeStream()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stasis-503-\(UUID().uuidString)")
    let store = SaveStore(directory: folder.path)
    let sync = CloudSync(
      client: client, store: store, slot: "autosave",
      configuration: CloudSyncConfiguration(
        firstRetry: .milliseconds(500), longestRetry: .seconds(4),
        sleep: { duration in
          let count = waits.withLock {
            $0.append(duration)
            return $0.count
          }
          if count == 4 {  // enough: a cancelled wait stops the retries
            stopped.continuation.yield()
            throw CancellationError()
          }
        }))
    let handle = store.save(Tally(), codec: SaveCodec<Tally>(game: GameIdentity(name: "n")), slot: "autosave")
    sync.upload(after: handle)
    for await _ in stopped.stream { break }
    await sync.settle()
    // A 503 is the server answering: each retry waits what it asked (the backoff's 0.5 s
    // without its Retry-After), within the longest wait.
    #expect(waits.withLock { $0 } == [.seconds(3), .seconds(3), .seconds(3), .seconds(3)])
    #expect(sync.status.pending == 1, "still queued: nothing dropped")
    let said = sync.status.events.compactMap { event -> CloudError? in
      if case .offline(let error, _) = event { error } else { nil }
    }
    #expect(said.contains { $0.kind == .unavailable && $0.message.contains("the server is unavailable") }, "\(said)")
  }
}
