extension Array {
  /// Appends `element`, then drops the oldest elements past `limit` (at least one is kept):
  /// the histories a long session keeps (events, background episodes) stay bounded.
  package mutating func append(_ element: Element, keepingNewest limit: Int) {
    let limit = Swift.max(1, limit)
    if count >= limit { removeFirst(count - limit + 1) }
    append(element)
  }
}
