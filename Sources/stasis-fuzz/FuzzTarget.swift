import Foundation
import Stasis

/// The decoder under libFuzzer. The first byte picks what the rest is: 0, a whole save file
/// (header, checksums, trailer, sections); anything else, the body of one tree section, decoded
/// without the checksums in the way, so mutations reach the tree decoder itself. Either way
/// the only acceptable outcomes are a value or a `SaveFileError`: a crash or a sanitizer report
/// is a bug, and becomes a regression test.
@_cdecl("LLVMFuzzerTestOneInput")
public func stasisFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  guard let data, size > 0 else { return 0 }
  let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
  if data[0] == 0 {
    if let document = try? SaveFileFormat.decode(bytes, path: "fuzz") {
      _ = try? SaveValueDecoder().decode(FuzzState.self, from: document.tree)
    }
  } else if let value = try? SaveFileFormat.decodeTreeSection(bytes) {
    _ = try? SaveValueDecoder().decode(FuzzState.self, from: value)
  }
  return 0
}

/// A state shaped like a game's, to push decoded trees through the typed decoder too.
struct FuzzState: Codable {
  struct Body: BulkStorable {
    var x: Float = 0
    var y: Float = 0
    var id: UInt32 = 0
    static let bulkLayout = BulkLayout(of: Body.self, [.field("x", \.x), .field("y", \.y), .field("id", \.id)])
  }
  var score: Int64?
  var name: String?
  var bodies: [Body]?
  var nested: [String: [Double]]?
}

#if FUZZING
  /// libFuzzer's driver: SwiftPM links executables with its own `main`, so ours hands over.
  @_silgen_name("LLVMFuzzerRunDriver")
  func llvmFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
  ) -> Int32
#endif

/// Under libFuzzer (built with -DFUZZING), runs the fuzzer; otherwise replays the files given
/// (a corpus, or crashes found), for regression runs.
@main
enum FuzzMain {
  static func main() throws {
    #if FUZZING
      var argc = CommandLine.argc
      var argv = CommandLine.unsafeArgv
      exit(llvmFuzzerRunDriver(&argc, &argv) { stasisFuzzOneInput($0, $1) })
    #else
      var count = 0
      for path in CommandLine.arguments.dropFirst() {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        _ = bytes.withUnsafeBufferPointer { stasisFuzzOneInput($0.baseAddress, $0.count) }
        count += 1
      }
      print("replayed \(count) inputs: no crash")
    #endif
  }
}
