import Stasis
import Testing

private struct Halfway: Encodable {
  struct Refused: Error {}
  enum Keys: String, CodingKey { case x, y, inner }

  /// Writes two fields and a nested container, then throws.
  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(1, forKey: .x)
    try container.encode("two", forKey: .y)
    var inner = container.nestedUnkeyedContainer(forKey: .inner)
    try inner.encode(3)
    throw Refused()
  }
}

private struct Whole: Encodable, Equatable {
  var z: Int
}

/// A value that tries a part it may do without, and goes on when that part throws.
private struct Forgiving: Encodable {
  enum Keys: String, CodingKey { case bad, good, list }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try? container.encode(Halfway(), forKey: .bad)
    try container.encode(Whole(z: 3), forKey: .good)
    var list = container.nestedUnkeyedContainer(forKey: .list)
    try? list.encode(Halfway())
    try list.encode(Whole(z: 4))
  }
}

/// Encodes one key twice, the second time as a nested container.
private struct TwiceUnderOneKey: Encodable {
  enum Keys: String, CodingKey { case a, b }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(1, forKey: .a)
    try container.encode(Whole(z: 1), forKey: .b)
    try container.encode(2, forKey: .a)
    var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .b)
    try nested.encode(5, forKey: .a)
  }
}

@Suite("The tree encoder")
struct TreeEncoderTests {
  @Test("a value that threw halfway leaves nothing in the next one encoded after it")
  func thrownValueLeavesNothing() throws {
    let tree = try SaveValueEncoder().encode(Forgiving())
    // The node the failed value was encoded in is reused; it must come back empty.
    let expected: SaveValue = .object(
      SaveObject([
        ("good", .object(SaveObject([("z", .int64(3))]))),
        ("list", .array([.object(SaveObject([("z", .int64(4))]))])),
      ]))
    #expect(tree == expected)
  }

  @Test("a key encoded twice keeps the second value, as Foundation's encoders do")
  func keyEncodedTwice() throws {
    let tree = try SaveValueEncoder().encode(TwiceUnderOneKey())
    // `b` was a whole value and then a nested container: the container replaces it, not merges.
    let expected: SaveValue = .object(
      SaveObject([("a", .int64(2)), ("b", .object(SaveObject([("a", .int64(5))])))]))
    #expect(tree == expected)
  }
}
