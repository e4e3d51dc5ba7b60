import Foundation

#if FUZZING
  /// libFuzzer's driver: SwiftPM links executables with its own `main`, so ours hands over.
  @_silgen_name("LLVMFuzzerRunDriver")
  func llvmFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
  ) -> Int32
#endif

/// The `main` of a fuzz target: under libFuzzer (built with -DFUZZING) it runs the fuzzer on
/// `target`; otherwise it replays the files given (a corpus, or crashes found) and says so.
public func runFuzzTarget(_ target: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) throws {
  #if FUZZING
    var argc = CommandLine.argc
    var argv = CommandLine.unsafeArgv
    exit(llvmFuzzerRunDriver(&argc, &argv, target))
  #else
    var count = 0
    for path in CommandLine.arguments.dropFirst() {
      let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
      _ = bytes.withUnsafeBufferPointer { target($0.baseAddress, $0.count) }
      count += 1
    }
    print("replayed \(count) inputs: no crash")
  #endif
}
