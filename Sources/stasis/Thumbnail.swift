import ArgumentParser
import Foundation
import Stasis

struct Thumbnail: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Write a save's stored thumbnail (the `thumbnail` section) to a PNG file.",
    discussion: """
      Example:
        stasis thumbnail Saves/autosave/0000000003.stasis -o shot.png
      """
  )

  @Argument(help: "The save file.")
  var file: String

  @Option(name: .shortAndLong, help: "The PNG file to write.")
  var output: String

  func run() throws {
    let document: SaveDocument
    do {
      document = try SaveFileFormat.decode(try readSaveFile(file), path: file)
    } catch {
      throw fail(error)
    }
    guard case .raw(let bytes)? = document[section: "thumbnail"]?.content else {
      // Rendering one from the saved state needs the SDL renderer of the demo window: not built yet.
      Terminal.standardError.line("error: \(file): the save has no thumbnail section")
      throw Exit.invalid
    }
    do {
      try Data(bytes).write(to: URL(fileURLWithPath: output), options: .atomic)
    } catch {
      Terminal.standardError.line("error: \(output): \(error.localizedDescription)")
      throw Exit.io
    }
    Terminal.standardOutput.line("wrote \(bytes.count) bytes to \(output)")
  }
}
