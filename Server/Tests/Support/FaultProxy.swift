import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A TCP proxy in front of a `stasis-server` that can hold a request, or act at an exact byte:
/// faults placed by construction, never by timing. Each connection is pumped by two threads.
final class FaultProxy: Sendable {
  /// What to do with the bytes of a connection.
  enum Rule: Sendable {
    /// Forward everything.
    case pass
    /// Hold requests that carry a body (uploads) until ``release()``: they stay in flight.
    case holdUploads
    /// When an upload has sent `fraction` of its body, run `action` (kill the server) and cut
    /// the connection: the server never sees the whole body.
    case cutUploadMidway(fraction: Double, action: @Sendable () -> Void)
    /// When the server answers an upload, run `action` and cut the connection before the
    /// answer reaches the client: committed, but never acknowledged.
    case cutUploadAnswer(action: @Sendable () -> Void)
  }

  let port: Int
  private let listener: Int32
  private let state = Mutex<(upstream: Int, rule: Rule, holding: Int, dropHeld: Bool)>((0, .pass, 0, false))
  private let held = DispatchSemaphore(value: 0)
  private let heldSignal = DispatchSemaphore(value: 0)

  init(upstream: Int) throws {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var one: Int32 = 1
    setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(descriptor, 64) == 0 else { throw ServerTestError("the proxy could not listen") }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    listener = descriptor
    port = Int(UInt16(bigEndian: address.sin_port))
    state.withLock { $0.upstream = upstream }
    let listener = self.listener
    Thread.detachNewThread { [self] in
      while true {
        let client = accept(listener, nil, nil)
        if client < 0 { return }
        Thread.detachNewThread { self.serve(client) }
      }
    }
  }

  // The accept loop's thread still holds `listener`: shut down, it returns, and the descriptor
  // is left open rather than closed under that thread (a reused number would be another socket).
  deinit { shutdown(listener, Int32(SHUT_RDWR)) }

  var url: String { "http://127.0.0.1:\(port)" }

  /// Points the proxy at a (restarted) server.
  func setUpstream(_ port: Int) { state.withLock { $0.upstream = port } }

  /// Sets the rule for the connections' next bytes.
  func setRule(_ rule: Rule) {
    state.withLock {
      $0.rule = rule
      $0.dropHeld = false
    }
  }

  /// Lets held uploads through, or drops them (they never reach the server).
  func release(dropping: Bool = false) {
    let count = state.withLock {
      $0.dropHeld = dropping
      $0.rule = .pass
      return $0.holding
    }
    for _ in 0..<max(count, 1) { held.signal() }
  }

  /// Blocks until an upload is being held (it is in flight, stuck at the proxy); false when
  /// none came within a minute (a regression fails the test instead of hanging it).
  func waitUntilHolding() -> Bool { heldSignal.wait(timeout: .now() + 60) == .success }

  private func serve(_ client: Int32) {
    let upstreamPort = state.withLock { $0.upstream }
    let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = in_port_t(UInt16(upstreamPort).bigEndian)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard connected == 0 else {  // the server is down: the client sees its connection closed
      close(server)
      close(client)
      return
    }
    let cut: @Sendable () -> Void = {
      shutdown(client, Int32(SHUT_RDWR))
      shutdown(server, Int32(SHUT_RDWR))
    }
    // The two pumps share both descriptors: the last one to finish closes them. A descriptor
    // closed while the other pump still used it could be reused by any socket of the test
    // process, and that pump's `shutdown` would then cut another test's connection.
    let pumpsLeft = Mutex(2)
    let finish: @Sendable () -> Void = {
      let last = pumpsLeft.withLock { left in
        left -= 1
        return left == 0
      }
      guard last else { return }
      close(client)
      close(server)
    }
    // The request in flight on this connection (requests follow each other: keep-alive).
    let upload = Mutex<(isUpload: Bool, bodyLength: Int, sent: Int, inBody: Bool)>((false, 0, 0, false))
    Thread.detachNewThread { [self] in
      // Server to client: maybe cut an upload's answer.
      var buffer = [UInt8](repeating: 0, count: 65536)
      while true {
        let count = recv(server, &buffer, buffer.count, 0)
        if count <= 0 { break }
        if upload.withLock({ $0.isUpload }), case .cutUploadAnswer(let action) = state.withLock({ $0.rule }) {
          action()
          cut()
          break
        }
        if !sendAll(client, buffer, count) { break }
      }
      shutdown(client, Int32(SHUT_RDWR))
      finish()
    }
    // Client to server: find each request's headers, then hold an upload or cut it midway.
    var buffer = [UInt8](repeating: 0, count: 65536)
    var head: [UInt8] = []
    var announced = false
    while true {
      let count = recv(client, &buffer, buffer.count, 0)
      if count <= 0 { break }
      var forward = count
      let status = upload.withLock { status -> (isUpload: Bool, bodyLength: Int, sent: Int) in
        if !status.inBody {
          head += buffer[0..<count]
          if let text = String(bytes: head, encoding: .isoLatin1), let end = text.range(of: "\r\n\r\n") {
            let headerLength = text[..<end.upperBound].utf8.count
            // An upload's request: a PUT, or the request that completes a resumable upload (its
            // one POST, or its last PATCH).
            status.isUpload =
              text.hasPrefix("PUT ")
              || text[..<end.lowerBound].lowercased().split(separator: "\r\n").contains {
                $0.hasPrefix("upload-complete:") && $0.contains("?1")
              }
            let lengthLine = text[..<end.lowerBound].split(separator: "\r\n").first {
              $0.lowercased().hasPrefix("content-length:")
            }
            status.bodyLength =
              lengthLine.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            status.sent = head.count - headerLength
            status.inBody = true
            head = []
          }
        } else {
          status.sent += count
        }
        let seen = (status.isUpload, status.bodyLength, status.sent)
        if status.inBody && status.sent >= status.bodyLength { status.inBody = false }  // next request
        return seen
      }
      if status.isUpload {
        switch state.withLock({ $0.rule }) {
        case .holdUploads:
          state.withLock { $0.holding += 1 }
          if !announced {
            announced = true
            heldSignal.signal()
          }
          held.wait()
          let drop = state.withLock {
            $0.holding -= 1
            return $0.dropHeld
          }
          if drop {
            cut()
            finish()
            return
          }
        case .cutUploadMidway(let fraction, let action)
        where Double(status.sent) >= Double(status.bodyLength) * fraction:
          // Forward only up to the fraction, then kill: the body never arrives whole.
          let over = status.sent - Int(Double(status.bodyLength) * fraction)
          forward = max(0, count - over)
          _ = sendAll(server, buffer, forward)
          action()
          cut()
          finish()
          return
        default: break
        }
      }
      if !sendAll(server, buffer, forward) { break }
    }
    shutdown(server, Int32(SHUT_WR))
    finish()
  }

  private func sendAll(_ descriptor: Int32, _ buffer: [UInt8], _ count: Int) -> Bool {
    var done = 0
    while done < count {
      let sent = buffer.withUnsafeBytes { send(descriptor, $0.baseAddress! + done, count - done, Int32(MSG_NOSIGNAL)) }
      if sent <= 0 { return false }
      done += sent
    }
    return true
  }
}

/// A free loopback port, for a server that must come back on the same one.
func freePort() throws -> Int {
  let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(probe) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
  }
  guard bound == 0 else { throw ServerTestError("no free port") }
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  _ = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &length) }
  }
  return Int(UInt16(bigEndian: address.sin_port))
}
