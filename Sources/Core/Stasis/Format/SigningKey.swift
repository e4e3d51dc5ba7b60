import Crypto

/// A secret that signs saves with HMAC-SHA256, so an edited save is refused even when its
/// checksums were recomputed. Checksums catch accidents; only a signature catches edits.
public struct SigningKey: Sendable {
  // The bytes, not a `SymmetricKey`: that type is not `Sendable` in swift-crypto 3.
  private let secret: [UInt8]
  private var key: SymmetricKey { SymmetricKey(data: secret) }

  /// A key from secret bytes (at least 16; 32 recommended).
  public init(bytes: [UInt8]) {
    secret = bytes
  }

  /// The 32-byte signature of `bytes`.
  func signature(of bytes: UnsafeRawBufferPointer) -> [UInt8] {
    Array(HMAC<SHA256>.authenticationCode(for: bytes, using: key))
  }

  /// True when `signature` is the signature of `bytes` (compared in constant time).
  func isValid(_ signature: UnsafeRawBufferPointer, for bytes: UnsafeRawBufferPointer) -> Bool {
    HMAC<SHA256>.isValidAuthenticationCode(signature, authenticating: bytes, using: key)
  }
}

extension SigningKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  /// Never the secret: `SigningKey(32 bytes, redacted)`.
  public var description: String { "SigningKey(\(secret.count) bytes, redacted)" }

  /// The same as ``description``.
  public var debugDescription: String { description }

  /// No secret in `dump` or a debugger either.
  public var customMirror: Mirror { Mirror(self, children: ["byteCount": secret.count]) }
}
