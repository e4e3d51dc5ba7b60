/// Where the renderers write: handed on 64 KB at a time to a sink (the CLI's standard output,
/// so a listing of a million elements is never held whole in memory), or kept whole, for
/// ``SaveInspection``'s strings.
package final class TextOutput {
  /// The ANSI colours the renderers paint with, on a terminal only.
  package enum Colour: String, Sendable {
    case red = "31"
    case green = "32"
    case yellow = "33"
    case bold = "1"
    case dim = "2"

    /// `text` between this colour's escape and the reset.
    package func paint(_ text: String) -> String { "\u{1B}[\(rawValue)m\(text)\u{1B}[0m" }
  }

  /// Whether ``paint(_:_:)`` colours: a terminal's output, never a kept one.
  package let colours: Bool
  private var buffer: [UInt8] = []
  private let sink: ((UnsafeRawBufferPointer) -> Void)?
  /// The buffered bytes that make ``flush()`` hand them on; kept output never does.
  private let capacity: Int

  /// Output handed to `sink` 64 KB at a time, and what is left by ``flush()``.
  package init(colours: Bool, sink: @escaping (UnsafeRawBufferPointer) -> Void) {
    self.colours = colours
    self.sink = sink
    capacity = 1 << 16
    buffer.reserveCapacity(capacity)
  }

  /// Output kept whole, without colours: ``text`` and ``bytes`` are all that was written.
  package init() {
    colours = false
    sink = nil
    capacity = .max
  }

  deinit { flush() }

  package func write(_ text: String) {
    buffer.append(contentsOf: text.utf8)
    if buffer.count >= capacity { flush() }
  }

  package func line(_ text: String) {
    write(text)
    write("\n")
  }

  package func paint(_ text: String, _ colour: Colour) -> String { colours ? colour.paint(text) : text }

  /// Hands what is buffered to the sink; call it before anything else writes to the same
  /// descriptor. Kept output keeps it.
  package func flush() {
    guard let sink, !buffer.isEmpty else { return }
    buffer.withUnsafeBytes { sink($0) }
    buffer.removeAll(keepingCapacity: true)
  }

  /// What kept output holds.
  package var bytes: [UInt8] { buffer }

  /// What kept output holds, as text.
  package var text: String { String(decoding: buffer, as: UTF8.self) }
}
