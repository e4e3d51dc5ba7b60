import Foundation
import StasisServer
import Testing

@testable import ServerTestSupport

/// The API against its description: schemathesis (PyPI, installed by scripts/test.sh) sends
/// generated requests, valid and not, with a real token and a real slot. Live: schemathesis
/// is another process and speaks HTTP to a running `stasis-server`.
@Suite("stasis-server: docs/openapi.yaml, checked by schemathesis", .serialized)
struct OpenAPITests {
  /// Where schemathesis is: on PATH, or in the virtual environment scripts/test.sh makes.
  static let schemathesis: String? = {
    let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
    let venv = repositoryRoot.appendingPathComponent(".venv-schemathesis/bin").path
    return (paths + [venv, "/root/.pyenv/shims", "/usr/local/bin", "\(NSHomeDirectory())/.local/bin"])
      .map { "\($0)/schemathesis" }.first { FileManager.default.isExecutableFile(atPath: $0) }
  }()

  @Test("the description's audit actions are the server's, every one")
  func auditActions() throws {
    let text = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/openapi.yaml"), encoding: .utf8)
    let line = try #require(text.split(separator: "\n").first { $0.contains("enum: [sign-in,") })
    let listed = line.split(separator: "[")[1].split(separator: "]")[0].split(separator: ",").map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    #expect(listed.sorted() == AuditAction.allCases.map(\.rawValue).sorted())
  }

  @Test("no 5xx, and every response conforms to the description", arguments: Backend.allCases)
  func conformance(backend: Backend) async throws {
    let tool = try #require(
      Self.schemathesis, "schemathesis is not installed: scripts/test.sh installs it in .venv-schemathesis/")
    let database = try Database(backend)
    let player = try database.addPlayer()
    let server = try ServerProcess(database)
    defer { server.stop() }
    // A real slot, so the operations on one reach more than 404.
    let client = Client(base: server.base, token: player.token)
    #expect(try await client.put("autosave", DemoSaves.small[0], create: true).status == 201)
    let result = try run(
      tool,
      [
        "run", repositoryRoot.appendingPathComponent("docs/openapi.yaml").path, "--url", server.base,
        "-H", "Authorization: Bearer \(player.token)",
        "--checks",
        "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance",
        "--max-examples", "40", "--seed", "1", "--no-color", "--exclude-tag", "admin",
        // No example database between runs: one kept in the working folder made a later run
        // fail a health check ("too many generated examples are filtered out").
        "--generation-database", "none",
      ])
    #expect(result.status == 0, "\(result.out.suffix(3000))")
    // The summary docs/RELIABILITY.md quotes.
    print("schemathesis (\(backend)):\n\(result.out.suffix(1500))")
    #expect(result.out.contains(" passed"), "schemathesis ran test cases")
    #expect(!result.out.contains(player.token), "the token is filtered from its report")
  }

  @Test(
    "the admin API (/v1/admin) with an admin's key: no 5xx, and every response conforms", arguments: Backend.allCases)
  func adminConformance(backend: Backend) async throws {
    let tool = try #require(
      Self.schemathesis, "schemathesis is not installed: scripts/test.sh installs it in .venv-schemathesis/")
    let database = try Database(backend)
    let server = try ServerProcess(database)
    defer { server.stop() }
    let studio = try await StudioFixture(database) { Client(base: server.base, token: $0) }
    let key = studio.staff["admin"]!.key
    let result = try run(
      tool,
      [
        "run", repositoryRoot.appendingPathComponent("docs/openapi.yaml").path, "--url", server.base,
        "-H", "Authorization: Bearer \(key)", "--include-tag", "admin",
        "--checks",
        "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance",
        "--max-examples", "40", "--seed", "1", "--no-color", "--generation-database", "none",
      ])
    #expect(result.status == 0, "\(result.out.suffix(12000))")
    print("schemathesis, admin (\(backend)):\n\(result.out.suffix(1500))")
    #expect(result.out.contains(" passed"), "schemathesis ran test cases")
    #expect(!result.out.contains(key), "the key is filtered from its report")
  }
}
