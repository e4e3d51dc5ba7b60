import Stasis

/// Arrays in a merge: by index, by key (entities), and as a union (sets and logs). Each is
/// used only where the game declared it; an undeclared array is one value.
extension Merger {
  /// Element by element, when the three lengths (and bulk layouts) match; nil otherwise.
  mutating func mergeByIndex(_ base: SaveValue?, _ ours: SaveValue?, _ theirs: SaveValue?, path: String)
    -> SaveValue?
  {
    switch (base, ours, theirs) {
    case (.array(let b)?, .array(let o)?, .array(let t)?) where b.count == o.count && o.count == t.count:
      return .array(o.indices.map { merge(b[$0], o[$0], t[$0], path: "\(path)[\($0)]", declared: true) ?? .null })
    case (.bulk(let b)?, .bulk(let o)?, .bulk(let t)?)
    where b.layout == o.layout && o.layout == t.layout && b.count == o.count && o.count == t.count:
      let (be, oe, te) = (Self.elements(b), Self.elements(o), Self.elements(t))
      var bytes: [UInt8] = []
      bytes.reserveCapacity(o.count * o.layout.stride)
      for index in 0..<o.count {
        let chosen = mergeBulkElement(
          (b, be[index], index), (o, oe[index], index), (t, te[index], index), path: "\(path)[\(index)]")
        bytes += chosen ?? oe[index]
      }
      return .bulk(BulkArray(layout: o.layout, count: o.count, bytes: bytes[...]))
    default:
      return nil
    }
  }

  /// Entities aligned by their `key` field; nil when the values are not arrays of keyed
  /// objects (or bulk arrays of one layout) with each key once.
  mutating func mergeByKey(
    _ base: SaveValue?, _ ours: SaveValue?, _ theirs: SaveValue?, key: String, path: String
  ) -> SaveValue? {
    switch (base, ours, theirs) {
    case (let b, .array(let o)?, .array(let t)?):
      var baseElements: [SaveValue] = []
      if case .array(let elements)? = b { baseElements = elements } else if b != nil { return nil }
      guard let bk = keyed(baseElements, key, path: path), let ok = keyed(o, key, path: path),
        let tk = keyed(t, key, path: path)
      else { return nil }
      var merged: [SaveValue] = []
      for id in order(bk, ok, tk) {
        let value = merge(
          bk.index[id].map { baseElements[$0] }, ok.index[id].map { o[$0] }, tk.index[id].map { t[$0] },
          path: "\(path)[\(key)=\(id)]", declared: true)
        if let value { merged.append(value) }
      }
      return .array(merged)
    case (let b, .bulk(let o)?, .bulk(let t)?) where o.layout == t.layout:
      var baseArray = BulkArray(layout: o.layout, count: 0, bytes: [])
      if case .bulk(let array)? = b, array.layout == o.layout { baseArray = array } else if b != nil { return nil }
      guard let bk = keyed(baseArray, key, path: path), let ok = keyed(o, key, path: path),
        let tk = keyed(t, key, path: path)
      else { return nil }
      let (be, oe, te) = (Self.elements(baseArray), Self.elements(o), Self.elements(t))
      var bytes: [UInt8] = []
      var count = 0
      for id in order(bk, ok, tk) {
        let chosen = mergeBulkElement(
          bk.index[id].map { (baseArray, be[$0], $0) }, ok.index[id].map { (o, oe[$0], $0) },
          tk.index[id].map { (t, te[$0], $0) }, path: "\(path)[\(key)=\(id)]")
        if let chosen {
          bytes += chosen
          count += 1
        }
      }
      return .bulk(BulkArray(layout: o.layout, count: count, bytes: bytes[...]))
    default:
      return nil
    }
  }

  /// The result's keys: the fallback side's order (ours without one), each key only the other
  /// side has right after the key it follows there, then base keys neither has (a removal
  /// the fallback may undo).
  func order(_ base: KeyedElements, _ ours: KeyedElements, _ theirs: KeyedElements) -> [String] {
    let (primary, other) = fallback == .theirs ? (theirs, ours) : (ours, theirs)
    var leading: [String] = []
    var following: [String: [String]] = [:]
    var previous: String?
    for id in other.keys {
      if primary.index[id] != nil {
        previous = id
      } else if let previous {
        following[previous, default: []].append(id)
      } else {
        leading.append(id)
      }
    }
    var result = leading
    for id in primary.keys {
      result.append(id)
      result += following[id] ?? []
    }
    result += base.keys.filter { primary.index[$0] == nil && other.index[$0] == nil }
    return result
  }

