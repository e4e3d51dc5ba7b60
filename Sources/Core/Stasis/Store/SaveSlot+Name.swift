// A slot is a folder inside the save folder, so its name must never reach outside it or
// confuse the file system: the rules a slot's name follows.
extension SaveSlot {
  /// Longest slot name, in bytes.
  public static let maxNameLength = 64

  /// Throws `invalidSlotName` unless `name` is 1–64 characters of letters, digits, `-`, `_`
  /// and `.`, not starting with `.` (no `..`, no separators, no control characters).
  public static func validate(_ name: String) throws(SaveFileError) {
    func refuse(_ why: String) -> SaveFileError {
      let shown = name.count > 40 ? String(name.prefix(40)) + "…" : name
      return SaveFileError(
        .invalidSlotName,
        "slot name '\(shown.unicodeScalars.map { $0.properties.generalCategory == .control ? "?" : String($0) }.joined())' \(why)",
        suggestion: "use letters, digits, '-', '_' and '.'")
    }
    guard !name.isEmpty else { throw refuse("is empty") }
    guard name.utf8.count <= maxNameLength else { throw refuse("is longer than \(maxNameLength) bytes") }
    guard !name.hasPrefix(".") else { throw refuse("starts with '.'") }
    for scalar in name.unicodeScalars {
      let allowed =
        scalar.isASCII
        && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_.".unicodeScalars.contains(scalar))
      guard allowed else {
        throw refuse(
          "contains '\(scalar.properties.generalCategory == .control ? "control character" : String(scalar))'")
      }
    }
  }
}
