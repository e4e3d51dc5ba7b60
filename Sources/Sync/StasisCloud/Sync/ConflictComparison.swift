import Stasis
import StasisMerge

/// Two saves of a conflict side by side, as a player chooses between them: for each side what
/// the game's summary says, where and when it was saved and how long it was played, and the
/// fields where the two differ most.
///
/// A ``Conflict`` has one (``Conflict/comparison``), and so has the report of a conflict left to
/// the player (``ConflictReport/comparison``, in the ``CloudEvent/conflict(_:)`` event and
/// ``CloudStatus/conflicts``). Its ``description`` is one line a "which save?" dialog can show:
///
/// ```
/// laptop: level 3, 2 h 10 min · phone: level 2, 3 h 05 min; gold 1,200 against 450
/// ```
public struct ConflictComparison: Sendable, Equatable, CustomStringConvertible {
  /// This device's save.
  public var ours: ConflictSide
  /// The server's head.
  public var theirs: ConflictSide
  /// The fields whose values differ, most telling first, at most ``fieldLimit``: the game's
  /// summary fields first, in the order the summary declares them; then the state's fields
  /// behind them (a field whose two values are a differing summary field's two values, as a
  /// score's points are the summary's score); then the rest of the state's, numbers by how far
  /// apart they are (relative to the larger), then the others in `stasis diff`'s order.
  public var differences: [ConflictField]
  /// How many fields differ in all (``differences`` holds the first ``fieldLimit``).
  public var differenceCount: Int

  /// The most fields ``differences`` holds.
  public static let fieldLimit = 8

  /// Compares `ours` (this device's generation `oursGeneration`) with `theirs` (the server's
  /// revision `theirsRevision`).
  public init(ours: SaveDocument, oursGeneration: Int?, theirs: SaveDocument, theirsRevision: Int?) {
    self.ours = ConflictSide(ours, side: .ours, generation: oursGeneration, revision: nil)
    self.theirs = ConflictSide(theirs, side: .theirs, generation: nil, revision: theirsRevision)
    let ranked = Self.ranked(SaveDifference.between(ours, theirs), summary: Self.summaryOrder(ours, theirs))
    differenceCount = ranked.count
    differences = Array(ranked.prefix(Self.fieldLimit))
  }

  /// One line: each side's device, summary and play time, then the first `fields` differences
  /// (`gold 1,200 against 450`, ours first). The summary's fields that differ are told in the
  /// sides already, so the line names the state's.
  public func line(fields: Int = 3) -> String {
    let shown = differences.filter { !$0.inSummary }.prefix(fields)
    let sides = "\(ours.text) · \(theirs.text)"
    guard !shown.isEmpty else { return sides }
    return sides + "; " + shown.map(\.text).joined(separator: ", ")
  }

  /// ``line(fields:)`` with three fields.
  public var description: String { line() }

  /// The summary's field names in declaration order, ours first, then theirs' own.
  private static func summaryOrder(_ ours: SaveDocument, _ theirs: SaveDocument) -> [String] {
    var names: [String] = []
    for details in [ours.summary.details, theirs.summary.details] {
      guard case .object(let object) = details else { continue }
      for field in object.fields where !names.contains(field.name) { names.append(field.name) }
    }
    return names
  }

  /// The differences as a player reads them: the summary's, then the state's most apart first.
  /// The header's own fields (frame, play time, device, when) are the sides', not differences.
  static func ranked(_ all: [SaveDifference], summary: [String]) -> [ConflictField] {
    let prefix = "metadata.summary."
    var inSummary: [(order: Int, field: ConflictField)] = []
    var state: [(index: Int, distance: Double?, field: ConflictField)] = []
    for (index, difference) in all.enumerated() {
      if difference.path.hasPrefix(prefix) {
        let name = String(difference.path.dropFirst(prefix.count))
        let top = String(name.prefix { $0 != "." && $0 != "[" })
        let field = ConflictField(path: name, ours: difference.old, theirs: difference.new, inSummary: true)
        inSummary.append((summary.firstIndex(of: top) ?? summary.count, field))
      } else if !difference.path.hasPrefix("metadata") {
        let field = ConflictField(path: difference.path, ours: difference.old, theirs: difference.new, inSummary: false)
        state.append((index, field.distance, field))
      }
    }
    inSummary.sort { $0.order < $1.order }  // stable: a field's own paths keep their order
    // The state's fields the summary shows: both sides' values are a summary field's two values.
    let shown = inSummary.compactMap { entry -> (SaveValue, SaveValue)? in
      guard let ours = entry.field.ours, let theirs = entry.field.theirs else { return nil }
      return (ours, theirs)
    }
    func behindSummary(_ field: ConflictField) -> Bool {
      guard let ours = field.ours, let theirs = field.theirs else { return false }
      return shown.contains { Self.sameValue($0.0, ours) && Self.sameValue($0.1, theirs) }
    }
    state.sort { a, b in
      let (aShown, bShown) = (behindSummary(a.field), behindSummary(b.field))
      if aShown != bShown { return aShown }
      switch (a.distance, b.distance) {
      case (let x?, let y?) where x != y: return x > y
      case (_?, nil): return true
      case (nil, _?): return false
      default: return a.index < b.index
      }
    }
    return inSummary.map(\.field) + state.map(\.field)
  }

