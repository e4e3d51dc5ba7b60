import ArgumentParser
import Foundation
import Stasis
import StasisCloud
import StasisInspect
import StasisMerge

struct Merge: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Merge two saves of one game against their common ancestor, by the game's declarations.",
    discussion: """
      Everything the game did not declare is one value: when only one side
      changed it, it is taken from that side; when both did, it is taken
      whole from the --take side (or left for you: then every conflict is
      listed, nothing is written, and the exit code is 1), every undeclared
      section with it, even one only the other side changed. So without
      declarations a merge is one side's save. Declared paths merge on their
      own (rules: max, min, ours, theirs, union, by-index, by-entity, by-key FIELD, where
      FIELD may be a struct); a group of paths always comes from one side. A
      declared path, key or summary path the saves do not have is an error
      (exit 64). The report says, for each section, which side it came from
      or how it merged.

      Declarations come from --rule PATH=RULE, and from a file
      (--declarations FILE), one per line ('#' starts a comment; a PATH may
      use [*] for any index or key):
        player.highScore = max
        monsters = by-key id
        monsters[*].hp = min
        log = union
        group map, monsters, stairs
        summary gold = player.gold   # the merged save's summary field

      Example:
        stasis merge base.stasis ours.stasis theirs.stasis -o merged.stasis
        stasis merge base.stasis ours.stasis theirs.stasis -o merged.stasis \\
          --declarations merge.txt --take theirs

      A conflicting bulk array (an array of plain structs) or byte string is
      summarised: under its line, for each side that changed it, how many
      elements differ from the base, the changed ranges and the first five
      differing elements, as stasis diff prints them. In --json a bulk array
      in "base", "ours" or "theirs" is {"$bulk": {"count", "stride", "fields",
      "first"}} as stasis dump prints it, and ours' and theirs' also have
      "sinceBase": {"oldCount", "newCount", "differingElements",
      "changedRanges", "moreRanges", "first"}, as stasis diff --json prints a
      bulk difference. --all-elements prints every element instead (in text,
      every differing one), streamed.

      Exit codes: 0 merged cleanly (rules count as clean) and written; 1
      values conflict: nothing is written, unless --take settled them (then
      written, and still 1, so a script knows), or a save is invalid; 64 usage
      (a bad declaration); 74 I/O.
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
      "A rule for a path both sides changed: PATH=max|min|ours|theirs|union|by-index|by-entity|'by-key FIELD'; PATH may use [*] for any index or key. Overrides the file's rule for the same path.",
      valueName: "path=rule"))
  var rule: [String] = []

  @Option(
    help: ArgumentHelp(
      "A file of merge declarations: 'PATH = RULE' and 'group PATH, PATH, …' lines (see above).",
      valueName: "file"))
  var declarations: String?

  @Flag(help: "Print the conflicts as JSON.")
  var json = false

  @Flag(help: "Print every element of conflicting bulk arrays (every differing one in text), streamed, not a summary.")
  var allElements = false

  @OptionGroup var key: KeyFileOption

  func validate() throws {
    if let take, MergeSide(rawValue: take) == nil { throw ValidationError("--take is ours, theirs or base") }
    _ = try rules(declared: MergeRules())
  }

  /// The file's declarations (`declared`), then each --rule on top.
  private func rules(declared: MergeRules) throws -> MergeRules {
    var rules = declared
    for entry in rule {
      let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
      guard parts.count == 2, !parts[0].isEmpty else { throw ValidationError("--rule takes PATH=RULE, not '\(entry)'") }
      guard let parsed = MergeDeclarations.rule(named: parts[1]) else {
        throw ValidationError("--rule \(parts[0]): the rule is \(MergeDeclarations.ruleNames), not '\(parts[1])'")
      }
      rules[parts[0]] = parsed
    }
    return rules
  }

  func run() throws {
    let signing = try key.policy()
    let rules = try rules(declared: declarations.map(MergeDeclarations.read) ?? MergeRules())
    let documents = try [base, ours, theirs].map { try openSave($0, signing: signing).document }
    let unknown = rules.unknownPaths(in: documents)
    guard unknown.isEmpty else {
      throw ValidationError(
        "declared \(unknown.count == 1 ? "path" : "paths") not in any of the three saves: "
          + unknown.map { "'\($0)'" }.joined(separator: ", ") + "; nothing written")
    }
    let outcome = ThreeWayMerge.merge(
      base: documents[0], ours: documents[1], theirs: documents[2], rules: rules,
      fallback: take.flatMap(MergeSide.init(rawValue:)), createdAt: wallClockMilliseconds())
    if let refusal = outcome.refused {
      throw fail(refusal, file: theirs)
    }
    let out = TextOutput(.standardOutput)
    let listing: BulkListing = allElements ? .allElements : .summary
    if json {
      writeJSON(outcome, listing: listing, to: StreamedJSON(out))
    } else {
      for conflict in outcome.conflicts {
        let field = conflict.field
        out.line(
          out.paint(conflict.path, .bold) + ": base \(shortText(field.base)), ours "
            + out.paint(shortText(field.ours), .red) + ", theirs " + out.paint(shortText(field.theirs), .green)
            + " → " + (conflict.resolution.map { out.paint($0, .green) } ?? out.paint("CONFLICT", .red)))
        for (side, value) in [("ours", field.ours), ("theirs", field.theirs)] {
          for (path, change) in bulkChanges(from: field.base, to: value, path: conflict.path) {
            change.writeText(path: "\(path), base → \(side)", indent: "  ", listing: listing, to: out)
          }
        }
      }
      for section in outcome.sections where section.source != .unchanged {
        out.line("section " + section.description)
      }
      let unsettled = outcome.unsettled.count
      out.line(
        "\(outcome.conflicts.count) conflicting value\(outcome.conflicts.count == 1 ? "" : "s")"
          + (outcome.conflicts.isEmpty ? "" : " (\(outcome.conflicts.count - unsettled) settled, \(unsettled) not)")
          + "; \(outcome.takenFromOurs) taken from ours, \(outcome.takenFromTheirs) from theirs")
    }
    out.flush()
    guard let merged = outcome.document else {
      Terminal.standardError.line(
        "nothing written: settle the conflicts with --rule PATH=RULE, --declarations FILE or --take ours|theirs|base")
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
          + (taken == 0 ? "" : " (\(taken) conflicting value\(taken == 1 ? "" : "s") settled by --take \(take ?? ""))"))
      out.flush()
    }
    if taken > 0 { throw Exit.invalid }  // written, but not clean: the script should know
  }

  private func writeJSON(_ outcome: MergeOutcome, listing: BulkListing, to json: StreamedJSON) {
    json.object([
      (
        "conflicts",
        {
          json.array(outcome.conflicts) { conflict in
            let field = conflict.field
            json.object([
              ("path", { json.string(conflict.path) }),
              ("base", { json.value(field.base, listing: listing) }),
              ("ours", { json.value(field.ours, listing: listing, base: field.base) }),
              ("theirs", { json.value(field.theirs, listing: listing, base: field.base) }),
              ("settled", { conflict.resolution.map { json.string($0) } ?? json.null() }),
            ])
          }
        }
      ),
      (
        "sections",
        {
          json.array(outcome.sections) { section in
            json.object([
              ("name", { json.string(section.name) }), ("source", { json.string(section.source.rawValue) }),
              ("how", { json.string(section.how) }),
            ])
          }
        }
      ),
      ("fromOurs", { json.number(outcome.takenFromOurs) }),
      ("fromTheirs", { json.number(outcome.takenFromTheirs) }),
      ("written", { outcome.document == nil ? json.null() : json.string(output) }),
    ])
    json.finish()
  }
}

/// The bulk arrays and byte strings inside `value` that differ from `base`'s at the same path,
/// compared element by element.
func bulkChanges(from base: SaveValue?, to value: SaveValue?, path: String) -> [(String, BulkDifference)] {
  switch (base, value) {
  case (.object(let old)?, .object(let new)?):
    return new.fields.flatMap { field in
      bulkChanges(from: old[field.name], to: field.value, path: path.isEmpty ? field.name : "\(path).\(field.name)")
    }
  case (.array(let old)?, .array(let new)?):
    return (0..<min(old.count, new.count)).flatMap { bulkChanges(from: old[$0], to: new[$0], path: "\(path)[\($0)]") }
  case (.bulk(let old)?, .bulk(let new)?) where old != new:
    return [(path, BulkDifference(old: .bulk(old), new: .bulk(new)))].filter { $0.1.differing > 0 }
  case (.bytes(let old)?, .bytes(let new)?) where old != new:
    return [(path, BulkDifference(old: .bytes(old), new: .bytes(new)))]
  default:
    return []
  }
}

/// Prints a refused merge in one line (`error: FILE: not mergeable in header: why`), naming
/// theirs, the save that did not match, and exits 1: what was read was found wrong.
func fail(_ refusal: MergeRefusal, file: String) -> ExitCode {
  Terminal.standardError.line(
    Terminal.standardError.paint("error: ", .red) + "\(file): not mergeable in header: \(refusal.message)")
  return Exit.invalid
}
