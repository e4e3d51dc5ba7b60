/// Why a three-way merge could not be made at all: the merge layer's own error, apart from the
/// file's (`SaveFileError`) and the cloud's. A refused merge changes nothing; the caller falls
/// back to one whole side (the sync) or says why and writes nothing (`stasis merge`).
public struct MergeRefusal: Error, Sendable, Equatable, CustomStringConvertible {
  /// What kind of refusal. Each kind means one thing.
  ///
  /// A struct with static members, as `SaveFileError.Kind` is: a kind added later breaks no
  /// one's `switch`.
  public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The kind's stable name.
    public let rawValue: String

    /// A kind by its name.
    public init(rawValue: String) { self.rawValue = rawValue }

    public var description: String { rawValue }

    /// The saves are of different games (``SaveDocument/game``'s names differ).
    public static let differentGames = Kind(rawValue: "differentGames")
    /// The saves are of one game but different schema versions: migrate them to one first.
    public static let differentSchemas = Kind(rawValue: "differentSchemas")
    /// A declared path (``MergeRules``) is in none of the three saves: a declaration never
    /// does nothing in silence.
    public static let unknownPath = Kind(rawValue: "unknownPath")
    /// A path declared by key has an element without the key's field.
    public static let missingKey = Kind(rawValue: "missingKey")
  }

  /// What kind of refusal.
  public var kind: Kind
  /// What was refused, naming the games, the schemas or the path: one line.
  public var message: String

  /// A refusal of `kind`, said by `message`.
  public init(_ kind: Kind, _ message: String) {
    self.kind = kind
    self.message = message
  }

  /// The message.
  public var description: String { message }
}
