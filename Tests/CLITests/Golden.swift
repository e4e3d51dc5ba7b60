import Foundation
import Testing

/// What a CLI command prints, compared with a golden file under `Tests/CLITests/Goldens/`, as
/// swift-argument-parser keeps its snapshots: the expected output is read as it is printed,
/// without Swift's escaping or indentation. `STASIS_RECORD_GOLDENS=1 swift test --filter CLI`
/// writes what was printed over each golden that differs, and fails, so a recording never
/// passes by itself: read the diff in git, then run the tests again.
func expectGolden(_ actual: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
  let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Goldens/\(name).txt")
  let expected = try? String(contentsOf: file, encoding: .utf8)
  guard actual != expected else { return }
  if ProcessInfo.processInfo.environment["STASIS_RECORD_GOLDENS"] == "1" {
    try? actual.write(to: file, atomically: true, encoding: .utf8)
    Issue.record("recorded Goldens/\(name).txt: read the diff, then run again", sourceLocation: sourceLocation)
    return
  }
  guard let expected else {
    Issue.record("no golden Goldens/\(name).txt (STASIS_RECORD_GOLDENS=1 records one)", sourceLocation: sourceLocation)
    return
  }
  let printed = actual.split(separator: "\n", omittingEmptySubsequences: false)
  let golden = expected.split(separator: "\n", omittingEmptySubsequences: false)
  let line =
    zip(printed, golden).enumerated().first { $0.element.0 != $0.element.1 }?.offset
    ?? min(printed.count, golden.count)
  Issue.record(
    """
    differs from Goldens/\(name).txt at line \(line + 1):
      golden:  \(line < golden.count ? String(golden[line]) : "(the end)")
      printed: \(line < printed.count ? String(printed[line]) : "(the end)")
    printed in full:
    \(actual)
    """, sourceLocation: sourceLocation)
}
