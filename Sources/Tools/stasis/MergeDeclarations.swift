import ArgumentParser
import Foundation
import StasisCloud

/// The text format of `stasis merge --declarations FILE`: a game's ``MergeRules`` for a merge
/// run without its code. One declaration per line; `#` starts a comment; blank lines are skipped.
///
/// ```
/// # the roguelike's merge declarations
/// player.highScore = max
/// player.bestTime  = min
/// monsters         = by-key id
/// monsters[*].hp   = min
/// log              = union
/// group map, monsters, stairs
/// summary gold = player.gold
/// ```
///
/// `PATH = RULE` declares a rule (`max`, `min`, `ours`, `theirs`, `union`, `by-index`,
/// `by-key FIELD`, `by-entity`; a path may use `[*]` for any index or key); `group PATH, PATH, …` declares
/// paths that always come from one side together; `summary FIELD = PATH` makes a merged save's
/// summary field the merged state's value at PATH.
enum MergeDeclarations {
  /// The rule a declaration or a `--rule` names; nil for an unknown one.
  static func rule(named text: String) -> MergeRule? {
    let words = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
    switch words.count == 1 ? words[0] : "" {
    case "max": return .max
    case "min": return .min
    case "ours": return .ours
    case "theirs": return .theirs
    case "union": return .union
    case "by-index": return .byIndex
    case "by-entity": return .byEntity
    default:
      guard words.count == 2, words[0] == "by-key" else { return nil }
      return .byKey(words[1])
    }
  }

  static let ruleNames = "max, min, ours, theirs, union, by-index, by-entity or by-key FIELD"

  /// A declarations file's largest size.
  static let maximumBytes = 1 << 20

  /// The declarations in the file at `path`; a file that cannot be read fails as the CLI's
  /// one-line error, naming it (exit 74).
  static func read(_ path: String) throws -> MergeRules {
    let data = try KeyFileOption.read(path, what: "merge declarations file", limit: maximumBytes)
    guard data.count <= maximumBytes, let text = String(data: data, encoding: .utf8) else {
      throw ValidationError("\(path): merge declarations are UTF-8 text of at most \(maximumBytes / 1024) KB")
    }
    return try parse(text, file: path)
  }

  /// The declarations in `text`; a line that is neither a rule nor a group is refused by number.
  static func parse(_ text: String, file: String) throws -> MergeRules {
    var rules = MergeRules()
    for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      guard !trimmed.isEmpty else { continue }
      let place = "\(file), line \(number + 1)"
      if trimmed.hasPrefix("summary "), let equals = trimmed.firstIndex(of: "=") {
        let field = trimmed[trimmed.index(trimmed.startIndex, offsetBy: "summary ".count)..<equals]
          .trimmingCharacters(in: .whitespaces)
        let path = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !field.isEmpty, !path.isEmpty else {
          throw ValidationError("\(place): a summary field needs a name and a path: summary FIELD = PATH")
        }
        rules.summarize(field, from: path)
      } else if let equals = trimmed.firstIndex(of: "=") {
        let path = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
        let name = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        guard !path.isEmpty else { throw ValidationError("\(place): a rule needs a path: PATH = RULE") }
        guard let rule = rule(named: name) else {
          throw ValidationError("\(place): the rule is \(ruleNames), not '\(name)'")
        }
        rules[path] = rule
      } else if trimmed.hasPrefix("group ") {
        let paths = trimmed.dropFirst("group ".count).split(separator: ",").map {
          $0.trimmingCharacters(in: .whitespaces)
        }
        guard paths.count >= 2, paths.allSatisfy({ !$0.isEmpty }) else {
          throw ValidationError("\(place): a group names two paths or more: group PATH, PATH, …")
        }
        rules.group(paths)
      } else {
        throw ValidationError("\(place): expected PATH = RULE or group PATH, PATH, …, not '\(trimmed)'")
      }
    }
    return rules
  }
}
