import Metrics
import NIOCore
import NIOHTTP1

/// One deadline for the whole of each exchange: the request's headers and body, the handler's
/// work, and the answer's last byte, on every route.
///
/// The clock starts when the connection is ready for a request (when it opens, and again when
/// the previous exchange is over) and stops only when the request has arrived whole *and* the
/// answer's last byte has been written; bytes that trickle in do not move it. A slow handler,
/// a slow database or a client that never reads its answer cannot hold a connection past it.
/// When it passes:
/// - before the request's headers are whole: `408` when some of it arrived, and the connection
///   closes (an idle keep-alive connection just closes);
/// - headers read, no answer yet, a body still coming: `408`, the handler's body stream fails
///   so nothing is stored, and anything the handler writes later is dropped;
/// - the request whole, no answer yet (a slow handler or database): `503`, and anything the
///   handler writes later is dropped (an upload that commits afterwards is recognised by its
///   SHA-256 when the client retries, as after any lost answer);
/// - answered, or answering (a `413` whose body is still coming, an answer the client does
///   not read): the connection closes.
///
/// It also answers the HTTP parser's own errors with the API's JSON `400`. It sits right after
/// the HTTP/1 decoder, so it sees NIO's request parts and the parser's errors first.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias InboundOut = HTTPServerRequestPart
  typealias OutboundIn = HTTPServerResponsePart
  typealias OutboundOut = HTTPServerResponsePart

  /// The error a handler's body stream fails with when the deadline passes.
  struct Expired: Error {}

  private let timeout: TimeAmount
  private let bytes: RequestBytes
  private var scheduled: Scheduled<Void>?
  private var headReceived = false
  private var requestEnded = false
  private var responseStarted = false
  private var responseEnded = false
  /// This handler answered (408 or 400): what the application writes is dropped, what the
  /// client sends is ignored, and the connection is closing.
  private var finishing = false

  init(timeout: TimeAmount, bytes: RequestBytes) {
    self.timeout = timeout
    self.bytes = bytes
  }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { arm(context) }
  }

  func handlerRemoved(context: ChannelHandlerContext) { disarm() }

  func channelActive(context: ChannelHandlerContext) {
    arm(context)
    context.fireChannelActive()
  }

  func channelInactive(context: ChannelHandlerContext) {
    disarm()
    context.fireChannelInactive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard !finishing else { return }
    switch unwrapInboundIn(data) {
    case .head: headReceived = true
    case .body: break
    case .end:
      requestEnded = true  // the clock runs on: the answer is part of the exchange
      if responseEnded { nextExchange(context) }
    }
    context.fireChannelRead(data)
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    guard !finishing else {
      promise?.fail(ChannelError.ioOnClosedChannel)
      return
    }
    switch unwrapOutboundIn(data) {
    case .head: responseStarted = true
    case .body: break
    case .end:
      // Over once the last byte is written, not when it is handed over: a client that never
      // reads its answer keeps the write pending, and the deadline closes it.
      let written = promise ?? context.eventLoop.makePromise()
      written.futureResult.assumeIsolatedUnsafeUnchecked().whenSuccess { [self] in
        guard !finishing else { return }
        responseEnded = true
        if requestEnded { nextExchange(context) }
      }
      context.write(data, promise: written)
      return
    }
    context.write(data, promise: promise)
  }

  /// The exchange is over once both sides are: the next request's clock starts now.
  private func nextExchange(_ context: ChannelHandlerContext) {
    headReceived = false
    requestEnded = false
    responseStarted = false
    responseEnded = false
    bytes.arrived = false
    disarm()  // the finished exchange's clock stops; the next request's starts now
    arm(context)
  }

  func errorCaught(context: ChannelHandlerContext, error: Error) {
    guard error is HTTPParserError else {
      context.fireErrorCaught(error)
      return
    }
    Counter(label: "stasis_malformed_requests_total").increment()
    if responseStarted || finishing {
      context.close(promise: nil)
    } else {
      answer(context, .badRequest, "the request is not valid HTTP/1.1 (\(error))")
    }
  }

  // MARK: The deadline

  private func arm(_ context: ChannelHandlerContext) {
    guard scheduled == nil, !finishing else { return }
    let loop = context.eventLoop.assumeIsolatedUnsafeUnchecked()
    scheduled = loop.scheduleTask(in: timeout) { [self] in
      scheduled = nil
      expire(context)
    }
  }

  private func disarm() {
    scheduled?.cancel()
    scheduled = nil
  }

  private func expire(_ context: ChannelHandlerContext) {
    guard !finishing, context.channel.isActive else { return }
    if !headReceived {
      guard bytes.arrived else {
        // An idle connection, new or kept alive: nothing to answer.
        finishing = true
        context.close(promise: nil)
        return
      }
      Counter(label: "stasis_requests_timed_out_total").increment()
      answer(context, .requestTimeout, "the request did not arrive whole within \(Self.seconds(timeout))")
    } else if !responseStarted, !requestEnded {
      Counter(label: "stasis_requests_timed_out_total").increment()
      // The handler waiting on the body learns it will not come: its stream fails, so an
      // upload stores nothing.
      context.fireErrorCaught(Expired())
      answer(context, .requestTimeout, "the request's body did not arrive within \(Self.seconds(timeout))")
    } else if !responseStarted {
      Counter(label: "stasis_requests_timed_out_total").increment()
      answer(
        context, .serviceUnavailable, "the server did not answer within \(Self.seconds(timeout)); try again",
        extra: [("Retry-After", String(DatabaseUnavailable.retryAfter))])
    } else {
      Counter(label: "stasis_requests_timed_out_total").increment()
      finishing = true
      context.close(promise: nil)
    }
  }

  /// Answers with the API's JSON error and closes: the output first, so the answer is not
  /// lost to a reset, then the whole connection once the client has had a moment to read it.
  private func answer(
    _ context: ChannelHandlerContext, _ status: HTTPResponseStatus, _ message: String, extra: [(String, String)] = []
  ) {
    finishing = true
    disarm()
    context.write(wrapOutboundOut(.head(errorHead(status, message, extra: extra))), promise: nil)
    context.write(wrapOutboundOut(.body(.byteBuffer(errorBody(message)))), promise: nil)
    let channel = context.channel
    context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
      channel.close(mode: .output, promise: nil)
      channel.eventLoop.scheduleTask(in: .milliseconds(500)) { channel.close(promise: nil) }
    }
  }

  private static func seconds(_ amount: TimeAmount) -> String {
    let value = Double(amount.nanoseconds) / 1e9
    return value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
  }
}

