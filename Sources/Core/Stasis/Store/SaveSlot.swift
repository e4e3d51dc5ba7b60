/// A save slot: a folder in the save folder, named by letters, digits, `-`, `_` and `.`.
/// Every store call takes a `SaveSlot`, and no store call reaches the disk with a name that
/// fails ``validate(_:)``.
///
/// ```swift
/// let slot: SaveSlot = "autosave"                 // a literal
/// let chosen = try SaveSlot(playerTypedName)      // anything else: a typed error at once
/// ```
///
/// Swift hands a literal to ``init(stringLiteral:)`` however it is spelled — `try
/// SaveSlot("../escape")` included — and that initializer cannot throw. It does not stop the
/// program either: an invalid literal makes a slot that every store call refuses with
/// ``SaveFileError/Kind/invalidSlotName`` (``isValid`` is false; ``validated()`` throws the error).
public struct SaveSlot: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
  /// The slot's name, as on disk.
  public let name: String
  /// Why the name is refused: set only for an invalid literal.
  let refusal: SaveFileError?

  /// A slot named `name`, or `invalidSlotName` when the name could leave the save folder or
  /// confuse the file system (see ``validate(_:)``).
  public init(_ name: String) throws(SaveFileError) {
    try Self.validate(name)
    self.name = name
    refusal = nil
  }

  /// A slot named by a literal in the source. An invalid literal never stops the program: the
  /// slot it makes is refused, with the same error ``init(_:)`` throws, by every store call.
  public init(stringLiteral name: String) {
    self.name = name
    do {
      try Self.validate(name)
      refusal = nil
    } catch {
      refusal = error
    }
  }

  /// False for a slot made from an invalid literal, which every store call refuses.
  public var isValid: Bool { refusal == nil }

  /// The slot itself, or the `invalidSlotName` error of an invalid literal.
  @discardableResult
  public func validated() throws(SaveFileError) -> SaveSlot {
    if let refusal { throw refusal }
    return self
  }

  /// The name.
  public var description: String { name }

  /// By name.
  public static func == (lhs: SaveSlot, rhs: SaveSlot) -> Bool { lhs.name == rhs.name }

  /// By name.
  public func hash(into hasher: inout Hasher) { hasher.combine(name) }

  /// By name.
  public static func < (lhs: SaveSlot, rhs: SaveSlot) -> Bool { lhs.name < rhs.name }
}
