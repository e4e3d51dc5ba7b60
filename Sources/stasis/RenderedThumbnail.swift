import DemoGame
import Stasis
import StasisSDL

// The demo's drawing protocol over SDL: the method names already match.
extension SDLCanvas: Canvas {}

/// A thumbnail drawn from a demo save's state, for saves that store none. The CLI knows the
/// demo's types only here (DESIGN.md: "CLI needs DemoGame only to render thumbnails").
enum RenderedThumbnail {
  static func png(from document: SaveDocument, path: String) throws -> [UInt8] {
    guard document.game.name == DemoSaveFormat.game.name else {
      throw SaveFileError(
        .typeMismatch, "the save has no thumbnail section, and only \(DemoSaveFormat.game.name) saves can be drawn",
        context: .init(file: path))
    }
    let state = try DemoSaveFormat.codec.state(from: document, path: path)
    guard let levels = LevelLibrary.locate() else {
      throw SaveFileError(
        .notFound, "cannot find Assets/levels to draw the level (set STASIS_ASSETS)", context: .init(file: path))
    }
    let level = try levels.load(state.level.index)
    return try OffscreenImage.png(width: 320, height: 180) { canvas in
      SceneDrawing(width: 320, height: 180).draw(state, level: level, camera: state.camera, on: &canvas)
    }
  }
}
