import Foundation
import StasisTestSupport
import Testing

@Suite("Fuzz regressions")
struct FuzzRegressionTests {
  @Test("every input the fuzzer ever crashed on, and the seed fixture, decode to a value or a typed error")
  func replay() throws {
    let fixtures = packageRoot.appendingPathComponent("Tests/StasisTests/Fixtures")
    let crashes = fixtures.appendingPathComponent("fuzz-crashes")
    var inputs = [fixtures.appendingPathComponent("schema-v1.stasis").path]
    inputs += ((try? FileManager.default.contentsOfDirectory(atPath: crashes.path)) ?? [])
      .filter { !$0.hasPrefix(".") }.sorted().map { crashes.appendingPathComponent($0).path }
    let result = try run("stasis-fuzz", inputs)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "replayed \(inputs.count) inputs: no crash\n")
  }

  @Test("structure-aware: hostile value edits to real saves, and every input that ever crashed, load or are refused")
  func replayState() throws {
    let fixtures = packageRoot.appendingPathComponent("Tests/StasisTests/Fixtures")
    var inputs: [String] = []
    for folder in ["state-fuzz-corpus", "fuzz-crashes-state"] {
      let url = fixtures.appendingPathComponent(folder)
      inputs += ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [])
        .filter { !$0.hasPrefix(".") }.sorted().map { url.appendingPathComponent($0).path }
    }
    #expect(inputs.count >= 40)
    let result = try run("stasis-fuzz-state", inputs, in: packageRoot)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "replayed \(inputs.count) inputs: no crash\n")
  }
}
