import Stasis
import StasisMerge
import Testing

/// A small game's state with every shape a merge meets: numbers, a nested object, a
/// dictionary, a plain array and a bulk array.
struct Spark: BulkStorable, Equatable {
  var x: Float = 0
  var y: Float = 0
  static let bulkLayout = BulkLayout(of: Spark.self, [.field("x", \.x), .field("y", \.y)])
}

struct MergeState: Codable, Sendable, Equatable {
  struct Score: Codable, Sendable, Equatable {
    var points: Int64 = 0
    var highScore: Int64 = 0
  }
  struct Settings: Codable, Sendable, Equatable {
    var volume: Double = 0.5
    var name = "player"
  }
  var score = Score()
  var settings = Settings()
  var inventory: [String: Int] = ["potion": 1]
  var flags: [Bool] = [false, false, false]
  var sparks: [Spark] = (0..<4).map { Spark(x: Float($0), y: 0) }
}

let mergeCodec = SaveCodec<MergeState>(game: GameIdentity(name: "merge-test", build: "1", schemaVersion: 1))

func document(_ state: MergeState, playTime: Double = 0, progress: Double? = nil, createdAt: Int64 = 0) throws
  -> SaveDocument
{
  try mergeCodec.document(
    for: state, summary: SaveSummary(playTime: playTime, progress: progress), createdAt: createdAt)
}

