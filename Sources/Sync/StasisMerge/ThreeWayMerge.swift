@_spi(Simulation) import Stasis
import Synchronization

/// A value both sides changed, or one side changed that went with the undeclared rest of the
/// state to the other side, and what became of it: one line of a ``MergeOutcome``.
public struct ContestedValue: Sendable, Equatable {
  /// The value: a section, a declared field, an element, or a group (`map+monsters`).
  public var field: MergeField
  /// How it was settled: `rule max (score.highScore)`, `policy: theirs`; nil when it was not.
  public var resolution: String?

  /// The value's path.
  public var path: String { field.path }
}

/// One side of a conflict: the one "which side" type. A policy's choice
/// (``ConflictPolicy/side(ours:theirs:)``), the game's (`ConflictDecision.side(_:)` in
/// StasisCloud), a report's outcome (`ConflictReport.Outcome.side(_:)`) and a section taken
/// whole (``SectionMerge/Source/side(_:)``) all name it with this.
public enum MergeSide: String, Sendable, Equatable, CaseIterable {
  /// This device's value.
  case ours
  /// The server's value.
  case theirs
  /// The common ancestor's value (last known good).
  case base
}

/// Where one section of a merged save came from: what a conflict report says per section.
public struct SectionMerge: Sendable, Equatable, CustomStringConvertible {
  /// Where a section came from: one side whole, or how it merged. Its ``rawValue`` is what
  /// reports and `stasis merge --json` print: `unchanged`, `same`, `ours`, `theirs`, `base`,
  /// `merged`, `unsettled`.
  public enum Source: Sendable, Equatable, RawRepresentable {
    /// Neither side changed it.
    case unchanged
    /// Both sides made the same change.
    case same
    /// Whole from one side.
    case side(MergeSide)
    /// Declared parts merged, so it is neither side's whole.
    case merged
    /// Both changed it and nothing settled it.
    case unsettled

    /// Whole from this device.
    @available(*, deprecated, message: "use .side(.ours)")
    public static var ours: Source { .side(.ours) }
    /// Whole from the server.
    @available(*, deprecated, message: "use .side(.theirs)")
    public static var theirs: Source { .side(.theirs) }
    /// Whole from the common ancestor.
    @available(*, deprecated, message: "use .side(.base)")
    public static var base: Source { .side(.base) }

    /// The side it came from whole, or nil.
    public var side: MergeSide? {
      if case .side(let side) = self { side } else { nil }
    }

    /// The name a report prints.
    public var rawValue: String {
      switch self {
      case .unchanged: "unchanged"
      case .same: "same"
      case .side(let side): side.rawValue
      case .merged: "merged"
      case .unsettled: "unsettled"
      }
    }

    /// The source a report's name stands for.
    public init?(rawValue: String) {
      switch rawValue {
      case "unchanged": self = .unchanged
      case "same": self = .same
      case "merged": self = .merged
      case "unsettled": self = .unsettled
      default:
        guard let side = MergeSide(rawValue: rawValue) else { return nil }
        self = .side(side)
      }
    }
  }

  /// The section's name.
  public var name: String
  /// Where it came from.
  public var source: Source
  /// Why: `only ours changed it`, `both changed it: policy: theirs`, `group physics+camera: …`.
  public var how: String

  /// A section's origin, as a report states it.
  public init(name: String, source: Source, how: String) {
    self.name = name
    self.source = source
    self.how = how
  }

  /// One line: `physics: theirs (group physics+camera: both changed it: policy: theirs)`.
  public var description: String { "\(name): \(source.rawValue) (\(how))" }
}

