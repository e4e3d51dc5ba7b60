import ArgumentParser
import Foundation
import Stasis
import StasisCloud

struct Merge: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Merge two saves of one game field by field against their common ancestor.",
    discussion: """
      A field only one side changed is taken from it; a field both changed is a conflict, settled
      by a --rule for its path, else by --take, else left for you: then every conflicting field is
      listed, nothing is written, and the exit code is 1. Objects merge field by field, arrays and
      bulk arrays element by element when their lengths (and layouts) match.

      Example:
        stasis merge base.stasis ours.stasis theirs.stasis -o merged.stasis
        stasis merge base.stasis ours.stasis theirs.stasis -o merged.stasis --rule score.highScore=max --take theirs

      Exit codes: 0 merged cleanly (rules count as clean) and written; 1 fields conflict: nothing is
      written, unless --take settled them (then written, and still 1, so a script knows), or a save
      is invalid; 64 usage; 74 I/O.
      """
  )

  @Argument(help: "The common ancestor (the base revision).")
  var base: String

  @Argument(help: "One side (ours).")
  var ours: String

  @Argument(help: "The other side (theirs).")
  var theirs: String

  @Option(name: .shortAndLong, help: "Where the merged save goes.")
  var output: String

  @Option(
    help: "Settle every conflict no rule settles by taking this side: ours, theirs or base (exit 1 all the same).")
  var take: String?

  @Option(
    help: ArgumentHelp(
      "A rule for fields both sides changed: PATH=max|min|ours|theirs; PATH may use [*] for any index.",
      valueName: "path=rule"))
  var rule: [String] = []

  @Flag(help: "Print the conflicts as JSON.")
  var json = false

  @OptionGroup var key: KeyFileOption

  func validate() throws {
    if let take, MergeSide(rawValue: take) == nil { throw ValidationError("--take is ours, theirs or base") }
    _ = try rules()
  }

  private func rules() throws -> MergeRules {
    var rules = MergeRules()
    for entry in rule {
      let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
      guard parts.count == 2, !parts[0].isEmpty else { throw ValidationError("--rule takes PATH=RULE, not '\(entry)'") }
      switch parts[1] {
      case "max": rules[parts[0]] = .max
      case "min": rules[parts[0]] = .min
      case "ours": rules[parts[0]] = .ours
      case "theirs": rules[parts[0]] = .theirs
      default: throw ValidationError("--rule \(parts[0]): the rule is max, min, ours or theirs, not '\(parts[1])'")
      }
    }
    return rules
  }

  func run() throws {
    let signing = try key.policy()
    let documents = try [base, ours, theirs].map { try openSave($0, signing: signing).document }
    let outcome = ThreeWayMerge.merge(
      base: documents[0], ours: documents[1], theirs: documents[2], rules: try rules(),
      fallback: take.flatMap(MergeSide.init(rawValue:)), createdAt: Int64(Date().timeIntervalSince1970 * 1000))
    if let refusal = outcome.refusal {
      throw fail(SaveFileError(.typeMismatch, refusal, context: .init(file: theirs, part: "header")))
    }
    let out = Terminal.standardOutput
    if json {
      print(
        jsonText([
          "conflicts": outcome.conflicts.map { conflict in
            [
              "path": conflict.path, "base": conflict.field.base.map(jsonObject) ?? NSNull(),
              "ours": conflict.field.ours.map(jsonObject) ?? NSNull(),
              "theirs": conflict.field.theirs.map(jsonObject) ?? NSNull(),
              "settled": conflict.resolution ?? NSNull(),
            ] as [String: Any]
          },
          "fromOurs": outcome.takenFromOurs, "fromTheirs": outcome.takenFromTheirs,
          "written": outcome.document == nil ? NSNull() : output as Any,
        ]))
    } else {
      for conflict in outcome.conflicts {
        let field = conflict.field
        out.line(
          out.paint(conflict.path, .bold) + ": base \(shortText(field.base)), ours "
            + out.paint(shortText(field.ours), .red) + ", theirs " + out.paint(shortText(field.theirs), .green)
            + " → " + (conflict.resolution.map { out.paint($0, .green) } ?? out.paint("CONFLICT", .red)))
      }
      let unsettled = outcome.unsettled.count
      out.line(
        "\(outcome.conflicts.count) field\(outcome.conflicts.count == 1 ? "" : "s") both changed"
          + (outcome.conflicts.isEmpty ? "" : " (\(outcome.conflicts.count - unsettled) settled, \(unsettled) not)")
          + "; \(outcome.takenFromOurs) taken from ours, \(outcome.takenFromTheirs) from theirs")
    }
    guard let merged = outcome.document else {
      Terminal.standardError.line(
        "nothing written: settle the conflicts with --rule PATH=RULE or --take ours|theirs|base")
      throw Exit.invalid
    }
    let bytes = SaveFileFormat.encode(merged, signingKey: signing.current)
    do {
      try Data(bytes).write(to: URL(fileURLWithPath: output), options: .atomic)
    } catch {
      throw fail(SaveFileError(.io, "could not be written: \(error)", context: .init(file: output)))
    }
    let taken = outcome.conflicts.filter { $0.resolution?.hasPrefix("policy") == true }.count
    if !json {
      out.line(
        "merged → \(output)"
          + (taken == 0 ? "" : " (\(taken) conflicting field\(taken == 1 ? "" : "s") settled by --take \(take ?? ""))"))
    }
    if taken > 0 { throw Exit.invalid }  // written, but not clean: the script should know
  }
}
