import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1.1 connection with the server's limits: a connection past the cap is
/// shed (``ShedConnectionHandler``), one within it is served with a deadline on each whole
/// request (``RequestDeadlineHandler``).
struct GuardedHTTP1Channel: ServerChildChannel {
  /// A connection: served over HTTP/1.1, or shed (`http` is nil).
  struct Value: ServerChildChannelValue {
    let channel: any Channel
    let http: HTTP1Channel.Value?
  }

  let http1: HTTP1Channel
  let gate: ConnectionGate
  let requestTimeout: TimeAmount

  func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
    guard gate.admit() else {
      return channel.eventLoop.makeCompletedFuture {
        try channel.pipeline.syncOperations.addHandler(ShedConnectionHandler())
        return Value(channel: channel, http: nil)
      }
    }
    let gate = self.gate
    channel.closeFuture.whenComplete { _ in gate.leave() }
    let timeout = requestTimeout
    return http1.setup(channel: channel, logger: logger).flatMapThrowing { http in
      let operations = channel.pipeline.syncOperations
      let bytes = RequestBytes()
      let decoder = try operations.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
      try operations.addHandler(RequestDeadlineHandler(timeout: timeout, bytes: bytes), position: .after(decoder))
      try operations.addHandler(RequestBytesObserver(bytes), position: .first)
      return Value(channel: channel, http: http)
    }
  }

  func handle(value: Value, logger: Logger) async {
    guard let http = value.http else { return }
    await http1.handle(value: http, logger: logger)
  }
}

extension SaveServer {
  /// The HTTP/1.1 server with the limits of ``ServerOptions``: `Application(router:server:)`'s
  /// `server`. Pass the same `gate` as the configuration's `availableConnectionsDelegate`
  /// (``ConnectionGate/acceptance``), so the listening socket stops accepting when both the
  /// served connections and the shedding band are full.
  ///
  /// ```swift
  /// let gate = ConnectionGate(ConnectionLimits(maximum: 800))
  /// let app = Application(
  ///   router: server.router(), server: server.httpServer(gate: gate),
  ///   configuration: .init(address: .hostname("127.0.0.1", port: 8080), availableConnectionsDelegate: gate.acceptance))
  /// ```
  package func httpServer(gate: ConnectionGate) -> HTTPServerBuilder {
    let timeout = TimeAmount.nanoseconds(Int64(options.requestTimeout / .nanoseconds(1)))
    return HTTPServerBuilder { responder in
      GuardedHTTP1Channel(
        // Headers up to 1 MB reach the router, which refuses more than 16 KB with a JSON 431.
        // Idle connections are closed by the request deadline, not by an idle timer.
        http1: HTTP1Channel(
          responder: responder,
          configuration: .init(
            idleTimeout: nil,
            httpDecoderConfiguration: .init(maxHeaderFieldSize: 1 << 20, maxHeaderListSize: 1 << 20))),
        gate: gate, requestTimeout: timeout)
    }
  }
}
