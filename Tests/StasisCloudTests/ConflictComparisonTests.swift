import Stasis
import StasisCloud
import Testing

@Suite("A conflict the player chooses by what differs: both sides' summaries and the fields apart")
struct ConflictComparisonTests {
  struct LevelSummary: Codable {
    var level: Int
    var arena: String
  }

  struct State: Codable {
    var gold: Int64
    var hp: Double
    var kills: Int64
    var name: String
    var frame: Int64
    var stage: Int64
  }

  static let codec = SaveCodec<State>(game: GameIdentity(name: "conflict-test", build: "1", schemaVersion: 1))

  static func document(
    _ state: State, level: Int, arena: String = "Desert", playTime: Double, device: String, at time: Int64
  ) throws -> SaveDocument {
    let summary = try SaveSummary(LevelSummary(level: level, arena: arena), playTime: playTime, device: device)
    return try codec.document(for: state, summary: summary, createdAt: time)
  }

  @Test("each side's device, when, play time and summary; the summary's differences first, then the state's most apart")
  func sides() throws {
    let ours = try Self.document(
      State(gold: 1200, hp: 90, kills: 41, name: "Ada", frame: 9_000, stage: 3), level: 3, playTime: 7_800,
      device: "laptop",
      at: 2_000)
    let theirs = try Self.document(
      State(gold: 450, hp: 88, kills: 40, name: "Ada", frame: 4_000, stage: 2), level: 2, playTime: 11_100,
      device: "phone",
      at: 1_000)
    let comparison = ConflictComparison(ours: ours, oursGeneration: 7, theirs: theirs, theirsRevision: 12)

    #expect(comparison.ours.side == .ours && comparison.ours.generation == 7 && comparison.ours.revision == nil)
    #expect(comparison.theirs.side == .theirs && comparison.theirs.revision == 12)
    #expect((comparison.ours.device, comparison.ours.savedAt, comparison.ours.playTime) == ("laptop", 2_000, 7_800))
    #expect(
      (comparison.theirs.device, comparison.theirs.savedAt, comparison.theirs.playTime) == ("phone", 1_000, 11_100))
    #expect(comparison.ours.details[field: "level"]?.int64Value == 3)
    #expect(comparison.theirs.details[field: "arena"] == .string("Desert"))

    // The summary's level first; then the state's stage, which is what the level shows (3 against
    // 2 on both); then the rest: frame 9000 against 4000 (0.56 apart), gold 1200 against 450
    // (0.63), kills (0.02), hp (0.02): most apart first. The name is the same.
    #expect(comparison.differences.map(\.path) == ["level", "stage", "gold", "frame", "kills", "hp"])
    #expect(comparison.differences.map(\.inSummary) == [true, false, false, false, false, false])
    #expect(comparison.differenceCount == 6)
    #expect(comparison.differences[2].ours == .int64(1200) && comparison.differences[2].theirs == .int64(450))
    #expect(
      comparison.description
        == "laptop: level 3, arena Desert, 2 h 10 min · phone: level 2, arena Desert, 3 h 05 min; stage 3 against 2, gold 1,200 against 450, frame 9,000 against 4,000"
    )
    #expect(comparison.line(fields: 1).hasSuffix("3 h 05 min; stage 3 against 2"))
  }

  @Test("equal states differ in nothing: the line is the two sides alone")
  func nothingApart() throws {
    let state = State(gold: 5, hp: 1, kills: 0, name: "Ada", frame: 1, stage: 1)
    let ours = try Self.document(state, level: 1, playTime: 40, device: "deck", at: 1)
    let theirs = try Self.document(state, level: 1, playTime: 720, device: "", at: 2)
    let comparison = ConflictComparison(ours: ours, oursGeneration: 1, theirs: theirs, theirsRevision: 1)
    #expect(comparison.differences.isEmpty && comparison.differenceCount == 0)
    #expect(comparison.description == "deck: level 1, arena Desert, 40 s · theirs: level 1, arena Desert, 12 min")
  }

  @Test("a field only one side has, a string and a structure read as a player would")
  func valuesAsRead() throws {
    struct Wide: Codable {
      var title: String
      var flags: [Int]
      var bonus: Int64?
    }
    let codec = SaveCodec<Wide>(game: GameIdentity(name: "conflict-test", build: "1", schemaVersion: 1))
    let ours = try codec.document(
      for: Wide(title: "Knight", flags: [1, 2], bonus: 3), summary: SaveSummary(playTime: 1), createdAt: 1)
    let theirs = try codec.document(
      for: Wide(title: "Squire", flags: [1, 2, 3], bonus: nil), summary: SaveSummary(playTime: 1), createdAt: 2)
    let fields = ConflictComparison(ours: ours, oursGeneration: nil, theirs: theirs, theirsRevision: nil).differences
    let texts = fields.map(\.text)
    #expect(texts.contains("title Knight against Squire"), "\(texts)")
    #expect(texts.contains("bonus 3 against none"), "\(texts)")
    #expect(texts.contains("flags.count 2 against 3"), "an array's length, named with the array: \(texts)")
  }
}
