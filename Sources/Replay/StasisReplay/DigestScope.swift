import Stasis

/// What a replay's digests cover, as the game declares it: a closure that feeds the state's
/// bytes to a ``StateHasher`` (fast: what the game's simulation reads, as raw arrays), or the
/// state's sections in the save format's canonical encoding (no code, slower: it encodes the
/// state's tree each time).
///
/// The scope's `name` goes into the replay's manifest: a verifier refuses to compare digests
/// taken over another scope. Rename it whenever the closure hashes something else.
///
/// ```swift
/// let scope = DigestScope<RaceState>("cars and clock, v1") { state, hasher in
///   hasher.combine(state.tick)
///   hasher.combine(contentsOf: state.cars)
/// }
/// ```
public struct DigestScope<State>: Sendable {
  /// The scope's name, in the manifest (`stasis replay info` prints it).
  public let name: String
  private let feed: @Sendable (State, StateHasher) -> Void

  /// A scope the game writes: `feed` gives the hasher what decides the simulation.
  public init(_ name: String, _ feed: @escaping @Sendable (State, StateHasher) -> Void) {
    self.name = name
    self.feed = feed
  }

  /// The digest of `state`, from `hasher` (reused: its state is reset).
  public func digest(of state: State, using hasher: StateHasher) -> UInt64 {
    feed(state, hasher)
    return hasher.finalize()
  }
}

extension DigestScope where State: Encodable {
  /// The state's top-level fields (its save sections), each in the format's canonical encoding;
  /// all of them, or those named in `only`. A field that does not encode is hashed as its
  /// error's text, so the digest still differs from a state that encodes.
  public static func sections(_ only: [String]? = nil) -> DigestScope {
    let name = only.map { "sections: " + $0.joined(separator: ", ") } ?? "sections"
    return DigestScope(name) { state, hasher in
      let tree: SaveValue
      do {
        tree = try SaveValueEncoder().encode(state)
      } catch {
        hasher.combine("unencodable: \(error)")
        return
      }
      guard case .object(let object) = tree else { return hasher.combine(tree) }
      for field in object.fields where only?.contains(field.name) ?? true {
        hasher.combine(field.name)
        hasher.combine(field.value)
      }
    }
  }
}
