import Stasis

/// One value both sides changed, differently, as a merge rule sees it. A value that is nil is
/// absent on that side (a field added on one side, removed on the other).
public struct MergeField: Sendable, Equatable {
  /// The value's path: `score.highScore`, `level.collected[4]`, `monsters[id=7].hp`.
  public var path: String
  /// The value at the common ancestor.
  public var base: SaveValue?
  /// This device's value.
  public var ours: SaveValue?
  /// The server's value.
  public var theirs: SaveValue?
}

/// What a game declares for a path of its state. Without a declaration, a section both sides
/// changed is one value, taken whole from the fallback side; a rule on a path inside it merges
/// that path on its own, and the rest of the section still comes whole from one side.
public enum MergeRule: Sendable {
  /// The larger number (a high score, a level reached); `true` over `false`.
  case max
  /// The smaller number (a best time); `false` over `true`.
  case min
  /// This device's value.
  case ours
  /// The server's value.
  case theirs
  /// Everything either side has, less what either removed since the base: for sets and logs.
  /// An array keeps ours' elements in order, then appends the ones theirs added (an element
  /// both added is kept once); an object (a dictionary) merges key by key, and a key both
  /// changed follows the rule for `path.key`, else the fallback.
  case union
  /// An array of entities, aligned by the value of their field `key` (an id), not by index:
  /// an element only one side added, changed or removed keeps that side's change; one both
  /// changed follows the rules for `path[*]` (and below), else the fallback side's element.
  /// Works on bulk arrays too, whose elements are whole. Elements without the key, or with a
  /// key twice, make the array one value again.
  case byKey(String)
  /// An array or bulk array of fixed slots, element by element when the three lengths match
  /// (one value otherwise): an element both changed follows the rules for `path[*]`, else the
  /// fallback side's element. A rule for `path[*]` alone also merges the array this way.
  case byIndex
  /// The game decides; nil leaves the value to the fallback. (For an element of a bulk array,
  /// which is whole, only `ours` and `theirs` apply; the others fall back.)
  case custom(@Sendable (MergeField) -> SaveValue?)

  /// Its name in reports: `max`, `min`, `ours`, `theirs`, `union`, `by-key id`, `by-index`, `custom`.
  public var name: String {
    switch self {
    case .max: "max"
    case .min: "min"
    case .ours: "ours"
    case .theirs: "theirs"
    case .union: "union"
    case .byKey(let key): "by-key \(key)"
    case .byIndex: "by-index"
    case .custom: "custom"
    }
  }

  /// The value a rule that looks at values picks; nil when it cannot (or is structural).
  func apply(_ field: MergeField) -> SaveValue? {
    switch self {
    case .ours: return field.ours
    case .theirs: return field.theirs
    case .custom(let decide): return decide(field)
    case .union, .byKey, .byIndex: return nil
    case .max, .min:
      guard let ours = field.ours, let theirs = field.theirs, let a = Self.number(ours), let b = Self.number(theirs)
      else { return nil }
      if case .max = self { return a >= b ? ours : theirs }
      return a <= b ? ours : theirs
    }
  }

  private static func number(_ value: SaveValue) -> Double? {
    if case .bool(let flag) = value { return flag ? 1 : 0 }
    return value.doubleValue
  }
}

/// The game's merge declarations: rules by path, and groups of paths that always come from
/// one side together. A pattern matches a path exactly, or with `[*]` for any index or key
/// (`level.collected[*]`, `monsters[*].hp`).
///
/// ```swift
/// let rules = MergeRules(
///   ["score.highScore": .max, "monsters": .byKey("id"), "log": .union],
///   groups: [["map", "monsters", "stairs"]])
/// ```
public struct MergeRules: Sendable, ExpressibleByDictionaryLiteral {
  /// The rules, by pattern, in the order declared.
  public private(set) var rules: [(pattern: String, rule: MergeRule)]
  /// Groups of paths (sections, or fields inside them) taken together from one side: the side
  /// that changed them, or the fallback's when both did. Rules inside a group do not apply.
  public private(set) var groups: [[String]]

  /// No declarations: a section both sides changed comes whole from the fallback side.
  public init() { self.init([(pattern: String, rule: MergeRule)](), groups: []) }

  /// Rules from pattern-rule pairs, and groups.
  public init(_ rules: [(pattern: String, rule: MergeRule)], groups: [[String]] = []) {
    self.rules = rules
    self.groups = groups
  }

  /// Rules from a dictionary literal (its order kept), and groups.
  public init(_ rules: KeyValuePairs<String, MergeRule>, groups: [[String]] = []) {
    self.init(rules.map { (pattern: $0.key, rule: $0.value) }, groups: groups)
  }

  public init(dictionaryLiteral elements: (String, MergeRule)...) {
    self.init(elements.map { (pattern: $0.0, rule: $0.1) })
  }

  /// Adds or replaces the rule for `pattern`.
  public subscript(pattern: String) -> MergeRule? {
    get { rules.first { $0.pattern == pattern }?.rule }
    set {
      rules.removeAll { $0.pattern == pattern }
      if let newValue { rules.append((pattern, newValue)) }
    }
  }

  /// Declares `paths` a group: they always come from one side together.
  public mutating func group(_ paths: [String]) {
    groups.append(paths)
  }

  /// The rule declared for `path` (`monsters`, `monsters[id=7].hp`): an exact pattern first,
  /// then one with `[*]` for its indices; nil when none is declared.
  public func rule(at path: String) -> MergeRule? { rule(for: path)?.rule }

  /// The rule for `path`: an exact pattern first, then one with `[*]` for its indices.
  func rule(for path: String) -> (pattern: String, rule: MergeRule)? {
    if let exact = rules.first(where: { $0.pattern == path }) { return exact }
    guard path.contains("[") else { return nil }
    let general = Self.generalised(path)
    return rules.first { $0.pattern == general }
  }

  /// Whether a rule or a group names something strictly inside `path`.
  func declares(inside path: String) -> Bool {
    let general = path.contains("[") ? Self.generalised(path) : path
    func inside(_ pattern: String) -> Bool {
      pattern.count > general.count && pattern.hasPrefix(general)
        && [".", "["].contains(pattern[pattern.index(pattern.startIndex, offsetBy: general.count)])
    }
    return rules.contains { inside($0.pattern) } || groups.contains { $0.contains(where: inside) }
  }

  /// Whether a rule or a group names `path` itself or something inside it.
  func declares(atOrInside path: String) -> Bool {
    rule(for: path) != nil || groups.contains { $0.contains(path) } || declares(inside: path)
  }

  /// `monsters[id=7].hp` → `monsters[*].hp`.
  static func generalised(_ path: String) -> String {
    var result = ""
    var inIndex = false
    for character in path {
      if character == "[" {
        inIndex = true
        result += "[*"
      } else if character == "]" {
        inIndex = false
        result.append(character)
      } else if !inIndex {
        result.append(character)
      }
    }
    return result
  }
}
