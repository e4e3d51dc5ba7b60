import CStasisSDL2
import Foundation
import Stasis
import StasisDemoGame
import StasisSDL

// The demo's drawing protocol over SDL: the method names already match, and a batch of
// rectangles goes in one SDL call.
extension SDLCanvas: Canvas {
  public mutating func fillRects(_ rects: [Float]) {
    let count = rects.count / 4
    guard count > 0 else { return }
    rects[0..<(count * 4)].withUnsafeBufferPointer { floats in
      // `x, y, width, height` floats, one rectangle after another: SDL_FRect's own layout.
      floats.withMemoryRebound(to: SDL_FRect.self) { _ = SDL_RenderFillRectsF(renderer, $0.baseAddress, Int32(count)) }
    }
  }
}

/// A demo state drawn small in software (SDL's software renderer on a surface, no window):
/// on the save's worker for every save, in the slot picker for saves without a picture, and
/// by `stasis-demo --render-thumbnail`. A state that does not fit its level is never drawn.
enum DemoThumbnail {
  static let width = 320
  static let height = 180

  /// The PNG of `state` through its saved camera.
  static func png(of state: GameState, library: LevelLibrary) throws -> [UInt8] {
    let level = try library.load(state.level.index)
    try state.validate(against: level)
    return try OffscreenImage.png(width: width, height: height) { canvas in
      SceneDrawing(width: width, height: height).draw(state, level: level, camera: state.camera, on: &canvas)
    }
  }
}

/// `stasis-demo --render-thumbnail FILE --output OUT.png`: a save's state drawn, after every
/// check and the level check; a save that fails any is one line on standard error, exit 1.
struct ThumbnailRenderer {
  let file: String
  let output: String
  let levels: String?

  func run() -> Int32 {
    withLevels(levels) { library in
      let document = try SaveStore(directory: ".").readDocument(at: file)
      let state = try DemoSaveFormat.codec(levels: library).state(from: document, path: file)
      let png = try DemoThumbnail.png(of: state, library: library)
      try Data(png).write(to: URL(fileURLWithPath: output), options: .atomic)
      print("wrote \(png.count) bytes to \(output) (drawn from the saved state)")
      return 0
    }
  }
}
