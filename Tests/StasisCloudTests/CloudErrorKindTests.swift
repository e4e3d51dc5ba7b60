import Foundation
import Stasis
import StasisCloud
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
    let report = await sync(transport).resolve(with: .mostRecent, named: "recent")
    #expect(report.error?.kind == .noLocalSave, "\(String(describing: report.error))")
    #expect(report.error?.kind != .notFound)
    #expect(transport.requests.withLock { $0 } == 0, "nothing to send")
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
}