/// What a three-way merge produced.
public struct MergeOutcome: Sendable {
  /// The merged document, or nil when some value both sides changed was left unsettled (no
  /// rule, no fallback side), or when the documents cannot be merged (``refused``).
  public var document: SaveDocument?
  /// Every value both sides changed, settled or not, groups first, then in file order.
  public var conflicts: [ContestedValue]
  /// Each section of the result, in order, and where it came from.
  public var sections: [SectionMerge]
  /// Values (sections, declared fields, elements) taken from ours because only ours changed them.
  public var takenFromOurs: Int
  /// As ``takenFromOurs``, from the server's side.
  public var takenFromTheirs: Int
  /// Why the documents could not be merged (another game, another schema, a declaration that
  /// names nothing), or nil.
  public var refused: MergeRefusal?

  /// The refusal's message (before 0.11 the refusal was only this text).
  @available(*, deprecated, message: "use refused, a MergeRefusal whose kind says why; its message is this text")
  public var refusal: String? { refused?.message }

  /// The conflicts no rule and no fallback settled.
  public var unsettled: [ContestedValue] { conflicts.filter { $0.resolution == nil } }
}

/// A three-way merge of self-describing saves against their common ancestor, by the game's
/// declarations (``MergeRules``), that never builds a world no device saw:
///
/// - Everything the game did not declare is **one value**: the undeclared rest of the state.
///   When only one side changed it, it comes from that side; when both did, it comes whole
///   from the `fallback` side, every undeclared section with it, even a section only the other
///   side changed (a map one device replaced is never paired with the other's monsters).
///   Without declarations, a conflict therefore keeps one whole side.
/// - A declared path merges on its own, by its rule: ``MergeRule/byKey(_:)`` aligns entities
///   by id (any encoded value, structs included), ``MergeRule/byIndex`` fixed slots by index,
///   ``MergeRule/union`` sets and logs, `max` and `min` numbers.
/// - A group of paths always comes from one side.
/// - A declared path that is in none of the three saves, or a key no element has, refuses the
///   merge (``MergeOutcome/refused``) naming it: a declaration never does nothing in silence.
///
/// Deterministic: fields in name order, elements in the order of the side the fallback picks.
public enum ThreeWayMerge {
  /// Merges `ours` and `theirs` against `base`. The result's header is `winner`'s (the side
  /// the slot's policy prefers, else ours) with the longer play time and the higher progress.
  public static func merge(
    base: SaveDocument, ours: SaveDocument, theirs: SaveDocument, rules: MergeRules = MergeRules(),
    fallback: MergeSide?, createdAt: Int64
  ) -> MergeOutcome {
    guard ours.game.name == theirs.game.name, base.game.name == ours.game.name else {
      return MergeOutcome(
        document: nil, conflicts: [], sections: [], takenFromOurs: 0, takenFromTheirs: 0,
        refused: MergeRefusal(
          .differentGames, "the saves are of different games ('\(ours.game.name)', '\(theirs.game.name)')"))
    }
    guard ours.game.schemaVersion == theirs.game.schemaVersion, base.game.schemaVersion == ours.game.schemaVersion
    else {
      return MergeOutcome(
        document: nil, conflicts: [], sections: [], takenFromOurs: 0, takenFromTheirs: 0,
        refused: MergeRefusal(
          .differentSchemas,
          "the saves have different schema versions (base \(base.game.schemaVersion), ours \(ours.game.schemaVersion), theirs \(theirs.game.schemaVersion))"
        ))
    }
    let unknown = rules.unknownPaths(in: [base, ours, theirs])
    guard unknown.isEmpty else {
      return MergeOutcome(
        document: nil, conflicts: [], sections: [], takenFromOurs: 0, takenFromTheirs: 0,
        refused: MergeRefusal(
          .unknownPath,
          "declared \(unknown.count == 1 ? "path" : "paths") not in any of the saves: "
            + unknown.map { "'\($0)'" }.joined(separator: ", ")))
    }
    var merger = Merger(rules: rules, fallback: fallback)
    merger.decideGroups(base: base, ours: ours, theirs: theirs)
    merger.decideRest(base: base, ours: ours, theirs: theirs)
    var names: [String] = []
    for name in ours.sections.map(\.name) + theirs.sections.map(\.name) where !names.contains(name) {
      names.append(name)
    }
    var sections: [SaveSection] = []
    var reports: [SectionMerge] = []
    for name in names {
      let (b, o, t) = (base[section: name]?.content, ours[section: name]?.content, theirs[section: name]?.content)
      let first = merger.conflicts.count
      let merged: SaveSection.Content?
      if let choice = merger.groupChoice(name) {
        merged = Merger.value(on: choice.side, b, o, t)
      } else if let tb = Merger.tree(b), let to = Merger.tree(o), let tt = Merger.tree(t), to != nil || tt != nil {
        merged = merger.merge(tb, to, tt, path: name).map { .tree($0) }
      } else {
        merged = merger.pick(b, o, t, path: name)
      }
      if let merged { sections.append(SaveSection(name: name, content: merged)) }
      reports.append(
        merger.report(name, b, o, t, merged: merged, conflicts: merger.conflicts[first...]))
    }
    if let refusal = merger.refusal {
      return MergeOutcome(
        document: nil, conflicts: merger.conflicts, sections: reports, takenFromOurs: merger.fromOurs,
        takenFromTheirs: merger.fromTheirs, refused: refusal)
    }
    let winner = fallback == .theirs ? theirs : ours
    // A result that is one side's sections exactly is that side's state: its summary is that
    // side's. Any other result's summary is the game's to compute from the merged state
    // (``summarized(by:)``); until then it is the winner's with the longer play time and the
    // higher progress.
    var summary = winner.summary
    if sections == ours.sections {
      summary = ours.summary
    } else if sections == theirs.sections {
      summary = theirs.summary
    } else if sections == base.sections {
      summary = base.summary
    } else {
      summary.playTime = max(ours.summary.playTime, theirs.summary.playTime)
      if let a = ours.summary.progress ?? theirs.summary.progress {
        summary.progress = max(a, theirs.summary.progress ?? a)
      }
      if !rules.summaryFields.isEmpty {
        let result = SaveDocument(game: winner.game, createdAt: createdAt, summary: summary, sections: sections)
        var details = summary.details
        if case .null = details { details = .object(SaveObject([])) }
        for (field, path) in rules.summaryFields {
          details[field: field] = Merger.find(path, in: result)?.saveValue ?? .null
        }
        summary.details = details
      }
    }
    let settled = merger.conflicts.allSatisfy { $0.resolution != nil }
    return MergeOutcome(
      document: settled
        ? SaveDocument(game: winner.game, createdAt: createdAt, summary: summary, sections: sections) : nil,
      conflicts: merger.conflicts, sections: reports, takenFromOurs: merger.fromOurs,
      takenFromTheirs: merger.fromTheirs, refused: nil)
  }
}

