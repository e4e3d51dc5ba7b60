import CStasisSDL2
import CStasisSDL2Image

/// Drawing on an SDL renderer (the window's, or a software one for thumbnails) with the
/// primitives a game's renderer protocol needs; a game conforms it to its own protocol
/// (`extension SDLCanvas: StasisDemoGame.Canvas {}`), so this module knows no game.
public struct SDLCanvas {
  /// The renderer drawn on.
  public let renderer: OpaquePointer

  /// Wraps a renderer.
  public init(renderer: OpaquePointer) { self.renderer = renderer }

  public mutating func setColor(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8) {
    SDL_SetRenderDrawColor(renderer, red, green, blue, alpha)
  }

  public mutating func fillRect(x: Float, y: Float, width: Float, height: Float) {
    var rect = SDL_FRect(x: x, y: y, w: width, h: height)
    SDL_RenderFillRectF(renderer, &rect)
  }

  public mutating func drawLine(x1: Float, y1: Float, x2: Float, y2: Float) {
    SDL_RenderDrawLineF(renderer, x1, y1, x2, y2)
  }
}

/// An SDL failure, with SDL's own message.
public struct SDLError: Error, CustomStringConvertible {
  public let call: String
  public let message: String

  /// Captures `SDL_GetError()` after `call` failed.
  public init(_ call: String) {
    self.call = call
    message = String(cString: SDL_GetError())
  }

  public var description: String { "\(call) failed: \(message)" }
}

/// Off-screen pictures: SDL's software renderer on a surface, saved as PNG through
/// SDL2_image. Needs no window and no video driver.
public enum OffscreenImage {
  /// The PNG bytes of what `draw` paints on a `width` × `height` canvas.
  public static func png(width: Int, height: Int, _ draw: (inout SDLCanvas) -> Void) throws -> [UInt8] {
    guard
      let surface = SDL_CreateRGBSurfaceWithFormat(0, Int32(width), Int32(height), 32, SDL_PIXELFORMAT_RGBA32.rawValue)
    else { throw SDLError("SDL_CreateRGBSurfaceWithFormat") }
    defer { SDL_FreeSurface(surface) }
    guard let renderer = SDL_CreateSoftwareRenderer(surface) else { throw SDLError("SDL_CreateSoftwareRenderer") }
    defer { SDL_DestroyRenderer(renderer) }
    var canvas = SDLCanvas(renderer: renderer)
    draw(&canvas)
    SDL_RenderPresent(renderer)
    return try encodePNG(surface)
  }

  /// A surface as PNG bytes, written into memory.
  public static func encodePNG(_ surface: UnsafeMutablePointer<SDL_Surface>) throws -> [UInt8] {
    // PNG of raw pixels is never larger than the pixels plus its own framing.
    let capacity = Int(surface.pointee.w) * Int(surface.pointee.h) * 4 + Int(surface.pointee.h) * 8 + 4096
    var buffer = [UInt8](repeating: 0, count: capacity)
    let written = try buffer.withUnsafeMutableBytes { raw -> Int in
      guard let stream = SDL_RWFromMem(raw.baseAddress, Int32(capacity)) else { throw SDLError("SDL_RWFromMem") }
      defer { SDL_RWclose(stream) }
      guard IMG_SavePNG_RW(surface, stream, 0) == 0 else { throw SDLError("IMG_SavePNG_RW") }
      return Int(SDL_RWtell(stream))
    }
    return Array(buffer[0..<written])
  }
}
