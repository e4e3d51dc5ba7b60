import Foundation

/// Milliseconds since the Unix epoch: the default wall clock of stores and merges (tests
/// inject their own). The engine never reads it.
@usableFromInline package func wallClockMilliseconds() -> Int64 {
  Date().unixMilliseconds
}

extension Date {
  /// Milliseconds since the Unix epoch, rounded down: how saves, settings and timers store a date.
  package var unixMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded(.down)) }
}

/// Bytes as lowercase hexadecimal (a SHA-256 as 64 characters). Plumbing for the library's own
/// packages (the server's too), not part of the public API.
@_spi(Plumbing) public func hexEncoded(_ bytes: some Sequence<UInt8>) -> String {
  let digits = Array("0123456789abcdef".utf8)
  var text: [UInt8] = []
  for byte in bytes {
    text.append(digits[Int(byte >> 4)])
    text.append(digits[Int(byte & 0x0F)])
  }
  return String(decoding: text, as: UTF8.self)
}
