import Stasis

/// One field both sides changed, differently, as a merge rule sees it. A value that is nil is
/// absent on that side (a field added on one side, removed on the other).
public struct MergeField: Sendable, Equatable {
  /// The field's path: `score.highScore`, `level.collected[4]`, `physics.bodies[12]`.
  public var path: String
  /// The value at the common ancestor.
  public var base: SaveValue?
  /// This device's value.
  public var ours: SaveValue?
  /// The server's value.
  public var theirs: SaveValue?
}

/// What a game declares for a field both sides changed.
public enum MergeRule: Sendable {
  /// The larger number (a high score, a level reached).
  case max
  /// The smaller number (a best time).
  case min
  /// This device's value.
  case ours
  /// The server's value.
  case theirs
  /// The game decides; nil leaves the field to the slot's policy. (For an element of a bulk
  /// array, which is merged whole, only `ours` and `theirs` apply; the others fall back.)
  case custom(@Sendable (MergeField) -> SaveValue?)

  /// Its name in reports: `max`, `min`, `ours`, `theirs`, `custom`.
  public var name: String {
    switch self {
    case .max: "max"
    case .min: "min"
    case .ours: "ours"
    case .theirs: "theirs"
    case .custom: "custom"
    }
  }

  func apply(_ field: MergeField) -> SaveValue? {
    switch self {
    case .ours: return field.ours
    case .theirs: return field.theirs
    case .custom(let decide): return decide(field)
    case .max, .min:
      guard let ours = field.ours, let theirs = field.theirs, let a = ours.doubleValue, let b = theirs.doubleValue
      else { return nil }
      if case .max = self { return a >= b ? ours : theirs }
      return a <= b ? ours : theirs
    }
  }
}

/// The game's merge rules, by field path. A pattern matches a path exactly, or with `[*]` for
/// any index (`level.collected[*]`); a rule on an object or a section (`camera`) takes it
/// whole when both sides changed it.
///
/// ```swift
/// let rules: MergeRules = ["score.highScore": .max, "settings": .ours]
/// ```
public struct MergeRules: Sendable, ExpressibleByDictionaryLiteral {
  /// The rules, by pattern.
  public private(set) var rules: [(pattern: String, rule: MergeRule)]

  /// Rules from pattern-rule pairs.
  public init(_ rules: [(pattern: String, rule: MergeRule)] = []) { self.rules = rules }

  public init(dictionaryLiteral elements: (String, MergeRule)...) {
    rules = elements.map { (pattern: $0.0, rule: $0.1) }
  }

  /// Adds or replaces the rule for `pattern`.
  public subscript(pattern: String) -> MergeRule? {
    get { rules.first { $0.pattern == pattern }?.rule }
    set {
      rules.removeAll { $0.pattern == pattern }
      if let newValue { rules.append((pattern, newValue)) }
    }
  }

  /// The rule for `path`: an exact pattern first, then one with `[*]` for its indices.
  func rule(for path: String) -> (pattern: String, rule: MergeRule)? {
    if let exact = rules.first(where: { $0.pattern == path }) { return exact }
    guard path.contains("[") else { return nil }
    let general = Self.generalised(path)
    return rules.first { $0.pattern == general }
  }

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

/// A field both sides changed, and what became of it.
public struct MergeConflict: Sendable, Equatable {
  /// The field.
  public var field: MergeField
  /// How it was settled: `rule max`, `policy: theirs`; nil when it was not.
  public var resolution: String?

  /// The field's path.
  public var path: String { field.path }
}

/// A side a conflicting field falls back to when no rule settles it.
public enum MergeSide: String, Sendable, Equatable {
  /// This device's value.
  case ours
  /// The server's value.
  case theirs
  /// The common ancestor's value (last known good).
  case base
}

/// What a three-way merge produced.
public struct MergeOutcome: Sendable {
  /// The merged document, or nil when some field both sides changed was left unsettled (no
  /// rule, no fallback side), or when the documents cannot be merged (``refusal``).
  public var document: SaveDocument?
  /// Every field both sides changed, settled or not, in file order.
  public var conflicts: [MergeConflict]
  /// Fields taken from one side only, because only that side changed them.
  public var takenFromOurs: Int
  /// As ``takenFromOurs``, from the server's side.
  public var takenFromTheirs: Int
  /// Why the documents could not be merged field by field (another game, another schema).
  public var refusal: String?

