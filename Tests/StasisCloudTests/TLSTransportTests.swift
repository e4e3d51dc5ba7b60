import Foundation
import Stasis
import Testing

@testable import StasisCloud

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if AsyncHTTPClient
  import AsyncHTTPClient
  import NIOSSL
#endif

/// A TLS server of OpenSSL's own (`openssl s_server -www`: a status page for any `GET`), with a
/// certificate made for the test and signed by nobody a system trusts. It listens on a port
/// the system picks, which it prints before it accepts.
private final class TLSServer: Sendable {
  let port: Int
  /// The certificate, which is its own root (PEM).
  let certificate: String
  private let process: Process

  init() throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("stasis-tls-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    certificate = folder + "/certificate.pem"
    let key = folder + "/key.pem"
    try Self.openssl([
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
      "-keyout", key, "-out", certificate, "-subj", "/CN=localhost",
      "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ])
    process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["openssl", "s_server", "-accept", "127.0.0.1:0", "-cert", certificate, "-key", key, "-www"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    // It prints `ACCEPT 127.0.0.1:PORT` once it listens: read up to that line (no sleep).
    var printed = ""
    while !(printed.range(of: "ACCEPT").map { printed[$0.upperBound...].contains("\n") } ?? false) {
      let chunk = output.fileHandleForReading.availableData
      guard !chunk.isEmpty else { break }
      printed += String(decoding: chunk, as: UTF8.self)
    }
    let line = printed.split(separator: "\n").first { $0.hasPrefix("ACCEPT") }
    guard let line, let port = line.split(separator: ":").last.flatMap({ Int($0) }) else {
      kill(process.processIdentifier, SIGKILL)
      throw TLSServerError(printed: printed)
    }
    self.port = port
  }

  struct TLSServerError: Error, CustomStringConvertible {
    var printed: String
    var description: String { "openssl s_server did not say where it listens: \(printed)" }
  }

  private static func openssl(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["openssl"] + arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw TLSServerError(printed: "openssl \(arguments[0]) failed") }
  }

  /// Ends it with SIGKILL: a child inherits the test runner's signal mask, in which SIGTERM
  /// (`Process.terminate()`) may be blocked.
  func stop() {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }
}

/// Runs `body` with a TLS server, started and stopped on a thread of its own: starting waits
/// on `openssl` and a pipe, stopping on the process's exit, and neither may hold a thread of the
/// tests' shared pool (on 2 cores, that starved a test whose loop never yields).
private func withTLSServer(_ body: (TLSServer) async throws -> Void) async throws {
  let server = try await onOwnThread { try TLSServer() }
  do {
    try await body(server)
  } catch {
    try await onOwnThread { server.stop() }
    throw error
  }
  try await onOwnThread { server.stop() }
}

private func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
  }
}

/// Both transports over TLS, against a real TLS server (OpenSSL's) on loopback: the handshake
/// happens, the certificate is checked, and a certificate no trusted root signed is a set-up
/// mistake (`refused`, no retry), never `offline`.
@Suite("HTTP transports over TLS: a certificate is checked, an untrusted one refused")
struct TLSTransportTests {
  @Test(
    "a server whose certificate no trusted root signed is refused, named a TLS failure", arguments: Transport.allCases)
  func untrustedCertificateRefused(transport: Transport) async throws {
    try await withTLSServer { server in
      let credentials = CloudCredentials(url: "https://localhost:\(server.port)", token: "t", timeout: .seconds(10))
      do {
        _ = try await transport.make().send(CloudRequest(method: "GET", path: "/"), to: credentials)
        Issue.record("a self-signed certificate was accepted")
      } catch let error as CloudError {
        #expect(error.kind == .refused, "no retry mends a certificate: \(error)")
        #expect(error.message.contains("TLS failed"), "\(error.message)")
        let cause = try #require(error.underlyingError)
        #expect(TransportFailure(cause) == .tls, "\(cause)")
      }
    }
  }

  #if AsyncHTTPClient
    @Test("AsyncHTTPClient told to trust the studio's own root carries the request over TLS")
    func trustedRootCarriesTheRequest() async throws {
      try await withTLSServer { server in
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(server.certificate)
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        let credentials = CloudCredentials(url: "https://localhost:\(server.port)", token: "t", timeout: .seconds(10))
        do {
          let answer = try await HTTPCloudTransport(http: client).send(
            CloudRequest(method: "GET", path: "/"), to: credentials)
          #expect(answer.status == 200)
          // OpenSSL's status page names the protocol the handshake agreed on.
          #expect(String(decoding: answer.body, as: UTF8.self).contains("TLSv1."), "the answer came over TLS")
        } catch {
          Issue.record("\(error)")
        }
        try await client.shutdown()
      }
    }
  #endif
}
