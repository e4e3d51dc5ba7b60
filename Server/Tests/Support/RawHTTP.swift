import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A blocking loopback TCP connection for what no well-behaved client does: bytes one at a
/// time, requests that never finish, thousands of idle connections. Every read is bounded by
/// a receive timeout, so no test waits forever.
final class RawConnection: @unchecked Sendable {
  let descriptor: Int32

  /// Connects to 127.0.0.1:`port`; reads give up after `readTimeout` seconds.
  init(port: Int, readTimeout: Double = 15) throws {
    descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw ServerTestError("socket failed: errno \(errno)") }
    var address = loopback(port)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {
      close(descriptor)
      throw ServerTestError("connect failed: errno \(errno)")
    }
    var time = timeval(tv_sec: Int(readTimeout), tv_usec: Int((readTimeout - readTimeout.rounded(.down)) * 1e6))
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
  }

  deinit { close(descriptor) }

  /// Sends all of `bytes`; false when the connection is gone.
  @discardableResult
  func send(_ bytes: [UInt8]) -> Bool {
    var sent = 0
    while sent < bytes.count {
      let count = bytes[sent...].withUnsafeBytes {
        Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if count <= 0 { return false }
      sent += count
    }
    return true
  }

  @discardableResult
  func send(_ text: String) -> Bool { send(Array(text.utf8)) }

  /// Reads one response (its head, then `Content-Length` bytes of body); nil when the
  /// connection ends (or the read times out) first.
  func readResponse() -> RawResponse? {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      if let response = RawResponse(parsing: data) { return response }
      let count = recv(descriptor, &buffer, buffer.count, 0)
      if count <= 0 { return nil }
      data += buffer[0..<count]
    }
  }

  /// Reads until the server closes the connection (end of stream or reset) or the read times
  /// out; returns everything read and whether it was closed.
  func readToEnd() -> (bytes: [UInt8], closed: Bool) {
    var data: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = recv(descriptor, &buffer, buffer.count, 0)
      if count > 0 {
        data += buffer[0..<count]
        continue
      }
      let closed = count == 0 || errno == ECONNRESET
      return (data, closed)
    }
  }

  /// One request on this connection, its response read.
  func exchange(_ request: String) -> RawResponse? {
    guard send(request) else { return nil }
    return readResponse()
  }
}

/// An HTTP/1.1 response as bytes on the wire.
struct RawResponse: Sendable {
  var status: Int
  var headers: [(String, String)]
  var body: [UInt8]

  /// Parses a whole response from the front of `bytes`; nil while it is incomplete.
  init?(parsing bytes: [UInt8]) {
    let separator: [UInt8] = [13, 10, 13, 10]
    guard let end = bytes.indices.dropLast(3).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
      return nil
    }
    let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
    let statusParts = lines[0].split(separator: " ")
    guard statusParts.count >= 2, let status = Int(statusParts[1]) else { return nil }
    var headers: [(String, String)] = []
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers.append(
        (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
    }
    let length = headers.first { $0.0.lowercased() == "content-length" }.flatMap { Int($0.1) } ?? 0
    guard bytes.count >= end + 4 + length else { return nil }
    self.status = status
    self.headers = headers
    self.body = Array(bytes[(end + 4)..<(end + 4 + length)])
  }

  func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
  var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
  var text: String { String(decoding: body, as: UTF8.self) }
}

func loopback(_ port: Int) -> sockaddr_in {
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = in_port_t(UInt16(port).bigEndian)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  return address
}

/// Raises this process's soft descriptor limit to its hard one (a flood needs thousands);
/// returns the soft limit now.
@discardableResult
func raiseOwnDescriptorLimit() -> Int {
  var limits = rlimit()
  getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits)
  if limits.rlim_cur < limits.rlim_max {
    limits.rlim_cur = limits.rlim_max
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits)
  }
  getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits)
  return Int(clamping: limits.rlim_cur)
}

/// A request head as text.
func requestHead(
  _ method: String, _ path: String, token: String? = nil, headers: [(String, String)] = [], contentLength: Int? = nil
) -> String {
  var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
  if let token { text += "Authorization: Bearer \(token)\r\n" }
  for (name, value) in headers { text += "\(name): \(value)\r\n" }
  if let contentLength { text += "Content-Length: \(contentLength)\r\n" }
  return text + "\r\n"
}