  /// The conflicts no rule and no fallback settled.
  public var unsettled: [MergeConflict] { conflicts.filter { $0.resolution == nil } }
}

/// A field-by-field three-way merge of self-describing saves against their common ancestor:
/// a field only one side changed is taken from that side; a field both changed follows the
/// game's ``MergeRules``, else the `fallback` side. Objects merge field by field, arrays and
/// bulk arrays element by element when the three lengths (and the bulk layouts) match, and
/// as a whole otherwise. Deterministic: fields in name order, elements in index order.
public enum ThreeWayMerge {
  /// Merges `ours` and `theirs` against `base`. The result's header is `winner`'s (the side
  /// the slot's policy prefers, else ours) with the longer play time and the higher progress.
  public static func merge(
    base: SaveDocument, ours: SaveDocument, theirs: SaveDocument, rules: MergeRules = MergeRules(),
    fallback: MergeSide?, createdAt: Int64
  ) -> MergeOutcome {
    var merger = Merger(rules: rules, fallback: fallback)
    guard ours.game.name == theirs.game.name, base.game.name == ours.game.name else {
      return MergeOutcome(
        document: nil, conflicts: [], takenFromOurs: 0, takenFromTheirs: 0,
        refusal: "the saves are of different games ('\(ours.game.name)', '\(theirs.game.name)')")
    }
    guard ours.game.schemaVersion == theirs.game.schemaVersion, base.game.schemaVersion == ours.game.schemaVersion
    else {
      return MergeOutcome(
        document: nil, conflicts: [], takenFromOurs: 0, takenFromTheirs: 0,
        refusal:
          "the saves have different schema versions (base \(base.game.schemaVersion), ours \(ours.game.schemaVersion), theirs \(theirs.game.schemaVersion))"
      )
    }
    var names: [String] = []
    for name in ours.sections.map(\.name) + theirs.sections.map(\.name) where !names.contains(name) {
      names.append(name)
    }
    var sections: [SaveSection] = []
    for name in names {
      let merged = merger.merge(
        base[section: name].map(SectionValue.init), ours[section: name].map(SectionValue.init),
        theirs[section: name].map(SectionValue.init), path: name)
      if let merged { sections.append(SaveSection(name: name, content: merged.content)) }
    }
    let winner = fallback == .theirs ? theirs : ours
    var summary = winner.summary
    summary.playTime = max(ours.summary.playTime, theirs.summary.playTime)
    if let a = ours.summary.progress ?? theirs.summary.progress {
      summary.progress = max(a, theirs.summary.progress ?? a)
    }
    let settled = merger.conflicts.allSatisfy { $0.resolution != nil }
    return MergeOutcome(
      document: settled
        ? SaveDocument(game: winner.game, createdAt: createdAt, summary: summary, sections: sections) : nil,
      conflicts: merger.conflicts, takenFromOurs: merger.fromOurs, takenFromTheirs: merger.fromTheirs, refusal: nil)
  }
}

/// A section as a value to merge: trees merge inside, raw sections only as a whole.
private struct SectionValue: Equatable {
  var content: SaveSection.Content
  init(_ section: SaveSection) { content = section.content }
  init(_ content: SaveSection.Content) { self.content = content }
}

private struct Merger {
  let rules: MergeRules
  let fallback: MergeSide?
  var conflicts: [MergeConflict] = []
  var fromOurs = 0
  var fromTheirs = 0

  init(rules: MergeRules, fallback: MergeSide?) {
    self.rules = rules
    self.fallback = fallback
  }

  mutating func merge(_ base: SectionValue?, _ ours: SectionValue?, _ theirs: SectionValue?, path: String)
    -> SectionValue?
  {
    func tree(_ value: SectionValue?) -> SaveValue?? {
      guard let value else { return .some(nil) }
      if case .tree(let tree) = value.content { return .some(tree) }
      return nil
    }
    if let b = tree(base), let o = tree(ours), let t = tree(theirs), o != nil || t != nil {
      return merge(b, o, t, path: path).map { SectionValue(.tree($0)) }
    }
    // A raw section (a thumbnail) or a section that changed encoding: as a whole.
    return pick(base, ours, theirs, path: path)
  }

  /// The three-way rule for one value, descending into objects, arrays and bulk arrays.
  mutating func merge(_ base: SaveValue?, _ ours: SaveValue?, _ theirs: SaveValue?, path: String) -> SaveValue? {
    if ours == theirs { return ours }
    if ours == base {
      fromTheirs += 1
      return theirs
    }
    if theirs == base {
      fromOurs += 1
      return ours
    }
    let field = MergeField(path: path, base: base, ours: ours, theirs: theirs)
    if let (pattern, rule) = rules.rule(for: path), let value = rule.apply(field) {
      conflicts.append(MergeConflict(field: field, resolution: "rule \(rule.name) (\(pattern))"))
      return value
    }
    switch (base, ours, theirs) {
    case (let b, .object(let o)?, .object(let t)?):
      var baseObject: SaveObject?
      if case .object(let object)? = b { baseObject = object }
      var names = Set(o.fields.map(\.name))
      names.formUnion(t.fields.map(\.name))
      var fields: [(name: String, value: SaveValue)] = []
      for name in names.sorted() {
        if let value = merge(baseObject?[name], o[name], t[name], path: "\(path).\(name)") {
          fields.append((name, value))
        }
      }
      return .object(SaveObject(fields))
    case (.array(let b)?, .array(let o)?, .array(let t)?) where b.count == o.count && o.count == t.count:
      var elements: [SaveValue] = []
      for index in o.indices {
        elements.append(merge(b[index], o[index], t[index], path: "\(path)[\(index)]") ?? .null)
      }
      return .array(elements)
    case (.bulk(let b)?, .bulk(let o)?, .bulk(let t)?)
    where b.layout == o.layout && o.layout == t.layout && b.count == o.count && o.count == t.count:
      return .bulk(mergeBulk(b, o, t, path: path))
    default:
      return settle(field).value
    }
  }

