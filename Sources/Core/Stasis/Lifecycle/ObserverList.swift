/// Observers of one kind of value, called in the order they were added, on the main actor:
/// what ``SettingsStore`` and ``TimerCenter`` keep (``Application`` keeps several kinds in one).
@MainActor
package struct ObserverList<Value> {
  private var entries: [(token: ObserverToken, block: @MainActor (Value) -> Void)] = []
  private var nextToken: UInt64 = 1

  package init() {}

  /// Adds `block`; the token removes it.
  package mutating func add(_ block: @escaping @MainActor (Value) -> Void) -> ObserverToken {
    let token = ObserverToken(rawValue: nextToken)
    nextToken += 1
    entries.append((token, block))
    return token
  }

  /// Removes an observer; an unknown token is a no-op.
  package mutating func remove(_ token: ObserverToken) {
    entries.removeAll { $0.token == token }
  }

  /// Calls every observer with `value`, in order (a copy: one may remove itself).
  package func notify(_ value: Value) {
    for entry in entries { entry.block(value) }
  }
}
