import CStasisSDL2

/// A fixed-width bitmap font from a BMP atlas (16 columns × 6 rows of ASCII 32–127, white on
/// black), drawn with additive blending so the black disappears. SDL loads BMP itself: no TTF.
public final class BitmapFont {
  private let texture: OpaquePointer
  /// One glyph's size in the atlas, pixels.
  public let glyphWidth: Int32
  public let glyphHeight: Int32

  /// Loads the atlas at `path` for `renderer`.
  public init(path: String, renderer: OpaquePointer, glyphWidth: Int32 = 10, glyphHeight: Int32 = 20) throws {
    guard let surface = SDL_LoadBMP_RW(SDL_RWFromFile(path, "rb"), 1) else { throw SDLError("SDL_LoadBMP \(path)") }
    defer { SDL_FreeSurface(surface) }
    guard let texture = SDL_CreateTextureFromSurface(renderer, surface) else {
      throw SDLError("SDL_CreateTextureFromSurface")
    }
    SDL_SetTextureBlendMode(texture, SDL_BLENDMODE_ADD)
    self.texture = texture
    self.glyphWidth = glyphWidth
    self.glyphHeight = glyphHeight
  }

  deinit { SDL_DestroyTexture(texture) }

  /// The width of `text` at `scale`, pixels.
  public func width(of text: String, scale: Float = 1) -> Float {
    Float(text.unicodeScalars.count) * Float(glyphWidth) * scale
  }

  /// Draws `text` with its top-left corner at `x`, `y`.
  public func draw(
    _ text: String, x: Float, y: Float, on renderer: OpaquePointer, scale: Float = 1,
    color: (UInt8, UInt8, UInt8) = (255, 255, 255)
  ) {
    SDL_SetTextureColorMod(texture, color.0, color.1, color.2)
    var cursor = x
    for scalar in text.unicodeScalars {
      let code = Int32(scalar.value >= 32 && scalar.value < 128 ? scalar.value : 63) - 32
      var source = SDL_Rect(
        x: (code % 16) * glyphWidth, y: (code / 16) * glyphHeight, w: glyphWidth, h: glyphHeight)
      var target = SDL_FRect(x: cursor, y: y, w: Float(glyphWidth) * scale, h: Float(glyphHeight) * scale)
      SDL_RenderCopyF(renderer, texture, &source, &target)
      cursor += Float(glyphWidth) * scale
    }
  }
}
