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

/// A collection keyed by identity, with a history: ids taken and freed in another order.
private struct Roster: Codable, Equatable {
  var alive: Set<UInt32> = []
  var names: [UInt32: String] = [:]
  var byNumber: [Int: String] = [:]
}

@Suite("collections keyed by identity are saved in one documented order")
struct SaveOrderTests {
  /// The same roster, reached by two histories: one set grew to 4,096 and shrank, one did not.
  private func rosters() -> (Roster, Roster) {
    var grown = Roster()
    grown.alive.reserveCapacity(4_096)
    for id in (0..<4_096).reversed() { grown.alive.insert(UInt32(id)) }
    grown.alive = grown.alive.filter { $0 % 512 == 7 }
    var plain = Roster()
    for id in stride(from: 7, to: 4_096, by: 512) { plain.alive.insert(UInt32(id)) }
    for id in [3, 1, 2] as [UInt32] {
      grown.names[id] = "n\(id)"
      grown.byNumber[Int(id) * 5] = "m\(id)"
    }
    for id in [2, 3, 1] as [UInt32] {
      plain.names[id] = "n\(id)"
      plain.byNumber[Int(id) * 5] = "m\(id)"
    }
    return (grown, plain)
  }

  @Test("equal sets and dictionaries with different histories encode to the same bytes")
  func sameBytes() throws {
    let (grown, plain) = rosters()
    #expect(grown == plain)
    #expect(Array(grown.alive) != Array(plain.alive), "the two sets iterate in different orders")
    let a = try SaveValueEncoder().encode(grown)
    let b = try SaveValueEncoder().encode(plain)
    #expect(a == b)
    #expect(a.canonicalBytes == b.canonicalBytes)
    #expect(try SaveValueDecoder().decode(Roster.self, from: a) == grown)
  }

  @Test("a set is stored ascending, and a restored game iterates in the order saved")
  func documentedOrder() throws {
    let (grown, _) = rosters()
    let tree = try SaveValueEncoder().encode(grown)
    guard case .object(let roster) = tree, case .array(let alive)? = roster["alive"] else {
      Issue.record("no array: \(tree)")
      return
    }
    #expect(alive == grown.alive.sorted().map { .uint32($0) })
    #expect(grown.alive.inSaveOrder == [7, 519, 1_031, 1_543, 2_055, 2_567, 3_079, 3_591])
    guard case .object(let byNumber)? = roster["byNumber"] else {
      Issue.record("byNumber is not an object")
      return
    }
    // Int keys are field names, compared as text: "10" before "15" before "5".
    #expect(byNumber.fields.map(\.name) == ["10", "15", "5"])
    #expect(grown.byNumber.inSaveOrder.map(\.key) == [10, 15, 5])
    #expect(grown.names.inSaveOrder.map(\.key) == [1, 2, 3])
  }
}
