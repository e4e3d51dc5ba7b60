@_spi(Simulation) import Stasis

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
  /// An entity world (`WorldSnapshot`), entity by entity, paired by `EntityIdentity`
  /// (`world[#7]`): an entity only one side added, changed or removed keeps that side's change;
  /// one both changed merges component by component, and a component both changed follows the
  /// rules for `path[*].component` (and below), else the fallback side's. An entity one side
  /// removed and the other changed follows the rule for `path[*]` (`ours`, `theirs`, `custom`),
  /// else the fallback side's. The merged world's next identity is the larger side's, so no
  /// identity is given twice. A bulk component is whole (`ours`, `theirs` or the fallback). When a
  /// component's version or bulk layout differs between the saves, the world is one value again.
  case byEntity
  /// The game decides; nil leaves the value to the fallback. (For an element of a bulk array,
  /// which is whole, only `ours` and `theirs` apply; the others fall back.)
  case custom(@Sendable (MergeField) -> SaveValue?)

  /// Its name in reports: `max`, `min`, `ours`, `theirs`, `union`, `by-key id`, `by-index`, `by-entity`, `custom`.
  public var name: String {
    switch self {
    case .max: "max"
    case .min: "min"
    case .ours: "ours"
    case .theirs: "theirs"
    case .union: "union"
    case .byKey(let key): "by-key \(key)"
    case .byIndex: "by-index"
    case .byEntity: "by-entity"
    case .custom: "custom"
    }
  }

  /// The value a rule that looks at values picks; nil when it cannot (or is structural).
  func apply(_ field: MergeField) -> SaveValue? {
    switch self {
    case .ours: return field.ours
    case .theirs: return field.theirs
    case .custom(let decide): return decide(field)
    case .union, .byKey, .byIndex, .byEntity: return nil
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
  /// Undeclared values merge one by one, each from the side that changed it, instead of a
  /// section whole from one side: false, the rule. Only the sync sets it, from its own rules
  /// (`SyncRules`), which only the simulation's build varies.
  package var mergesRestValueByValue = false

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

  /// Summary fields computed from the merged state: a merge that combined the two sides sets
  /// each `field` of the header's summary (``SaveSummary/details``) to the merged value at
  /// `path`, so a merged save never shows one side's treasury over the other's ledger. For
  /// tools that merge without the game's code (`stasis merge`); a game's sync uses its own
  /// `summary(of:)` (`CloudSyncConfiguration.summarize`).
  public private(set) var summaryFields: [(field: String, path: String)] = []

  /// Declares that the summary's `field` is the state's value at `path` (`treasury` ← `ledger.balance`).
  public mutating func summarize(_ field: String, from path: String) {
    summaryFields.removeAll { $0.field == field }
    summaryFields.append((field, path))
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

  /// The declared paths (rules' patterns, groups' members, and each by-key rule's key as
  /// `PATH[*].KEY`) that are in none of `documents`: a declaration that would do nothing. A
  /// path through an empty array is taken as present (nothing says otherwise).
  /// `ThreeWayMerge` refuses to merge with any.
  ///
  /// ```swift
  /// let unknown = rules.unknownPaths(in: [document])   // ["monstres"]: a typo
  /// ```
  public func unknownPaths(in documents: [SaveDocument]) -> [String] {
    var unknown: [String] = []
    var paths = rules.map(\.pattern) + groups.joined() + summaryFields.map(\.path)
    for (pattern, rule) in rules {
      if case .byKey(let key) = rule { paths.append("\(pattern)[*].\(key)") }
    }
    for path in paths where !unknown.contains(path) {
      if !documents.contains(where: { Self.exists(Self.steps(path), in: $0) }),
        !unknown.contains(where: { path.hasPrefix($0 + "[") || path.hasPrefix($0 + ".") })
      {
        unknown.append(path)
      }
    }
    return unknown
  }

  /// One step of a path: a field, or any element of an array (`[*]`, `[3]`, `[id=7]`).
  private enum Step: Equatable {
    case field(String)
    case element
  }

  /// `monsters[*].hp` → field monsters, element, field hp.
  private static func steps(_ path: String) -> [Step] {
    var steps: [Step] = []
    var name = ""
    var depth = 0
    for character in path {
      if depth > 0 {
        if character == "[" { depth += 1 } else if character == "]" { depth -= 1 }
        if depth == 0 { steps.append(.element) }
      } else if character == "." {
        if !name.isEmpty { steps.append(.field(name)) }
        name = ""
      } else if character == "[" {
        if !name.isEmpty { steps.append(.field(name)) }
        name = ""
        depth = 1
      } else {
        name.append(character)
      }
    }
    if !name.isEmpty { steps.append(.field(name)) }
    return steps
  }

  private static func exists(_ steps: [Step], in document: SaveDocument) -> Bool {
    guard case .field(let name)? = steps.first, let section = document[section: name] else { return false }
    guard steps.count > 1 else { return true }
    guard case .tree(let tree) = section.content else { return false }
    return exists(steps.dropFirst(), in: tree)
  }

  private static func exists(_ steps: ArraySlice<Step>, in value: SaveValue) -> Bool {
    guard let step = steps.first else { return true }
    switch (step, value) {
    case (.field(let name), _):
      guard let next = value[field: name] else { return false }
      return exists(steps.dropFirst(), in: next)
    case (.element, .array(let elements)):
      return elements.isEmpty || elements.contains { exists(steps.dropFirst(), in: $0) }
    case (.element, .bulk(let array)):
      return array.count == 0 || exists(steps.dropFirst(), in: .object(array.element(at: 0)))
    case (.element, .object) where WorldSnapshot.isWorld(value):  // an entity world: its components
      guard let world = try? WorldSnapshot(tree: value) else { return false }
      guard case .field(let name)? = steps.dropFirst().first else { return steps.count == 1 }
      guard let column = world.column(name) else { return false }
      // A bulk component merges whole (its fields are bytes of one element): a rule below it
      // would do nothing, so it names no path a merge has.
      if steps.count > 2, case .bulk = column.values { return false }
      return column.entities.isEmpty || exists(steps.dropFirst(2), in: column.element(at: 0))
    case (.element, .object(let object)):  // a dictionary declared by key: any entry
      return object.fields.isEmpty || object.fields.contains { exists(steps.dropFirst(), in: $0.value) }
    default:
      return false
    }
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
