import ArgumentParser
import Foundation
import Stasis

struct Thumbnail: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Write a save's stored thumbnail to a PNG file, byte for byte.",
    discussion: """
      Example:
        stasis thumbnail Saves/autosave/0000000003.stasis -o shot.png

      A save without a `thumbnail` section has no picture to write; the demo draws one from
      a demo save's state: stasis-demo --render-thumbnail FILE --output OUT.png
      """
  )

  @Argument(help: "The save file.")
  var file: String

  @Option(name: .shortAndLong, help: "The PNG file to write.")
  var output: String

  func run() throws {
    let document = try openSave(file)
    guard case .raw(let bytes)? = document[section: "thumbnail"]?.content else {
      var error = SaveFileError(.notFound, "the save has no thumbnail section", context: .init(file: file))
      if document.game.name == "stasis-demo" {
        error.suggestion = "stasis-demo --render-thumbnail \(file) --output OUT.png draws one from its state"
      }
      _ = fail(error)
      throw Exit.invalid  // the file is whole; it has no picture
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
