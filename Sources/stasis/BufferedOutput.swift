/// Standard output written 64 KB at a time: a listing of a million elements is written as it
/// is made, and never held whole in memory.
final class BufferedOutput {
  /// The terminal it writes to, whose colours `paint` uses.
  let terminal: Terminal
  private var buffer: [UInt8] = []
  private let capacity = 1 << 16

  init(_ terminal: Terminal = .standardOutput) {
    self.terminal = terminal
    buffer.reserveCapacity(capacity)
  }

  deinit { flush() }

  func write(_ text: String) {
    buffer.append(contentsOf: text.utf8)
    if buffer.count >= capacity { flush() }
  }

  func line(_ text: String) {
    write(text)
    write("\n")
  }

  func paint(_ text: String, _ colour: Terminal.Colour) -> String { terminal.paint(text, colour) }

  /// Writes what is buffered; call it before anything else writes to the same descriptor.
  func flush() {
    guard !buffer.isEmpty else { return }
    buffer.withUnsafeBytes { terminal.write($0) }
    buffer.removeAll(keepingCapacity: true)
  }
}
