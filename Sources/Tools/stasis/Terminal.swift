import Foundation
import StasisInspect
import StasisMerge

#if canImport(Glibc)
  import Glibc

  private let systemWrite = Glibc.write
#elseif canImport(Darwin)
  import Darwin

  private let systemWrite = Darwin.write
#endif

/// Output to a terminal or a pipe: colour and aligned tables on a terminal, plain text when
/// piped (or when NO_COLOR is set).
struct Terminal {
  let descriptor: Int32
  let isTerminal: Bool

  static let standardOutput = Terminal(descriptor: STDOUT_FILENO)
  static let standardError = Terminal(descriptor: STDERR_FILENO)

  init(descriptor: Int32) {
    self.descriptor = descriptor
    isTerminal = isatty(descriptor) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
  }

  typealias Colour = TextOutput.Colour

  func paint(_ text: String, _ colour: Colour) -> String {
    isTerminal ? colour.paint(text) : text
  }

  func write(_ text: String) {
    Data(text.utf8).withUnsafeBytes { write($0) }
  }

  func write(_ raw: UnsafeRawBufferPointer) {
    var done = 0
    while done < raw.count {
      let count = systemWrite(descriptor, raw.baseAddress! + done, raw.count - done)
      if count <= 0 { return }
      done += count
    }
  }

  func line(_ text: String) { write(text + "\n") }

  /// Columns padded to their widest cell; numbers right-aligned.
  func table(_ header: [String], _ rows: [[String]], rightAligned: Set<Int> = []) {
    let widths = header.indices.map { column in
      ([header[column]] + rows.map { $0[column] }).map { visibleWidth($0) }.max() ?? 0
    }
    func render(_ cells: [String]) -> String {
      cells.enumerated().map { column, cell in
        let padding = String(repeating: " ", count: widths[column] - visibleWidth(cell))
        return rightAligned.contains(column) ? padding + cell : cell + padding
      }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
    }
    line(paint(render(header), .bold))
    for row in rows { line(render(row)) }
  }

  private func visibleWidth(_ text: String) -> Int {
    text.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression).count
  }
}

/// JSON text with sorted keys, for `--json` and `dump`.
func jsonText(_ object: Any, pretty: Bool = true) -> String {
  var options: JSONSerialization.WritingOptions = [.sortedKeys, .withoutEscapingSlashes]
  if pretty { options.insert(.prettyPrinted) }
  let data = (try? JSONSerialization.data(withJSONObject: object, options: options)) ?? Data("null".utf8)
  return String(decoding: data, as: UTF8.self)
}

/// A creation time as ISO 8601 in UTC.
func isoDate(milliseconds: Int64) -> String {
  let formatter = ISO8601DateFormatter()
  formatter.formatOptions = [.withInternetDateTime]
  formatter.timeZone = TimeZone(identifier: "UTC")
  return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
}

extension TextOutput {
  /// Output to `terminal` 64 KB at a time, coloured when it is a terminal: a listing of a
  /// million elements is written as it is made, and never held whole in memory.
  convenience init(_ terminal: Terminal) {
    self.init(colours: terminal.isTerminal) { terminal.write($0) }
  }
}
