import Foundation
import Stasis
import Synchronization
import Testing

@testable import StasisCloud

#if AsyncHTTPClient
  import NIOCore
#endif

#if canImport(Glibc)
  import Glibc
#endif

/// A loopback listener that reads each connection's request head, then answers it as `behavior`
/// says, for the transport's failures without a real server.
private final class LoopbackListener: Sendable {
  enum Behavior: Sendable {
    /// Sends these bytes, then closes.
    case answer([UInt8])
    /// Never answers; holds the connection until the client goes.
    case silent
    /// Closes without a byte of answer.
    case close
    /// Resets the connection (a close with a zero linger sends RST).
    case reset
  }

  let port: Int
  private let socketDescriptor: Int32

  convenience init(answer: [UInt8]) throws { try self.init(.answer(answer)) }

  init(_ behavior: Behavior) throws {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    try #require(bound == 0 && listen(descriptor, 16) == 0)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    port = Int(UInt16(bigEndian: address.sin_port))
    socketDescriptor = descriptor
    Thread.detachNewThread {
      while true {
        let client = accept(descriptor, nil, nil)
        if client < 0 { return }
        Thread.detachNewThread {
          var buffer = [UInt8](repeating: 0, count: 4096)
          _ = recv(client, &buffer, buffer.count, 0)  // the request's head
          let answer: [UInt8]
          switch behavior {
          case .answer(let bytes): answer = bytes
          case .silent:
            while recv(client, &buffer, buffer.count, 0) > 0 {}  // hold it until the client goes
            close(client)
            return
          case .close:
            close(client)
            return
          case .reset:
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
            close(client)
            return
          }
          var sent = 0
          while sent < answer.count {
            let count = answer.withUnsafeBytes {
              send(client, $0.baseAddress! + sent, answer.count - sent, Int32(MSG_NOSIGNAL))
            }
            if count <= 0 { break }
            sent += count
          }
          close(client)
        }
      }
    }
  }

  // Never closed: a closed descriptor's number is reused at once, and the accept loop would
  // then answer another test's connections. Shut down, it accepts nothing more.
  deinit { shutdown(socketDescriptor, Int32(SHUT_RDWR)) }
}

/// A loopback port nothing listens on: bound, read, closed (no thread keeps its descriptor).
private func closedPort() throws -> Int {
  let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(descriptor) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  try #require(bound == 0)
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  _ = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
  }
  return Int(UInt16(bigEndian: address.sin_port))
}

/// Each HTTP transport StasisCloud ships, for the tests that hold both to one contract.
enum Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case urlSession = "URLSession"
  #if AsyncHTTPClient
    case asyncHTTPClient = "AsyncHTTPClient"
  #endif

  var testDescription: String { rawValue }

  /// The transport, its answers bounded as a game's are unless told.
  func make(maximumAnswerBytes: Int? = nil) -> any CloudTransport {
    switch self {
    case .urlSession:
      maximumAnswerBytes.map { URLSessionCloudTransport(maximumAnswerBytes: $0) } ?? URLSessionCloudTransport()
    #if AsyncHTTPClient
      case .asyncHTTPClient:
        maximumAnswerBytes.map { HTTPCloudTransport(maximumAnswerBytes: $0) } ?? HTTPCloudTransport()
    #endif
    }
  }
}

@Suite("HTTP transports: failures told apart, answers bounded, the same contract for each")
struct HTTPTransportTests {
  private let request = CloudRequest(method: "GET", path: "/v1/slots")

  @Test("a refused connection is offline and certainly never sent", arguments: Transport.allCases)
  func refused(transport: Transport) async throws {
    let server = CloudCredentials(url: "http://127.0.0.1:\(try closedPort())", token: "t")
    do {
      _ = try await transport.make().send(request, to: server)
      Issue.record("a closed port answered")
    } catch {
      #expect(error.kind == .offline)
      #expect(error.neverSent)
      let cause = try #require(error.underlyingError, "the client's own error is kept")
      #expect(TransportFailure(cause) == .refused, "\(cause)")
    }
  }

  @Test("a URL that is not http(s) is refused: no retry can mend it", arguments: Transport.allCases)
  func notAServerURL(transport: Transport) async throws {
    for url in ["ftp://127.0.0.1:21", "127.0.0.1:8090", "http://", "http:///v1"] {
      do {
        _ = try await transport.make().send(request, to: CloudCredentials(url: url, token: "t"))
        Issue.record("\(url) was sent")
      } catch {
        #expect(error.kind == .refused, "\(url)")
        #expect(error.message.contains("not a server URL"), "\(url): \(error.message)")
      }
    }
  }

