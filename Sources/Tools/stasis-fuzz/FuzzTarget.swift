import Foundation
import Stasis
import StasisFuzzDriver

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

/// Under libFuzzer, fuzzes; built normally, replays the files given.
@main
enum FuzzMain {
  static func main() throws { try runFuzzTarget { stasisFuzzOneInput($0, $1) } }
}