/// Whether any byte of the next request has arrived: set by ``RequestBytesObserver`` at the
/// front of the pipeline, read and reset by ``RequestDeadlineHandler``. Both run on the
/// connection's event loop.
final class RequestBytes {
  var arrived = false
}

/// Notes that bytes arrived, before the HTTP decoder has a whole request head to show.
final class RequestBytesObserver: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer
  typealias InboundOut = ByteBuffer
  private let bytes: RequestBytes

  init(_ bytes: RequestBytes) { self.bytes = bytes }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    bytes.arrived = true
    context.fireChannelRead(data)
  }
}

/// `{"error": message}` as bytes.
func errorBody(_ message: String) -> ByteBuffer {
  ByteBuffer(string: JSON.object(["error": .string(message)]).text)
}

/// The head of an error answered below the router: JSON, its length, and `Connection: close`.
func errorHead(_ status: HTTPResponseStatus, _ message: String, extra: [(String, String)] = []) -> HTTPResponseHead {
  var headers = HTTPHeaders([
    ("Content-Type", "application/json"), ("Content-Length", String(errorBody(message).readableBytes)),
    ("Connection", "close"),
  ])
  headers.add(contentsOf: extra)
  return HTTPResponseHead(version: .http1_1, status: status, headers: headers)
}