  /// Equal as a player reads them: numbers by value whatever their width (a summary's `Int` and
  /// the state's `Int64`), anything else as it is.
  private static func sameValue(_ a: SaveValue, _ b: SaveValue) -> Bool {
    if let x = a.doubleValue, let y = b.doubleValue { return x == y }
    return a == b
  }
}

/// One side of a ``ConflictComparison``: what its header says.
public struct ConflictSide: Sendable, Equatable {
  /// Which side: `MergeSide.ours` (this device) or `MergeSide.theirs` (the server's head).
  public var side: MergeSide
  /// The local generation, for ours.
  public var generation: Int?
  /// The server's revision, for theirs.
  public var revision: Int?
  /// The device that saved it (`SaveSummary.device`).
  public var device: String
  /// When it was saved, in Unix milliseconds (`SaveDocument.createdAt`).
  public var savedAt: Int64
  /// Its play time, in seconds.
  public var playTime: Double
  /// How far through the game, from 0 to 1, when the game says.
  public var progress: Double?
  /// The game's own summary fields (`SaveSummary.details`): `level`, `arena`, `gold`.
  public var details: SaveValue

  init(_ document: SaveDocument, side: MergeSide, generation: Int?, revision: Int?) {
    self.side = side
    self.generation = generation
    self.revision = revision
    device = document.summary.device
    savedAt = document.createdAt
    playTime = document.summary.playTime
    progress = document.summary.progress
    details = document.summary.details
  }

  /// `laptop: level 3, 2 h 10 min`: the device, each top-level summary field that is a single
  /// value, and the play time.
  public var text: String {
    var parts: [String] = []
    if case .object(let object) = details {
      for field in object.fields {
        if let value = ConflictField.valueText(field.value) { parts.append("\(field.name) \(value)") }
      }
    }
    parts.append(Self.duration(playTime))
    return "\(device.isEmpty ? side.rawValue : device): " + parts.joined(separator: ", ")
  }

  /// A play time as a player reads it: `3 h 05 min`, `12 min`, `40 s`.
  static func duration(_ seconds: Double) -> String {
    let total = Int(max(0, seconds.isFinite ? seconds : 0))
    let (hours, minutes) = (total / 3600, total % 3600 / 60)
    if hours > 0 { return "\(hours) h " + (minutes < 10 ? "0" : "") + "\(minutes) min" }
    return minutes > 0 ? "\(minutes) min" : "\(total) s"
  }
}

/// A field whose value differs between the two sides of a conflict.
public struct ConflictField: Sendable, Equatable {
  /// The field's path in the state (`score.gold`, `monsters[id=7].hp`), or in the game's summary
  /// when ``inSummary`` (`level`).
  public var path: String
  /// Its value in this device's save; nil when only theirs has it.
  public var ours: SaveValue?
  /// Its value in the server's head; nil when only ours has it.
  public var theirs: SaveValue?
  /// True when the field is one of the game's summary fields.
  public var inSummary: Bool

  /// `gold 1,200 against 450`, `score.points 30 against 235`: the path's last two names (the
  /// field and what it belongs to), ours, then theirs.
  public var text: String {
    let names = path.split(separator: ".")
    let name = names.count > 2 ? names.suffix(2).joined(separator: ".") : path
    return "\(name) \(Self.shown(ours)) against \(Self.shown(theirs))"
  }

  /// How far apart two numbers are, relative to the larger (0 to 2); nil when either is not a number.
  var distance: Double? {
    guard let a = ours?.doubleValue, let b = theirs?.doubleValue, a.isFinite, b.isFinite else { return nil }
    let scale = max(abs(a), abs(b))
    return scale == 0 ? 0 : abs(a - b) / scale
  }

  private static func shown(_ value: SaveValue?) -> String {
    guard let value else { return "none" }
    return valueText(value) ?? shortText(value)
  }

  /// A single value as a player reads it: `1,200`, `2.5`, `Desert Outpost`, `yes`; nil for a
  /// structure (an object, an array, bytes).
  static func valueText(_ value: SaveValue) -> String? {
    switch value {
    case .string(let text): return text
    case .bool(let flag): return flag ? "yes" : "no"
    case .float32, .float64:
      guard let number = value.doubleValue, number.isFinite else { return value.doubleValue.map { "\($0)" } }
      if number.rounded() == number, abs(number) < 1e15 { return grouped(Int64(number)) }
      return "\((number * 100).rounded() / 100)"  // two decimals at most: 2.5, 0.33
    case .null: return "none"
    case .bytes, .array, .object, .bulk: return nil
    default:
      if let number = value.int64Value { return grouped(number) }
      return value.uint64Value.map { "\($0)" }
    }
  }

  /// `1200` as `1,200`.
  private static func grouped(_ number: Int64) -> String {
    let digits = String(number.magnitude)
    var out = ""
    for (index, digit) in digits.enumerated() {
      if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
      out.append(digit)
    }
    return (number < 0 ? "-" : "") + out
  }
}