/// The side a group was taken from, and why.
struct GroupChoice {
  var label: String
  /// nil: both changed it and nothing settled it (ours stands in).
  var side: MergeSide?
  var how: String
}

/// One merge in progress: the declarations, the fallback, and what was found so far.
struct Merger {
  let rules: MergeRules
  let fallback: MergeSide?
  var conflicts: [ContestedValue] = []
  var fromOurs = 0
  var fromTheirs = 0
  private var groupOf: [String: Int] = [:]
  private var choices: [GroupChoice] = []
  /// The side the undeclared rest of the state comes from, decided once for the whole save.
  var rest = GroupChoice(label: "the rest of the state", side: .ours, how: "neither side changed it")
  /// Whether both sides changed the undeclared rest (each undeclared value they both changed is a conflict).
  var restConflicts = false
  /// Why a declaration could not be applied (a key no element has), when one could not.
  var refusal: MergeRefusal?

  init(rules: MergeRules, fallback: MergeSide?) {
    self.rules = rules
    self.fallback = fallback
  }

  // MARK: Groups

  /// A group member's value on one side: a whole section, or a field inside a tree section.
  enum Found: Equatable {
    case content(SaveSection.Content)
    case value(SaveValue)

    var saveValue: SaveValue? {
      switch self {
      case .content(.tree(let value)), .value(let value): value
      case .content(.raw): nil
      }
    }
  }