  /// One element of a bulk array (whole bytes), three ways; nil when it is gone.
  mutating func mergeBulkElement(
    _ base: (BulkArray, [UInt8], Int)?, _ ours: (BulkArray, [UInt8], Int)?, _ theirs: (BulkArray, [UInt8], Int)?,
    path: String
  ) -> [UInt8]? {
    let (b, o, t) = (base?.1, ours?.1, theirs?.1)
    if o == t { return o }
    if let one = takeOneSide(b, o, t) { return one }
    let element = { (side: (BulkArray, [UInt8], Int)?) in side.map { SaveValue.object($0.0.element(at: $0.2)) } }
    let field = MergeField(path: path, base: element(base), ours: element(ours), theirs: element(theirs))
    let side: MergeSide?
    if let (pattern, rule) = rules.rule(for: path), case .some(let whole) = Self.wholeSide(rule) {
      conflicts.append(ContestedValue(field: field, resolution: "rule \(rule.name) (\(pattern))"))
      side = whole
    } else {
      let resolution: String?
      (resolution, side) = settleSide(field)
      conflicts.append(ContestedValue(field: field, resolution: resolution))
    }
    return Self.value(on: side, b, o, t)
  }

  static func elements(_ array: BulkArray) -> [[UInt8]] {
    let stride = array.layout.stride
    return array.withUnsafeBytes { raw in
      (0..<array.count).map { [UInt8](raw[($0 * stride)..<(($0 + 1) * stride)]) }
    }
  }

  /// Elements keyed by `key`; nil when a key occurs twice (the array is one value again). An
  /// element without the field refuses the merge (``refusal``): the declaration names a field
  /// the state does not have.
  mutating func keyed(_ elements: [SaveValue], _ key: String, path: String) -> KeyedElements? {
    accept(KeyedElements.pairing(elements, by: key), key, path: path)
  }

  /// A bulk array's elements keyed by their field `key`, as ``keyed(_:_:path:)`` keys objects.
  mutating func keyed(_ array: BulkArray, _ key: String, path: String) -> KeyedElements? {
    accept(KeyedElements.pairing(array, by: key), key, path: path)
  }

  private mutating func accept(
    _ pairing: Result<KeyedElements, KeyedElements.Failure>, _ key: String, path: String
  ) -> KeyedElements? {
    switch pairing {
    case .success(let keyed): return keyed
    case .failure(.missingKey(let position)):
      refusal =
        refusal
        ?? MergeRefusal(
          .missingKey, "'\(path)' is declared by-key '\(key)', but its element \(position) has no field '\(key)'")
      return nil
    case .failure(.duplicateKey): return nil
    }
  }

  /// ``MergeRule/union`` on arrays: ours in order, less the base elements theirs removed,
  /// then what theirs added that ours did not. Compared as whole values, with multiplicity.
  static func union(_ base: SaveValue?, _ ours: SaveValue?, _ theirs: SaveValue?) -> SaveValue? {
    guard case .array(let o)? = ours, case .array(let t)? = theirs else { return nil }
    var b: [SaveValue] = []
    if case .array(let elements)? = base { b = elements } else if base != nil { return nil }
    func text(_ value: SaveValue) -> String { String(describing: value) }
    func counts(_ values: [SaveValue]) -> [String: Int] {
      values.reduce(into: [:]) { $0[text($1), default: 0] += 1 }
    }
    var removedByTheirs = counts(b)
    var addedByTheirs: [SaveValue] = []
    for element in t {
      let key = text(element)
      if removedByTheirs[key, default: 0] > 0 { removedByTheirs[key]! -= 1 } else { addedByTheirs.append(element) }
    }
    var unmatchedBase = counts(b)
    var addedByOurs: [String: Int] = [:]
    for element in o {
      let key = text(element)
      if unmatchedBase[key, default: 0] > 0 { unmatchedBase[key]! -= 1 } else { addedByOurs[key, default: 0] += 1 }
    }
    var result: [SaveValue] = []
    for element in o {
      let key = text(element)
      if removedByTheirs[key, default: 0] > 0 {
        removedByTheirs[key]! -= 1
      } else {
        result.append(element)
      }
    }
    for element in addedByTheirs {
      let key = text(element)
      if addedByOurs[key, default: 0] > 0 {
        addedByOurs[key]! -= 1
      } else {
        result.append(element)
      }
    }
    return .array(result)
  }
}

extension SaveValue {
  /// An id as a path shows it, from its encoded value: `7`, `"orc"`, `{generation: 2, index: 5}`
  /// (a struct's fields in the order encoded, which is by name). Two ids are the same entity
  /// exactly when their encoded values are equal; `stasis diff` aligns by the same text.
  package var keyText: String {
    switch self {
    case .string(let text): return "\"\(text.replacingOccurrences(of: "]", with: "?"))\""
    case .object(let object):
      return "{" + object.fields.map { "\($0.name): \($0.value.keyText)" }.joined(separator: ", ") + "}"
    case .array(let elements): return "(" + elements.map(\.keyText).joined(separator: ", ") + ")"
    default:
      if let number = int64Value { return "\(number)" }
      if let number = uint64Value { return "\(number)" }
      return String(describing: self).replacingOccurrences(of: "]", with: "?")
    }
  }
}
