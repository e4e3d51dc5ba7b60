import Foundation

/// Which keys sign and verify saves, and whether saves written before signing was turned
/// on are still accepted: what lets a shipped game turn signing on, or rotate its key,
/// without refusing the saves its players already have.
///
/// - `current` signs every new save (nil: saves are written unsigned).
/// - `retired` keys verify old saves but never sign.
/// - `acceptsUnsigned` accepts unsigned saves under a policy with keys: the saves players
///   made before the game turned signing on.
///
/// A signed save is accepted when any of the keys matches its signature; when none does it is
/// refused with `signatureMismatch` — an edited save is refused however the policy reads.
/// Under a policy with no key at all (``none``), signatures are not checked. A store always
/// signs with `current`, so an accepted unsigned or retired-key save is signed with the
/// current key on its next save, and once every player has saved again the old key can go.
///
/// Turning signing on in an update, keeping the players' unsigned saves:
///
/// ```swift
/// let key = SigningKey(bytes: secret)                 // 32 random bytes, kept out of the repository
/// let store = SaveStore(directory: "Saves", signing: .signed(with: key, acceptingUnsigned: true))
/// ```
///
/// Rotating the key (the old one leaked): sign with the new one, verify with both.
///
/// ```swift
/// let store = SaveStore(
///   directory: "Saves", signing: .signed(with: newKey, retired: [oldKey], acceptingUnsigned: true))
/// ```
///
/// While `acceptsUnsigned` is on, an edited save written unsigned (its checksums recomputed, no
/// signature) passes as a player's old one: turn it off once players have saved again.
///
/// A key never appears in a description, a log line or an error message.
public struct SigningPolicy: Sendable {
  /// Signs new saves and verifies old ones; nil: new saves are written unsigned.
  public var current: SigningKey?
  /// Verify old saves only (keys replaced by `current`).
  public var retired: [SigningKey]
  /// Whether an unsigned save is accepted when the policy has keys (saves from before
  /// signing was turned on). Without any key, unsigned saves are always accepted.
  public var acceptsUnsigned: Bool

  /// A policy from its parts; ``none`` and ``signed(with:retired:acceptingUnsigned:)`` read better.
  public init(current: SigningKey?, retired: [SigningKey] = [], acceptsUnsigned: Bool = false) {
    self.current = current
    self.retired = retired
    self.acceptsUnsigned = acceptsUnsigned
  }

  /// No signing: saves are written unsigned and signatures are not checked.
  public static let none = SigningPolicy(current: nil, retired: [], acceptsUnsigned: true)

  /// Signs with `key`; verifies with `key` and the `retired` keys; accepts unsigned saves
  /// only when `acceptingUnsigned` is true.
  public static func signed(with key: SigningKey, retired: [SigningKey] = [], acceptingUnsigned: Bool = false)
    -> SigningPolicy
  {
    SigningPolicy(current: key, retired: retired, acceptsUnsigned: acceptingUnsigned)
  }

  /// Every key that verifies, the current one first.
  var verifyingKeys: [SigningKey] { (current.map { [$0] } ?? []) + retired }

  /// True when the policy can check a signature at all.
  public var checksSignatures: Bool { current != nil || !retired.isEmpty }
}

extension SigningPolicy: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
  /// What the policy does, never the keys: `SigningPolicy(current key, 1 retired key, accepts unsigned)`.
  public var description: String {
    guard checksSignatures else { return "SigningPolicy.none" }
    var parts = [current == nil ? "no current key" : "current key"]
    if !retired.isEmpty { parts.append("\(retired.count) retired key\(retired.count == 1 ? "" : "s")") }
    parts.append(acceptsUnsigned ? "accepts unsigned" : "refuses unsigned")
    return "SigningPolicy(\(parts.joined(separator: ", ")))"
  }

  /// The same as ``description``.
  public var debugDescription: String { description }

  /// No keys in `dump` or a debugger either.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "hasCurrentKey": current != nil, "retiredKeys": retired.count, "acceptsUnsigned": acceptsUnsigned,
      ])
  }
}

extension SaveStore {
  /// A store that signs with `signingKey` and refuses unsigned saves (when given): the same as
  /// `signing: .signed(with: signingKey)`, or `.none` for nil.
  public convenience init(
    directory: String,
    generationsToKeep: Int = 3,
    lockTimeout: Duration = .seconds(5),
    signingKey: SigningKey?,
    fileSystem: any FileSystem = PosixFileSystem(),
    wallClock: any WallClock = SystemWallClock()
  ) {
    self.init(
      directory: directory, generationsToKeep: generationsToKeep, lockTimeout: lockTimeout,
      signing: signingKey.map { .signed(with: $0) } ?? .none, fileSystem: fileSystem, wallClock: wallClock)
  }

  /// A store that signs with `signingKey`, stamped by a function of milliseconds.
  @available(*, deprecated, message: "pass a WallClock: SystemWallClock() (the default), or a test's ManualWallClock")
  public convenience init(
    directory: String,
    generationsToKeep: Int = 3,
    lockTimeout: Duration = .seconds(5),
    signingKey: SigningKey?,
    fileSystem: any FileSystem = PosixFileSystem(),
    wallClock: @escaping @Sendable () -> Int64
  ) {
    self.init(
      directory: directory, generationsToKeep: generationsToKeep, lockTimeout: lockTimeout,
      signing: signingKey.map { .signed(with: $0) } ?? .none, fileSystem: fileSystem,
      wallClock: ClosureWallClock(read: wallClock))
  }
}

/// The deprecated closures' clock: milliseconds as the closure gives them, exactly.
struct ClosureWallClock: WallClock {
  let read: @Sendable () -> Int64
  func now() -> Date { Date(timeIntervalSince1970: Double(read()) / 1000) }
  func unixMilliseconds() -> Int64 { read() }
}