  static func find(_ path: String, in document: SaveDocument) -> Found? {
    let parts = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    guard let section = document[section: parts[0]] else { return nil }
    if parts.count == 1 { return .content(section.content) }
    guard case .tree(var value) = section.content else { return nil }
    for part in parts.dropFirst() {
      guard let next = value[field: part] else { return nil }
      value = next
    }
    return .value(value)
  }

  /// Each group's side, from its members' values on the three sides.
  mutating func decideGroups(base: SaveDocument, ours: SaveDocument, theirs: SaveDocument) {
    for members in rules.groups where !members.isEmpty {
      let label = members.joined(separator: "+")
      let found = members.map { (Self.find($0, in: base), Self.find($0, in: ours), Self.find($0, in: theirs)) }
      let oursChanged = found.contains { $0.1 != $0.0 }
      let theirsChanged = found.contains { $0.2 != $0.0 }
      var choice = GroupChoice(label: label, side: .ours, how: "")
      if found.allSatisfy({ $0.1 == $0.2 }) {
        choice.how = oursChanged ? "both made the same change" : "neither side changed it"
      } else if !oursChanged {
        fromTheirs += 1
        (choice.side, choice.how) = (.theirs, "only theirs changed it")
      } else if !theirsChanged {
        fromOurs += 1
        choice.how = "only ours changed it"
      } else {
        func object(_ pick: ((Found?, Found?, Found?)) -> Found?) -> SaveValue {
          .object(SaveObject(zip(members, found).compactMap { name, f in pick(f)?.saveValue.map { (name, $0) } }))
        }
        let field = MergeField(path: label, base: object(\.0), ours: object(\.1), theirs: object(\.2))
        let (resolution, side) = settleSide(field)
        conflicts.append(ContestedValue(field: field, resolution: resolution))
        (choice.side, choice.how) = (side, "both changed it: \(resolution ?? "nothing settles it")")
      }
      for member in members where groupOf[member] == nil { groupOf[member] = choices.count }
      choices.append(choice)
    }
  }

  func groupChoice(_ path: String) -> GroupChoice? {
    groupOf.isEmpty ? nil : groupOf[path].map { choices[$0] }
  }

  /// Whether a group names a field inside `path`.
  func groupsInside(_ path: String) -> Bool {
    !groupOf.isEmpty && rules.groups.contains { $0.contains { $0.hasPrefix(path + ".") } }
  }

  /// `side`'s value; ours for an unsettled one (the document is not made then).
  static func value<Value>(on side: MergeSide?, _ base: Value?, _ ours: Value?, _ theirs: Value?) -> Value? {
    switch side {
    case .theirs?: theirs
    case .base?: base
    default: ours
    }
  }

  // MARK: Values

  /// A section's tree; `.some(nil)` when the section is absent, nil when it is raw bytes.
  static func tree(_ content: SaveSection.Content?) -> SaveValue?? {
    guard let content else { return .some(nil) }
    if case .tree(let tree) = content { return .some(tree) }
    return nil
  }