  /// Element by element over the raw bytes: an element only one side changed comes from it;
  /// one both changed follows the rule for `path[*]` (`ours`, `theirs`, `custom`), else the
  /// fallback side.
  private mutating func mergeBulk(_ base: BulkArray, _ ours: BulkArray, _ theirs: BulkArray, path: String)
    -> BulkArray
  {
    let stride = base.layout.stride
    var bytes = [UInt8](repeating: 0, count: base.count * stride)
    var pending: [MergeField] = []
    base.withUnsafeBytes { b in
      ours.withUnsafeBytes { o in
        theirs.withUnsafeBytes { t in
          for index in 0..<base.count {
            let range = index * stride..<(index + 1) * stride
            let sameOurs = b[range].elementsEqual(o[range])
            let sameTheirs = b[range].elementsEqual(t[range])
            let source: UnsafeRawBufferPointer
            if sameOurs {
              source = t
              if !sameTheirs { fromTheirs += 1 }
            } else if sameTheirs || o[range].elementsEqual(t[range]) {
              source = o
              if sameTheirs { fromOurs += 1 }
            } else {
              source = o  // settled below
              pending.append(
                MergeField(
                  path: "\(path)[\(index)]", base: .object(base.element(at: index)),
                  ours: .object(ours.element(at: index)), theirs: .object(theirs.element(at: index))))
            }
            for offset in range { bytes[offset] = source[offset] }
          }
        }
      }
    }
    for field in pending {
      guard let index = Int(field.path[field.path.index(after: field.path.lastIndex(of: "[")!)...].dropLast()) else {
        continue
      }
      var chosen: BulkArray?
      if let (pattern, rule) = rules.rule(for: field.path), case .some(let side) = Self.wholeSide(rule) {
        chosen = side == .ours ? ours : theirs
        conflicts.append(MergeConflict(field: field, resolution: "rule \(rule.name) (\(pattern))"))
      } else {
        let (resolution, side) = settleSide(field)
        conflicts.append(MergeConflict(field: field, resolution: resolution))
        chosen = side.map { $0 == .ours ? ours : $0 == .theirs ? theirs : base }
      }
      guard let chosen else { continue }
      chosen.withUnsafeBytes { source in
        for offset in index * stride..<(index + 1) * stride { bytes[offset] = source[offset] }
      }
    }
    return BulkArray(layout: base.layout, count: base.count, bytes: bytes[...])
  }

  /// The side a rule takes for a value merged only as a whole (an element of a bulk array, a
  /// raw section): `ours` and `theirs` apply; `max`, `min` and closures need values.
  private static func wholeSide(_ rule: MergeRule) -> MergeSide? {
    switch rule {
    case .ours: .ours
    case .theirs: .theirs
    default: nil
    }
  }

  /// A leaf (or a value that cannot be merged inside) both sides changed and no rule settled.
  private mutating func settle(_ field: MergeField) -> (value: SaveValue?, settled: Bool) {
    let (resolution, side) = settleSide(field)
    conflicts.append(MergeConflict(field: field, resolution: resolution))
    switch side {
    case .ours?: return (field.ours, true)
    case .theirs?: return (field.theirs, true)
    case .base?: return (field.base, true)
    case nil: return (field.ours, false)
    }
  }

  private func settleSide(_ field: MergeField) -> (String?, MergeSide?) {
    guard let fallback else { return (nil, nil) }
    return ("policy: \(fallback.rawValue)", fallback)
  }

  /// A raw section (a thumbnail, a load report): derived from the state, so when both sides
  /// changed it, the fallback side's is taken (ours without one) and no conflict is counted;
  /// an `ours` or `theirs` rule for its name still decides.
  private mutating func pick(
    _ base: SectionValue?, _ ours: SectionValue?, _ theirs: SectionValue?, path: String
  ) -> SectionValue? {
    if ours == theirs { return ours }
    if ours == base { return theirs }
    if theirs == base { return ours }
    if let (_, rule) = rules.rule(for: path), let side = Self.wholeSide(rule) {
      return side == .ours ? ours : theirs
    }
    switch fallback {
    case .theirs?: return theirs
    case .base?: return base
    default: return ours
    }
  }
}
