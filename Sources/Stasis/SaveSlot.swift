/// A save slot: a folder in the save folder, named by letters, digits, `-`, `_` and `.`,
/// checked once, when it is made — every store call takes a `SaveSlot`, so none checks again.
///
/// ```swift
/// let slot: SaveSlot = "autosave"                 // a literal: a bad one stops at once
/// let chosen = try SaveSlot(playerTypedName)      // anything else: a typed error
/// ```
public struct SaveSlot: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
  /// The slot's name, as on disk.
  public let name: String

  /// A slot named `name`, or `invalidSlotName` when the name could leave the save folder or
  /// confuse the file system (see ``SlotName/validate(_:)``).
  public init(_ name: String) throws(SaveFileError) {
    try SlotName.validate(name)
    self.name = name
  }

  /// A slot named by a literal in the source. An invalid literal is a programmer's error and
  /// stops the program at once; names from anywhere else go through ``init(_:)``.
  public init(stringLiteral name: String) {
    do {
      try self.init(name)
    } catch {
      preconditionFailure("\(error)")
    }
  }

  /// The name.
  public var description: String { name }

  /// By name.
  public static func < (lhs: SaveSlot, rhs: SaveSlot) -> Bool { lhs.name < rhs.name }
}