func state(of document: SaveDocument?) throws -> MergeState {
  try mergeCodec.state(from: try #require(document))
}

@Suite("Three-way merge of self-describing saves")
struct ThreeWayMergeTests {
  let base = MergeState()

  @Test(
    "the undeclared rest of the state comes from the side that changed it; a dictionary declared union merges key by key"
  )
  func disjoint() throws {
    var ours = base
    ours.settings.volume = 0.9
    ours.inventory["sword"] = 1
    var theirs = base
    theirs.inventory["shield"] = 2
    let outcome = ThreeWayMerge.merge(
      base: try document(base), ours: try document(ours), theirs: try document(theirs), rules: ["inventory": .union],
      fallback: nil, createdAt: 5)
    #expect(outcome.conflicts.isEmpty)
    let merged = try state(of: outcome.document)
    #expect(merged.settings.volume == 0.9, "only ours changed the undeclared rest")
    #expect(
      merged.inventory == ["potion": 1, "sword": 1, "shield": 2], "a dictionary declared union merges key by key")
    #expect(outcome.takenFromOurs == 2)
    #expect(outcome.takenFromTheirs == 1)

    // Both changed the undeclared rest, in different sections: one side's, whole, by the policy.
    theirs.score.points = 120
    let (b, o, t) = (try document(base), try document(ours), try document(theirs))
    let unsettled = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t, rules: ["inventory": .union], fallback: nil, createdAt: 5)
    #expect(unsettled.document == nil, "no policy: nothing is made up")
    #expect(unsettled.unsettled.map(\.path) == ["score", "settings"])
    let byPolicy = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t, rules: ["inventory": .union], fallback: .theirs, createdAt: 5)
    let picked = try state(of: byPolicy.document)
    #expect(picked.score.points == 120 && picked.settings == theirs.settings, "the rest is theirs, whole")
    #expect(picked.inventory == ["potion": 1, "sword": 1, "shield": 2], "the declared part still merges")
    #expect(
      byPolicy.sections.first { $0.name == "settings" }?.description
        == "settings: theirs (only ours changed it; both changed the rest of the state: policy: theirs)")
    let undeclared = ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: .theirs, createdAt: 5)
    #expect(try state(of: undeclared.document) == theirs, "no declarations: the policy's side, whole")
    #expect(undeclared.conflicts.map(\.path) == ["inventory", "score", "settings"])
  }

  @Test("the same field on both sides follows the game's rule: max for a high score")
  func ruleMax() throws {
    var ours = base
    ours.score.highScore = 40
    var theirs = base
    theirs.score.highScore = 55
    let outcome = ThreeWayMerge.merge(
      base: try document(base), ours: try document(ours), theirs: try document(theirs),
      rules: ["score.highScore": .max], fallback: nil, createdAt: 5)
    #expect(try state(of: outcome.document).score.highScore == 55)
    #expect(outcome.conflicts.map(\.path) == ["score.highScore"])
    #expect(outcome.conflicts.first?.resolution == "rule max (score.highScore)")
    let lower = ThreeWayMerge.merge(
      base: try document(base), ours: try document(ours), theirs: try document(theirs),
      rules: ["score.highScore": .min], fallback: nil, createdAt: 5)
    #expect(try state(of: lower.document).score.highScore == 40)
  }

  @Test("a section both changed without a rule is the policy's side, whole, or left unsettled")
  func noRule() throws {
    var ours = base
    ours.settings.name = "ours"
    var theirs = base
    theirs.settings.name = "theirs"
    let (b, o, t) = (try document(base), try document(ours), try document(theirs))
    #expect(
      try state(of: ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: .theirs, createdAt: 1).document)
        .settings.name == "theirs")
    #expect(
      try state(of: ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: .ours, createdAt: 1).document)
        .settings.name == "ours")
    #expect(
      try state(of: ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: .base, createdAt: 1).document)
        .settings.name == "player")
    let unsettled = ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: nil, createdAt: 1)
    #expect(unsettled.document == nil, "nothing is made up for a field nobody settled")
    #expect(unsettled.unsettled.map(\.path) == ["settings"], "the section is one value")
    let custom = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t,
      rules: [
        "settings.name": .custom { field in
          guard case .string(let a)? = field.ours, case .string(let b)? = field.theirs else { return nil }
          return .string("\(a)+\(b)")
        }
      ], fallback: nil, createdAt: 1)
    #expect(try state(of: custom.document).settings.name == "ours+theirs")
  }

  @Test("bulk arrays merge element by element when declared and lengths and layouts match, whole otherwise")
  func bulk() throws {
    var ours = base
    ours.sparks[0].x = 10
    ours.sparks[1].x = 11
    var theirs = base
    theirs.sparks[2].y = 20
    theirs.sparks[1].y = 21
    let (b, o, t) = (try document(base), try document(ours), try document(theirs))
    let undeclared = ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: .theirs, createdAt: 1)
    #expect(try state(of: undeclared.document).sparks == theirs.sparks, "not declared: whole")
    let merged = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t, rules: ["sparks": .byIndex], fallback: .theirs, createdAt: 1)
    let sparks = try state(of: merged.document).sparks
    #expect(sparks[0] == Spark(x: 10, y: 0), "changed by ours only")
    #expect(sparks[2] == Spark(x: 2, y: 20), "changed by theirs only")
    #expect(sparks[1] == Spark(x: 1, y: 21), "changed by both: the fallback side's element, whole")
    #expect(sparks[3] == base.sparks[3])
    #expect(merged.conflicts.map(\.path) == ["sparks[1]"])
    let ruled = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t, rules: ["sparks[*]": .ours], fallback: .theirs, createdAt: 1)
    #expect(try state(of: ruled.document).sparks[1] == Spark(x: 11, y: 0))

    var longer = base
    longer.sparks.append(Spark(x: 9, y: 9))
    let whole = ThreeWayMerge.merge(
      base: b, ours: o, theirs: try document(longer), rules: ["sparks": .byIndex], fallback: .theirs, createdAt: 1)
    #expect(try state(of: whole.document).sparks == longer.sparks, "lengths differ: the array is one value")
    #expect(whole.conflicts.map(\.path) == ["sparks"])
    let kept = ThreeWayMerge.merge(base: b, ours: o, theirs: try document(longer), fallback: .ours, createdAt: 1)
    #expect(try state(of: kept.document).sparks == ours.sparks)
  }

  @Test("plain arrays merge element by element when a rule for their elements is declared")
  func arrays() throws {
    var ours = base
    ours.flags[0] = true
    var theirs = base
    theirs.flags[2] = true
    let (b, o, t) = (try document(base), try document(ours), try document(theirs))
    let merged = ThreeWayMerge.merge(
      base: b, ours: o, theirs: t, rules: ["flags[*]": .max], fallback: nil, createdAt: 1)
    #expect(try state(of: merged.document).flags == [true, false, true])
    let whole = ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: nil, createdAt: 1)
    #expect(whole.unsettled.map(\.path) == ["flags"], "undeclared: one value both changed")
  }

  @Test("the header takes the longer play time and the higher progress; the result is deterministic")
  func header() throws {
    var ours = base
    ours.score.points = 1
    var theirs = base
    theirs.settings.volume = 1
    let (b, o, t) = (
      try document(base, playTime: 10, progress: 0.1), try document(ours, playTime: 40, progress: 0.2),
      try document(theirs, playTime: 30, progress: 0.6)
    )
    let rules: MergeRules = ["settings.volume": .max]
    let first = ThreeWayMerge.merge(base: b, ours: o, theirs: t, rules: rules, fallback: .ours, createdAt: 99)
    let again = ThreeWayMerge.merge(base: b, ours: o, theirs: t, rules: rules, fallback: .ours, createdAt: 99)
    let merged = try #require(first.document)
    #expect(try state(of: merged).score.points == 1 && state(of: merged).settings.volume == 1, "combined")
    #expect(merged.summary.playTime == 40)
    #expect(merged.summary.progress == 0.6)
    // A result that is one side whole carries that side's summary exactly.
    let whole = try #require(ThreeWayMerge.merge(base: b, ours: o, theirs: t, fallback: .ours, createdAt: 99).document)
    #expect(whole.sections == o.sections)
    #expect(whole.summary == o.summary)
    #expect(merged.createdAt == 99)
    #expect(SaveFileFormat.encode(merged) == SaveFileFormat.encode(try #require(again.document)))
  }

  @Test("saves of another game or another schema are not merged field by field")
  func refusals() throws {
    let other = SaveCodec<MergeState>(game: GameIdentity(name: "merge-test", build: "2", schemaVersion: 2))
    let newer = try other.document(for: base, summary: SaveSummary(), createdAt: 0)
    let outcome = ThreeWayMerge.merge(
      base: try document(base), ours: try document(base), theirs: newer, fallback: .ours, createdAt: 1)
    #expect(outcome.document == nil)
    #expect(outcome.refused?.kind == .differentSchemas)
    #expect(outcome.refused?.message.contains("different schema versions") == true)

    let stranger = try SaveCodec<MergeState>(game: GameIdentity(name: "orchard", build: "1", schemaVersion: 1))
      .document(for: base, summary: SaveSummary(), createdAt: 0)
    let another = ThreeWayMerge.merge(
      base: try document(base), ours: try document(base), theirs: stranger, fallback: .ours, createdAt: 1)
    #expect(
      another.refused == MergeRefusal(.differentGames, "the saves are of different games ('merge-test', 'orchard')"))
    #expect(another.document == nil)
  }

  @Test("the policies pick a side from the headers; ties go to theirs so devices agree")
  func policies() throws {
    let older = try document(base, playTime: 50, progress: 0.9, createdAt: 100)
    let newer = try document(base, playTime: 20, progress: 0.1, createdAt: 200)
    #expect(ConflictPolicy.mostRecent.side(ours: newer, theirs: older) == .ours)
    #expect(ConflictPolicy.mostRecent.side(ours: older, theirs: newer) == .theirs)
    #expect(ConflictPolicy.longestPlayTime.side(ours: older, theirs: newer) == .ours)
    #expect(ConflictPolicy.highestProgress.side(ours: newer, theirs: older) == .theirs)
    #expect(ConflictPolicy.lastKnownGood.side(ours: older, theirs: newer) == .base)
    #expect(ConflictPolicy.manual.side(ours: older, theirs: newer) == nil)
    #expect(ConflictPolicy.mostRecent.side(ours: older, theirs: older) == .theirs, "a tie")
    #expect(ConflictPolicy.names.allSatisfy { ConflictPolicy(name: $0)?.name == $0 })
  }
}
