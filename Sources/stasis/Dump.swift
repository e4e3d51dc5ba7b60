import ArgumentParser
import Stasis

struct Dump: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Print a save's content as JSON with sorted keys, from its own description.",
    discussion: """
      Example:
        stasis dump Saves/autosave/0000000003.stasis
        stasis dump Saves/autosave/0000000003.stasis --section camera
        stasis dump Saves/autosave/0000000003.stasis --key-file game.key

      Top-level keys are the sections (a demo save has score, level, camera, physics, autopilot).
      Raw sections (a thumbnail) are left out; `inspect` lists them.

      With a key, a save whose signature does not match is refused (exit 1),
      and standard error says `signature: valid` or `signature: unsigned`.
      Without one, a signed save's signature is not checked, and standard
      error says `signed: yes (not checked: no key)`.
      """
  )

  @Argument(help: "The save file.")
  var file: String

  @Option(help: "Print only this section.")
  var section: String?

  @OptionGroup var key: KeyFileOption

  func run() throws {
    let signing = try key.policy()
    let (document, signature) = try openSave(file, signing: signing)
    let verdict = SignatureVerdict(
      keyGiven: signing.checksSignatures, isSigned: signature != .unsigned, status: signature)
    if verdict.keyGiven || verdict.notCheckedForWantOfKey, let line = verdict.line {
      Terminal.standardError.line(line)
    }
    if let section {
      guard let found = document[section: section] else {
        let names = document.sections.map(\.name).joined(separator: ", ")
        Terminal.standardError.line("error: \(file): no section '\(section)'; the file has: \(names)")
        throw ExitCode.validationFailure
      }
      guard case .tree(let value) = found.content else {
        throw fail(
          SaveFileError(.typeMismatch, "section '\(section)' holds raw bytes, not values", context: .init(file: file)))
      }
      print(jsonText(jsonObject(value)))
    } else {
      print(jsonText(jsonObject(document.tree)))
    }
  }
}