  /// The three-way rule for one value: one side's change is taken whole; a change on both
  /// sides follows the declaration for `path`, descends where something inside is declared,
  /// and is otherwise settled whole by the fallback.
  mutating func merge(
    _ base: SaveValue?, _ ours: SaveValue?, _ theirs: SaveValue?, path: String, declared: Bool = false
  ) -> SaveValue? {
    if let choice = groupChoice(path) { return Self.value(on: choice.side, base, ours, theirs) }
    if ours == theirs { return ours }
    // A group member inside may have to come from the side that did not change this value.
    if groupsInside(path), case .object(let o)? = ours, case .object(let t)? = theirs {
      return .object(mergeObject(base, o, t, path: path, everyKey: false, declared: declared))
    }
    if !declared, rules.rule(for: path) == nil {
      guard rules.declares(inside: path) else { return restValue(base, ours, theirs, path: path) }
      // Declared inside: its undeclared fields are the rest's, even when one side alone changed it.
      if case .object(let o)? = ours, case .object(let t)? = theirs {
        return .object(mergeObject(base, o, t, path: path, everyKey: false, declared: false))
      }
    }
    if let one = takeOneSide(base, ours, theirs) { return one }
    let field = MergeField(path: path, base: base, ours: ours, theirs: theirs)
    if let (pattern, rule) = rules.rule(for: path) {
      switch rule {
      case .union:
        if case .object(let o)? = ours, case .object(let t)? = theirs {
          return .object(mergeObject(base, o, t, path: path, everyKey: true, declared: true))
        }
        if let merged = Self.union(base, ours, theirs) {
          conflicts.append(ContestedValue(field: field, resolution: "rule union (\(pattern))"))
          return merged
        }
      case .byKey(let key):
        if let merged = mergeByKey(base, ours, theirs, key: key, path: path) { return merged }
      case .byIndex:
        if let merged = mergeByIndex(base, ours, theirs, path: path) { return merged }
      case .byEntity:
        if let merged = mergeByEntity(base, ours, theirs, path: path) { return merged }
      default:
        if let value = rule.apply(field) {
          conflicts.append(ContestedValue(field: field, resolution: "rule \(rule.name) (\(pattern))"))
          return value
        }
      }
    } else if rules.declares(inside: path) {
      if case .object(let o)? = ours, case .object(let t)? = theirs {
        return .object(mergeObject(base, o, t, path: path, everyKey: false, declared: declared))
      }
      if let merged = mergeByIndex(base, ours, theirs, path: path) { return merged }
    }
    return settle(field)
  }

  /// The value of the side that alone changed it (counted as taken from that side); nil when
  /// both sides changed it.
  mutating func takeOneSide<Value: Equatable>(_ base: Value?, _ ours: Value?, _ theirs: Value?) -> Value?? {
    if ours == base {
      fromTheirs += 1
      return .some(theirs)
    }
    if theirs == base {
      fromOurs += 1
      return .some(ours)
    }
    return nil
  }

  /// An undeclared value: the rest of the state's side. A value both sides changed is a
  /// conflict the rest's decision settled.
  private mutating func restValue(_ base: SaveValue?, _ ours: SaveValue?, _ theirs: SaveValue?, path: String)
    -> SaveValue?
  {
    if rules.mergesRestValueByValue {
      if let one = takeOneSide(base, ours, theirs) { return one }
      return settle(MergeField(path: path, base: base, ours: ours, theirs: theirs))
    }
    if restConflicts {
      // Settled with the rest of the state, even where only one side changed it.
      conflicts.append(
        ContestedValue(
          field: MergeField(path: path, base: base, ours: ours, theirs: theirs),
          resolution: rest.side.map { "policy: \($0.rawValue)" }))
    } else if rest.side == .theirs, ours == base {
      fromTheirs += 1
    } else if rest.side == .ours, theirs == base {
      fromOurs += 1
    }
    return Self.value(on: rest.side, base, ours, theirs)
  }

  // MARK: The undeclared rest

  /// Decides the side of everything the game did not declare, as one value: the side that
  /// changed it, or the fallback's when both did (unsettled without one).
  mutating func decideRest(base: SaveDocument, ours: SaveDocument, theirs: SaveDocument) {
    let (b, o, t) = (residue(base), residue(ours), residue(theirs))
    if o == t {
      rest.how = o == b ? "neither side changed it" : "both made the same change"
    } else if o == b {
      (rest.side, rest.how) = (.theirs, "only theirs changed it")
    } else if t == b {
      (rest.side, rest.how) = (.ours, "only ours changed it")
    } else {
      restConflicts = true
      let (resolution, side) = settleSide(MergeField(path: "", base: nil, ours: nil, theirs: nil))
      (rest.side, rest.how) = (side, "both changed it: \(resolution ?? "nothing settles it")")
    }
  }

