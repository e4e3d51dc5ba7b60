/// A game state that checks its own values before anything simulates or draws it.
///
/// Checksums prove a save is whole, not that its values are sane: a save editor, a shared
/// save or a compromised device can write a NaN velocity or a body index out of range and
/// recompute every checksum. ``SaveCodec/state(from:path:)`` calls ``validate()`` after
/// decoding, so ``SaveStore/load(codec:slot:fallback:)`` treats a state that fails as a damaged
/// generation (``SaveFileError/Kind/invalidState``) and falls back to an older one.
///
/// ```swift
/// extension GameState: ValidatedSaveState {
///   func validate() throws(InvalidStateError) {
///     guard player.health.isFinite, player.health >= 0 else {
///       throw InvalidStateError(field: "player.health", value: "\(player.health)", reason: "must be finite and ≥ 0")
///     }
///   }
/// }
/// ```
public protocol ValidatedSaveState {
  /// Throws for the first value that the game cannot simulate or draw.
  func validate() throws(InvalidStateError)
}

/// A decoded state that the game cannot use: which field, its value, and why.
public struct InvalidStateError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The field path from the state's root, e.g. `physics.bodies[3].radius`.
  public var field: String
  /// The offending value, as text.
  public var value: String
  /// What the value should be, e.g. `must be finite and positive`.
  public var reason: String

  /// Creates an error.
  public init(field: String, value: String, reason: String) {
    self.field = field
    self.value = value
    self.reason = reason
  }

  /// `physics.bodies[3].radius = nan: must be finite and positive`.
  public var description: String { "\(field) = \(value): \(reason)" }
}
