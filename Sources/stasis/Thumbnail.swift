import ArgumentParser
import Foundation
import Stasis

struct Thumbnail: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Write a save's thumbnail to a PNG file: the stored one, or one drawn from a demo save's state.",
    discussion: """
      Example:
        stasis thumbnail Saves/autosave/0000000003.stasis -o shot.png

      A demo save without a stored thumbnail is drawn from its state with SDL's software
      renderer (320 × 180), through its saved camera.
      """
  )

  @Argument(help: "The save file.")
  var file: String

  @Option(name: .shortAndLong, help: "The PNG file to write.")
  var output: String

  func run() throws {
    let document = try openSave(file)
    let bytes: [UInt8]
    var drawn = false
    if case .raw(let stored)? = document[section: "thumbnail"]?.content {
      bytes = stored
    } else {
      do {
        bytes = try RenderedThumbnail.png(from: document, path: file)
        drawn = true
      } catch let error as SaveFileError {
        throw fail(error)
      } catch {
        Terminal.standardError.line("error: \(file): cannot draw a thumbnail: \(error)")
        throw Exit.invalid
      }
    }
    do {
      try Data(bytes).write(to: URL(fileURLWithPath: output), options: .atomic)
    } catch {
      Terminal.standardError.line("error: \(output): \(error.localizedDescription)")
      throw Exit.io
    }
    Terminal.standardOutput.line(
      "wrote \(bytes.count) bytes to \(output)\(drawn ? " (drawn from the saved state)" : "")")
  }
}
