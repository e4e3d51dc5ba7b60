import NIOCore
import NIOHTTP1

/// A connection past the cap: answered `503 Service Unavailable` with `Retry-After` and the
/// API's JSON error as soon as it opens, without parsing anything, then closed. The output
/// closes first (the client reads the answer, then the end), what the client sends is read
/// and dropped, and the connection closes when the client does or after ``linger``, whichever
/// comes first, so a shed connection holds its descriptor for a moment at most.
final class ShedConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer

  /// How long a shed connection may stay open for its client to read the answer.
  static let linger = TimeAmount.milliseconds(500)
  /// `Retry-After`, in seconds.
  static let retryAfter = 1
  static let message = "the server is at its connection limit; retry after \(retryAfter) s"

  private var answered = false

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { answer(context) }
  }

  func channelActive(context: ChannelHandlerContext) {
    answer(context)
    context.fireChannelActive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if case ChannelEvent.inputClosed = event { context.close(promise: nil) }
  }

  func errorCaught(context: ChannelHandlerContext, error: Error) { context.close(promise: nil) }

  private func answer(_ context: ChannelHandlerContext) {
    guard !answered else { return }
    answered = true
    let head = errorHead(.serviceUnavailable, Self.message, extra: [("Retry-After", String(Self.retryAfter))])
    var bytes = ByteBuffer()
    bytes.writeString("HTTP/1.1 \(head.status.code) \(head.status.reasonPhrase)\r\n")
    for header in head.headers { bytes.writeString("\(header.name): \(header.value)\r\n") }
    bytes.writeString("\r\n")
    var body = errorBody(Self.message)
    bytes.writeBuffer(&body)
    let channel = context.channel
    context.writeAndFlush(NIOAny(bytes)).whenComplete { _ in
      channel.close(mode: .output, promise: nil)
    }
    channel.eventLoop.scheduleTask(in: Self.linger) { channel.close(promise: nil) }
  }
}