  @Test("an answer longer than any save is cut off as it arrives, and refused", arguments: Transport.allCases)
  func answerTooLarge(transport: Transport) async throws {
    let body = [UInt8](repeating: 0x41, count: 200_000)
    let head = "HTTP/1.1 200 OK\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
    let listener = try LoopbackListener(answer: Array(head.utf8) + body)
    let server = CloudCredentials(url: "http://127.0.0.1:\(listener.port)", token: "t")
    do {
      _ = try await transport.make(maximumAnswerBytes: 100_000).send(request, to: server)
      Issue.record("a 200 KB answer passed a 100 KB bound")
    } catch {
      #expect(error.kind == .refused)
      #expect(TransportFailure(try #require(error.underlyingError)) == .tooLarge)
    }
    // Under the bound, the same answer is read whole.
    let answer = try await transport.make(maximumAnswerBytes: 300_000).send(request, to: server)
    #expect(answer.status == 200 && answer.body.count == body.count)
    #expect(answer.header("content-length") == "\(body.count)", "headers by name, in any case")
  }

  @Test(
    "a server that never answers times out, one that closes or resets the connection fails at once: offline, and maybe sent",
    arguments: Transport.allCases, [LoopbackListener.Behavior.silent, .close, .reset])
  fileprivate func noAnswer(transport: Transport, behavior: LoopbackListener.Behavior) async throws {
    let listener = try LoopbackListener(behavior)
    let server = CloudCredentials(url: "http://127.0.0.1:\(listener.port)", token: "t", timeout: .seconds(1))
    do {
      _ = try await transport.make().send(request, to: server)
      Issue.record("a server that did not answer answered")
    } catch {
      #expect(error.kind == .offline)
      #expect(!error.neverSent, "the request reached the server: it may have acted")
      let cause = try #require(error.underlyingError)
      let expected: [TransportFailure] =
        switch behavior {
        case .silent: [.timedOut]
        // libcurl reports a close and a reset alike: the connection was lost.
        case .close: [.closed]
        case .reset: transport == .urlSession ? [.closed, .reset] : [.reset]
        case .answer: []
        }
      #expect(expected.contains(TransportFailure(cause)), "\(cause)")
    }
  }

  @Test("URLSession's failures are told apart by their code, not by their text")
  func urlErrorsClassified() {
    #expect(TransportFailure(URLError(.cannotConnectToHost)) == .refused)
    #expect(TransportFailure(URLError(.cannotFindHost)) == .unresolved)
    #expect(TransportFailure(URLError(.networkConnectionLost)) == .closed)
    #expect(TransportFailure(URLError(.timedOut)) == .timedOut)
    #expect(TransportFailure(URLError(.serverCertificateUntrusted)) == .tls)
    #expect(TransportFailure(URLError(.serverCertificateUntrusted)).isConfigurationMistake)
    #expect(!TransportFailure(URLError(.cannotConnectToHost)).isConfigurationMistake)
    // FoundationNetworking on Linux gives libcurl's TLS failures no code: its words name them.
    let untrusted = URLError(
      .unknown, userInfo: [NSLocalizedDescriptionKey: "SSL certificate problem: self-signed certificate"])
    #expect(TransportFailure(untrusted) == .tls)
    let notTLS = URLError(
      .unknown,
      userInfo: [NSLocalizedDescriptionKey: "OpenSSL/3.0.19: error:0A00010B:SSL routines::wrong version number"])
    #expect(TransportFailure(notTLS) == .tls, "a server that does not speak TLS")
    #expect(
      TransportFailure(URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "Failure when receiving data"])) != .tls
    )
  }

  #if AsyncHTTPClient
    @Test("AsyncHTTPClient's failures are told apart by type and errno, not by their text")
    func classifiedByType() {
      #expect(TransportFailure(IOError(errnoCode: ECONNREFUSED, reason: "connect")) == .refused)
      #expect(TransportFailure(IOError(errnoCode: ECONNRESET, reason: "read")) == .reset)
      #expect(TransportFailure(IOError(errnoCode: ETIMEDOUT, reason: "read")) == .timedOut)
      #expect(TransportFailure(ChannelError.connectTimeout(.seconds(5))) == .timedOut)
      #expect(TransportFailure(ChannelError.eof) == .closed)
      // A refusal's text no longer decides it: an error that only says so is "other".
      struct Lookalike: Error, CustomStringConvertible { var description: String { "Connection refused" } }
      #expect(TransportFailure(Lookalike()) == .other("Connection refused"))
      #expect(TransportFailure(IOError(errnoCode: ECONNREFUSED, reason: "x")).isConfigurationMistake == false)
      #expect(TransportFailure(NIOTooManyBytesError(maxBytes: 10)).isConfigurationMistake)
    }
  #endif

  @Test("a task cancelled mid-request (the budget ran out) cancels the request", arguments: Transport.allCases)
  func cancelled(transport: Transport) async throws {
    let listener = try LoopbackListener(.silent)
    let server = CloudCredentials(url: "http://127.0.0.1:\(listener.port)", token: "t")
    let request = self.request
    let sent = transport.make()
    let sending = Task { () async -> CloudError? in
      do throws(CloudError) {
        _ = try await sent.send(request, to: server)
        return nil
      } catch {
        return error
      }
    }
    sending.cancel()
    let error = await sending.value
    #expect(error?.kind == .cancelled)
  }
}
