import CStasisZstd

/// zstd from Debian's libzstd: whole buffers in and out, optionally against a prefix (what
/// `zstd --patch-from` does: the base is a dictionary the new bytes refer back into).
package enum Zstd {
  /// The largest window zstd allows on 64-bit machines (`ZSTD_WINDOWLOG_MAX_64`).
  static let largestWindowLog: Int32 = 31

  /// `source` compressed at `level`; against `prefix` when one is given. Nil when zstd fails
  /// (it fails only when it cannot allocate): the caller sends the bytes as they are.
  package static func compress(_ source: UnsafeRawBufferPointer, level: Int32, prefix: UnsafeRawBufferPointer? = nil)
    -> [UInt8]?
  {
    guard let context = ZSTD_createCCtx() else { return nil }
    defer { ZSTD_freeCCtx(context) }
    guard ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)) == 0,
      ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 0)) == 0
    else { return nil }
    if let prefix, prefix.count > 0 {
      // The window must reach back over the whole prefix, as `--patch-from` sets it; long-distance
      // matching finds the matches a normal level's hash tables would miss that far back.
      let windowLog = min(largestWindowLog, max(10, Int32(bitWidth(prefix.count + source.count))))
      guard ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, windowLog)) == 0 else { return nil }
      if prefix.count + source.count > 1 << 20 {
        guard ZSTD_isError(ZSTD_CCtx_setParameter(context, ZSTD_c_enableLongDistanceMatching, 1)) == 0 else {
          return nil
        }
      }
      guard ZSTD_isError(ZSTD_CCtx_refPrefix(context, prefix.baseAddress, prefix.count)) == 0 else { return nil }
    }
    let bound = ZSTD_compressBound(source.count)
    var written = 0
    let frame = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
      written = ZSTD_compress2(context, buffer.baseAddress, bound, source.baseAddress, source.count)
      count = ZSTD_isError(written) == 0 ? written : 0
    }
    return ZSTD_isError(written) == 0 ? frame : nil
  }

  /// Why a frame did not decompress.
  package struct Failure: Error {
    package var message: String
  }

  /// The frame's content, which must be exactly `size` bytes (the frame says its size first,
  /// so nothing larger is ever allocated); against `prefix` when the frame was made with one.
  package static func decompress(_ frame: UnsafeRawBufferPointer, size: Int, prefix: UnsafeRawBufferPointer? = nil)
    throws(Failure) -> [UInt8]
  {
    try checkSize(frame, size)
    var failure: Failure?
    let content = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
      let done = Result { () throws(Failure) in
        try decompress(frame, into: UnsafeMutableRawBufferPointer(buffer), prefix: prefix)
      }
      switch done {
      case .success: count = size
      case .failure(let error):
        failure = error
        count = 0
      }
    }
    if let failure { throw failure }
    return content
  }

  /// Decompresses `frame` into `destination`, which it must fill exactly.
  static func decompress(
    _ frame: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer,
    prefix: UnsafeRawBufferPointer? = nil
  ) throws(Failure) {
    try checkSize(frame, destination.count)
    guard let context = ZSTD_createDCtx() else { throw Failure(message: "zstd could not allocate") }
    defer { ZSTD_freeDCtx(context) }
    // One call into a flat buffer: zstd allocates no window of its own, whatever the frame says.
    _ = ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, largestWindowLog)
    if let prefix, prefix.count > 0 {
      guard ZSTD_isError(ZSTD_DCtx_refPrefix(context, prefix.baseAddress, prefix.count)) == 0 else {
        throw Failure(message: "zstd refused the base as a prefix")
      }
    }
    let result = ZSTD_decompressDCtx(
      context, destination.baseAddress, destination.count, frame.baseAddress, frame.count)
    guard ZSTD_isError(result) == 0 else { throw Failure(message: String(cString: ZSTD_getErrorName(result))) }
    guard result == destination.count else {
      throw Failure(message: "the frame held \(result) bytes, not \(destination.count)")
    }
  }

  /// The frame must announce exactly `size` bytes of content.
  private static func checkSize(_ frame: UnsafeRawBufferPointer, _ size: Int) throws(Failure) {
    let declared = ZSTD_getFrameContentSize(frame.baseAddress, frame.count)
    guard declared != ZSTD_CONTENTSIZE_ERROR else { throw Failure(message: "not a zstd frame") }
    guard declared != ZSTD_CONTENTSIZE_UNKNOWN, declared == UInt64(size) else {
      throw Failure(message: "the frame announces \(declared) bytes, not the \(size) expected")
    }
  }

  private static func bitWidth(_ value: Int) -> Int { Int.bitWidth - max(1, value).leadingZeroBitCount }
}
