import ArgumentParser
import Stasis

/// `stasis`: opens Stasis save files using only their own description, so it works on a
/// save from any game that uses Stasis.
@main
struct StasisCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stasis",
    abstract:
      "Inspect, verify, dump, diff, merge, list, recover, migrate and discard Stasis save files; sync them with a server; list a game's records.",
    discussion: """
      Works on any game's saves: it reads the description each save carries.

      Exit codes: 0 success or valid; 1 invalid, corrupt or different; 64 usage; 74 I/O error.
      """,
    subcommands: [
      Inspect.self, Verify.self, Dump.self, Diff.self, Merge.self, Slots.self, Thumbnail.self, Recover.self,
      Reformat.self, Discard.self, Cloud.self, Settings.self, Records.self, ReplayCommand.self,
    ]
  )
}

/// Exit codes shared by every command.
enum Exit {
  static let invalid = ExitCode(1)
  static let io = ExitCode(74)

  /// 74 for what could not be read at all (the system refused, or nothing is there), 1 for
  /// what was read and found wrong.
  static func code(for error: SaveFileError) -> ExitCode {
    unreadable.contains(error.kind) ? io : invalid
  }

  /// The kinds that mean the file could not be read at all.
  static let unreadable: Set<SaveFileError.Kind> = [.io, .notARegularFile, .notFound, .noSuchGeneration]
}

/// Prints one line to standard error and exits with the error's code.
func fail(_ error: SaveFileError) -> ExitCode {
  Terminal.standardError.line(Terminal.standardError.paint("error: ", .red) + error.description)
  return Exit.code(for: error)
}

/// Reads a save file's bytes, refusing folders, links and oversized files.
func readSaveFile(_ path: String) throws(SaveFileError) -> [UInt8] {
  try SaveStore(directory: ".").readBytes(at: path)
}

/// Reads, checks and decodes a save file; a failure prints its one line and becomes the exit code.
func openSave(_ path: String) throws -> SaveDocument {
  try openSave(path, signing: .none).document
}

/// Reads, checks (the signature under `signing`) and decodes a save file, and says what became
/// of its signature; a failure prints its one line and becomes the exit code.
func openSave(_ path: String, signing: SigningPolicy) throws -> (document: SaveDocument, signature: SignatureStatus) {
  do {
    return try SaveFileFormat.decodeWithSignature(try readSaveFile(path), path: path, signing: signing)
  } catch {
    throw fail(error)
  }
}