  /// The undeclared part of a save: each tree section less what a rule or a group declares.
  /// Raw sections (a thumbnail, a load report) are derived from the state and left out.
  private func residue(_ document: SaveDocument) -> [String: SaveValue] {
    var parts: [String: SaveValue] = [:]
    for section in document.sections where !Self.derivedSections.contains(section.name) {
      switch section.content {
      case .tree(let tree): parts[section.name] = residue(tree, path: section.name)
      case .raw(let bytes) where rules.rule(for: section.name) == nil && groupOf[section.name] == nil:
        parts[section.name] = .bytes(bytes)  // a game's own blob (a replay) is state
      case .raw: break
      }
    }
    return parts
  }

  /// Raw sections made from the state when it is saved, never state themselves.
  static let derivedSections: Set<String> = ["thumbnail", LoadReport.sectionName]

  private func residue(_ value: SaveValue, path: String) -> SaveValue? {
    if rules.rule(for: path) != nil || groupOf[path] != nil { return nil }
    guard rules.declares(inside: path) else { return value }
    guard case .object(let object) = value else { return nil }  // an array declared inside: declared
    return .object(
      SaveObject(
        object.fields.compactMap { field in residue(field.value, path: "\(path).\(field.name)").map { (field.name, $0) }
        }))
  }

  /// An object something inside is declared for: each declared field merges on its own; the
  /// undeclared ones are one value, taken whole from one side (`everyKey`: every key merges).
  mutating func mergeObject(
    _ base: SaveValue?, _ ours: SaveObject, _ theirs: SaveObject, path: String, everyKey: Bool, declared: Bool
  ) -> SaveObject {
    var baseObject: SaveObject?
    if case .object(let object)? = base { baseObject = object }
    var names = Set(ours.fields.map(\.name))
    names.formUnion(theirs.fields.map(\.name))
    let declaredNames = names.filter { everyKey || rules.declares(atOrInside: "\(path).\($0)") }
    func rest(_ object: SaveObject?) -> SaveObject {
      SaveObject(object?.fields.filter { !declaredNames.contains($0.name) } ?? [])
    }
    let (restBase, restOurs, restTheirs) = (rest(baseObject), rest(ours), rest(theirs))
    var restMerged = restOurs
    if restOurs == restTheirs {
      restMerged = restOurs
    } else if !declared {
      // Undeclared fields beside declared ones are part of the state's undeclared rest.
      if case .object(let object)? = restValue(
        baseObject == nil ? nil : .object(restBase), .object(restOurs), .object(restTheirs), path: path)
      {
        restMerged = object
      } else {
        restMerged = SaveObject([])
      }
    } else if restOurs == restBase {
      fromTheirs += 1
      restMerged = restTheirs
    } else if restTheirs == restBase {
      fromOurs += 1
    } else {
      let field = MergeField(
        path: path, base: baseObject == nil ? nil : .object(restBase), ours: .object(restOurs),
        theirs: .object(restTheirs))
      if case .object(let object)? = settle(field) { restMerged = object }
    }
    var fields: [(name: String, value: SaveValue)] = []
    for name in names.sorted() {
      if declaredNames.contains(name) {
        if let value = merge(baseObject?[name], ours[name], theirs[name], path: "\(path).\(name)", declared: declared) {
          fields.append((name, value))
        }
      } else if let value = restMerged[name] {
        fields.append((name, value))
      }
    }
    return SaveObject(fields)
  }

  /// The side a rule takes for a value merged only as a whole (an element of a bulk array, a
  /// raw section): `ours` and `theirs` apply; `max`, `min` and closures need values.
  static func wholeSide(_ rule: MergeRule) -> MergeSide? {
    switch rule {
    case .ours: .ours
    case .theirs: .theirs
    default: nil
    }
  }

  /// A value both sides changed that no declaration settled: the fallback side's, whole.
  private mutating func settle(_ field: MergeField) -> SaveValue? {
    let (resolution, side) = settleSide(field)
    conflicts.append(ContestedValue(field: field, resolution: resolution))
    return Self.value(on: side, field.base, field.ours, field.theirs)
  }

