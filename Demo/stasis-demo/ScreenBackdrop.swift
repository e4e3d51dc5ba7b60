import CStasisSDL2
import StasisSDL

/// What every full-window screen (settings, high scores, slots) draws first: a dark veil over
/// the scene, the title, and the keys it takes.
@MainActor
func drawScreenBackdrop(
  title: String, keys: String, font: BitmapFont, renderer: OpaquePointer, width: Float, height: Float
) {
  SDL_SetRenderDrawColor(renderer, 10, 12, 20, 225)
  var all = SDL_FRect(x: 0, y: 0, w: width, h: height)
  SDL_RenderFillRectF(renderer, &all)
  font.draw(title, x: 40, y: 40, on: renderer, scale: 2)
  font.draw(keys, x: 40, y: 84, on: renderer, color: (150, 150, 170))
}
