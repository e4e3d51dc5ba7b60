/// What became of a save's signature when it was verified under a ``SigningPolicy``.
public enum SignatureStatus: Sendable, Equatable {
  /// The save carries no signature.
  case unsigned
  /// The save is signed, but the policy has no key to check it with.
  case notChecked
  /// A key of the policy matched: the current one, or a retired one (the save will be
  /// signed with the current key on its next save).
  case valid(byCurrentKey: Bool)
  /// The save is signed and no key of the policy matches: edited, or signed with another key.
  case invalid

  /// One word for tools: `unsigned`, `not checked`, `valid`, `invalid`.
  public var label: String {
    switch self {
    case .unsigned: return "unsigned"
    case .notChecked: return "not checked"
    case .valid: return "valid"
    case .invalid: return "invalid"
    }
  }
}
