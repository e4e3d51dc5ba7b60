import Foundation
import StasisMerge

/// Pretty JSON written as it is made, byte for byte what `JSONSerialization` writes with
/// sorted keys (the CLI's `jsonText`): `stasis dump --all-elements` streams a million
/// elements in the format `dump` always printed, without building them in memory first.
package final class StreamedJSON {
  package let output: TextOutput
  /// How many members each open container has so far, the innermost last.
  private var members: [Int] = []
  private var afterKey = false
  private var indents: [String] = [""]
  private var orders: [[String]: [Int]] = [:]

  package init(_ output: TextOutput) {
    self.output = output
  }

  /// An object whose members are written in `JSONSerialization`'s sorted-key order.
  package func object(_ members: [(key: String, write: () -> Void)]) {
    object(keys: members.map(\.key)) { members[$0].write() }
  }

  /// An object with `keys`, in sorted-key order, whose member `index` `write(index)` writes.
  package func object(keys: [String], _ write: (_ index: Int) -> Void) {
    object(keys: keys, order: keyOrder(keys), write)
  }

  /// As ``object(keys:_:)``, with the order ``keyOrder(_:)`` gave for these keys.
  package func object(keys: [String], order: [Int], _ write: (_ index: Int) -> Void) {
    open("{")
    for index in order {
      key(keys[index])
      write(index)
    }
    close("}")
  }

  /// The indices of `keys` in sorted-key order; remembered for the shapes a save repeats.
  package func keyOrder(_ keys: [String]) -> [Int] {
    if keys.count < 2 { return Array(keys.indices) }
    if let order = orders[keys] { return order }
    let order = keys.indices.sorted { jsonKeyPrecedes(keys[$0], keys[$1]) }
    if orders.count < 4096 { orders[keys] = order }
    return order
  }

  /// An array whose elements `body` writes.
  package func array(_ body: () -> Void) {
    open("[")
    body()
    close("]")
  }

  /// An array of `elements`, each written by `write`.
  package func array<S: Sequence>(_ elements: S, _ write: (S.Element) -> Void) {
    array {
      for element in elements { write(element) }
    }
  }

  package func string(_ text: String) {
    beginValue()
    writeQuoted(text)
  }

  package func number<Integer: BinaryInteger>(_ integer: Integer) {
    beginValue()
    output.write(String(integer))
  }

  /// A finite float as `JSONSerialization` writes it: its shortest text, without a `.0`.
  package func number<Float: BinaryFloatingPoint & CustomStringConvertible>(_ float: Float) {
    beginValue()
    let text = float.description
    output.write(text.hasSuffix(".0") ? String(text.dropLast(2)) : text)
  }

  package func bool(_ flag: Bool) {
    beginValue()
    output.write(flag ? "true" : "false")
  }

  package func null() {
    beginValue()
    output.write("null")
  }

  /// Ends the document with a newline, as `print` did.
  package func finish() {
    output.write("\n")
  }

  private func key(_ name: String) {
    beginValue()
    writeQuoted(name)
    output.write(" : ")
    afterKey = true
  }

  private func open(_ bracket: String) {
    beginValue()
    output.write(bracket)
    members.append(0)
  }

  private func close(_ bracket: String) {
    let count = members.removeLast()
    output.write(count == 0 ? "\n\n" : "\n")
    output.write(indent(members.count))
    output.write(bracket)
  }

  /// The separator and indentation before a value (or a key) in the innermost container.
  private func beginValue() {
    if afterKey {
      afterKey = false
      return
    }
    guard let count = members.last else { return }
    output.write(count == 0 ? "\n" : ",\n")
    output.write(indent(members.count))
    members[members.count - 1] = count + 1
  }

  private func indent(_ depth: Int) -> String {
    while indents.count <= depth { indents.append(indents[indents.count - 1] + "  ") }
    return indents[depth]
  }

  private func writeQuoted(_ text: String) {
    output.write("\"")
    // Most names and strings need no escape: written whole.
    if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C }) {
      output.write(text)
    } else {
      var escaped = ""
      for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": escaped += "\\\""
        case "\\": escaped += "\\\\"
        case "\u{8}": escaped += "\\b"
        case "\u{C}": escaped += "\\f"
        case "\n": escaped += "\\n"
        case "\r": escaped += "\\r"
        case "\t": escaped += "\\t"
        case "\u{0}"..."\u{F}": escaped += "\\u000" + String(scalar.value, radix: 16)
        case "\u{10}"..."\u{1F}": escaped += "\\u00" + String(scalar.value, radix: 16)
        default: escaped.unicodeScalars.append(scalar)
        }
      }
      output.write(escaped)
    }
    output.write("\"")
  }
}

/// `JSONSerialization`'s order of sorted keys on Linux: numeric, case-insensitive, then forced.
func jsonKeyPrecedes(_ a: String, _ b: String) -> Bool {
  a.compare(
    b, options: [.numeric, .caseInsensitive, .forcedOrdering], range: a.startIndex..<a.endIndex,
    locale: NSLocale.system as Locale) == .orderedAscending
}