  func settleSide(_ field: MergeField) -> (String?, MergeSide?) {
    guard let fallback else { return (nil, nil) }
    return ("policy: \(fallback.rawValue)", fallback)
  }

  /// A raw section (a thumbnail, a load report): derived from the state, so when both sides
  /// changed it, the fallback side's is taken (ours without one) and no conflict is counted;
  /// an `ours` or `theirs` rule for its name still decides.
  func pick(
    _ base: SaveSection.Content?, _ ours: SaveSection.Content?, _ theirs: SaveSection.Content?, path: String
  ) -> SaveSection.Content? {
    if ours == theirs { return ours }
    if let (_, rule) = rules.rule(for: path), let side = Self.wholeSide(rule) {
      return side == .ours ? ours : theirs
    }
    // Derived bytes (a thumbnail) and a game's blobs alike follow the rest of the state.
    return Self.value(on: rest.side ?? fallback ?? .ours, base, ours, theirs)
  }

  // MARK: Reports

  /// Where section `name` came from, given the conflicts found inside it.
  func report(
    _ name: String, _ base: SaveSection.Content?, _ ours: SaveSection.Content?, _ theirs: SaveSection.Content?,
    merged: SaveSection.Content?, conflicts: ArraySlice<ContestedValue>
  ) -> SectionMerge {
    var prefix = ""
    if let choice = groupChoice(name) {
      prefix = "group \(choice.label): "
      if ours != theirs {  // the group's side, even where only the other side changed this member
        return SectionMerge(
          name: name, source: choice.side.map(SectionMerge.Source.side) ?? .unsettled, how: prefix + choice.how)
      }
    }
    if ours == theirs {
      return ours == base
        ? SectionMerge(name: name, source: .unchanged, how: prefix + "neither side changed it")
        : SectionMerge(name: name, source: .same, how: prefix + "both made the same change")
    }
    if groupChoice(name) == nil, !rules.declares(atOrInside: name) {
      // Undeclared: the rest of the state's side, whichever side changed this section.
      let source = rest.side.map(SectionMerge.Source.side) ?? .unsettled
      let changer = ours == base ? "theirs" : "ours"
      let how: String
      if ours != base, theirs != base {
        how = "both changed it: \(rest.side.map { "policy: \($0.rawValue)" } ?? "nothing settles it")"
      } else if rest.side?.rawValue == changer {
        how = "only \(changer) changed it"
      } else {
        how =
          "only \(changer) changed it; both changed the rest of the state: "
          + (rest.side.map { "policy: \($0.rawValue)" } ?? "nothing settles it")
      }
      return SectionMerge(name: name, source: source, how: how)
    }
    if ours == base, merged == theirs {
      return SectionMerge(name: name, source: .side(.theirs), how: prefix + "only theirs changed it")
    }
    if theirs == base, merged == ours {
      return SectionMerge(name: name, source: .side(.ours), how: prefix + "only ours changed it")
    }
    let source: SectionMerge.Source =
      conflicts.contains { $0.resolution == nil }
      ? .unsettled
      : merged == ours ? .side(.ours) : merged == theirs ? .side(.theirs) : merged == base ? .side(.base) : .merged
    let how: String
    if conflicts.isEmpty, ours != base, theirs != base {
      how = "both changed it: derived data, the fallback's side"
    } else if conflicts.isEmpty {
      how = "\(ours == base ? "only theirs" : "only ours") changed it; a group inside came from the other side"
    } else if conflicts.count == 1, conflicts.first?.path == name {
      how = "both changed it: \(conflicts.first?.resolution ?? "nothing settles it")"
    } else {
      how = conflicts.map { "\($0.path == name ? "other fields" : $0.path): \($0.resolution ?? "nothing settles it")" }
        .joined(separator: "; ")
    }
    return SectionMerge(name: name, source: source, how: how)
  }
}
