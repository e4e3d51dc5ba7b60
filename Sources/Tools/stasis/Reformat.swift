import ArgumentParser
import Foundation
@_spi(Plumbing) import Stasis

/// `stasis reformat`: older-format saves rewritten in the current format. Named `migrate` until
/// 0.11; "migration" now means a schema change only (a game's ``SaveCodec`` migrations, the
/// server's and the records' database schemas), so the old name is an alias that says so.
struct Reformat: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "reformat",
    abstract: "Rewrite saves in the current format version, atomically, keeping the old one as a generation.",
    discussion: """
      Example:
        stasis reformat Saves/autosave/0000000003.stasis --dry-run
        stasis reformat Saves/*/*.stasis

      A save inside a slot folder is rewritten as that slot's next generation; the old file stays.
      A save already in the current format (\(FormatLimits.formatVersion)) is left alone. An invalid save is refused.
      A game's schema migrations are not run: the sections stay byte for byte.
      `stasis migrate` is the old name of this command; it still works, and says so.
      """,
    aliases: ["migrate"]
  )

  @Argument(help: "Save files.")
  var files: [String]

  @Flag(name: .customLong("dry-run"), help: "Say what would be rewritten, and write nothing.")
  var dryRun = false

  func validate() throws {
    guard !files.isEmpty else { throw ValidationError("give at least one save file") }
  }

  func run() throws {
    // Under its old name it says what it said then: a script may read those words.
    let oldName = CommandLine.arguments.dropFirst().first == "migrate"
    if oldName {
      Terminal.standardError.line(
        "note: 'stasis migrate' is now 'stasis reformat' (a format rewrite, not a schema migration); "
          + "the old name goes in 0.12")
    }
    let out = Terminal.standardOutput
    var worst: ExitCode = .success
    for file in files {
      do {
        let bytes = try readSaveFile(file)
        let document = try SaveFileFormat.decode(bytes, path: file)
        let header = try bytes.withUnsafeBytes { raw in
          Result { () throws(SaveFileError) in try SaveFileFormat.readHeader(raw, path: file) }
        }.get()
        guard header.formatVersion < FormatLimits.formatVersion else {
          out.line("up to date  \(file) (format \(header.formatVersion))")
          continue
        }
        let url = URL(fileURLWithPath: file)
        let slot = try SaveSlot(url.deletingLastPathComponent().lastPathComponent)
        let saves = url.deletingLastPathComponent().deletingLastPathComponent().path
        guard SaveStore.generationNumber(fileName: url.lastPathComponent) != nil else {
          throw SaveFileError(
            .malformed, "not inside a slot folder (SAVES/SLOT/NNNNNNNNNN.stasis): nowhere to keep the old one",
            context: .init(file: file))
        }
        if dryRun {
          out.line(
            "would \(oldName ? "migrate" : "reformat") \(file) from format \(header.formatVersion) to \(FormatLimits.formatVersion)"
          )
          continue
        }
        let existing = try SaveStore(directory: saves).generations(of: slot)
        let store = SaveStore(directory: saves, generationsToKeep: existing.count + 1)
        let handle = store.save(document: document, slot: slot)
        handle.waitUntilEnded()  // the pruning too: the tool exits next
        let receipt = try handle.wait()
        out.line("\(oldName ? "migrated   " : "reformatted") \(file) → \(receipt.path)")
      } catch let error as SaveFileError {
        Terminal.standardError.line("error: \(error.description)")
        let code = Exit.code(for: error)
        if worst == .success || code == Exit.io { worst = code }
      }
    }
    if worst != .success { throw worst }
  }
}
