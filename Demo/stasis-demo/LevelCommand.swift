import Foundation
import StasisDemoGame

/// The demo's one-shot commands over its levels (`--render-thumbnail`, `--replay`,
/// `--verify-replay`): finds the levels (`--levels`, else `Assets/levels`), runs `body` with
/// them, and prints any failure as one line on standard error, exit 1.
func withLevels(_ levels: String?, _ body: (LevelLibrary) throws -> Int32) -> Int32 {
  func fail(_ message: String) -> Int32 {
    FileHandle.standardError.write(Data("stasis-demo: \(message)\n".utf8))
    return 1
  }
  guard let library = levels.map(LevelLibrary.init(folder:)) ?? LevelLibrary.locate() else {
    return fail("cannot find Assets/levels (set --levels or STASIS_ASSETS)")
  }
  do {
    return try body(library)
  } catch {
    return fail("\(error)")
  }
}
