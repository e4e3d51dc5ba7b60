import CStasisSDL2
import Foundation
import Stasis
import StasisDemoGame
import StasisSDL

/// The settings screen (F2): volume, palette, key bindings and the power-up's regeneration
/// time, each change written through Stasis's `SettingsStore` at once.
@MainActor
final class SettingsScreen {
  private let settings: SettingsStore<DemoSettings>
  private(set) var selection = 0
  /// The binding waiting for a key press, when one is.
  private(set) var rebinding: WritableKeyPath<DemoSettings.KeyBindings, String>?
  private(set) var error: String?

  private static let rows = ["Volume", "Palette", "Move left", "Move right", "Jump", "Power-up every"]
  private static let bindings: [WritableKeyPath<DemoSettings.KeyBindings, String>] = [\.left, \.right, \.jump]

  init(settings: SettingsStore<DemoSettings>) { self.settings = settings }

  /// Handles a key press; false when the screen should close.
  func handle(_ key: SDL_KeyCode) -> Bool {
    if let rebinding {
      self.rebinding = nil
      if key != SDLK_ESCAPE, let name = SDL_GetKeyName(SDL_Keycode(key.rawValue)).map({ String(cString: $0) }),
        !name.isEmpty
      {
        change { $0.bindings[keyPath: rebinding] = name }
      }
      return true
    }
    switch key {
    case SDLK_UP: selection = (selection + Self.rows.count - 1) % Self.rows.count
    case SDLK_DOWN: selection = (selection + 1) % Self.rows.count
    case SDLK_LEFT: adjust(-1)
    case SDLK_RIGHT: adjust(1)
    case SDLK_RETURN where (2...4).contains(selection): rebinding = Self.bindings[selection - 2]
    case SDLK_ESCAPE, SDLK_F2: return false
    default: break
    }
    return true
  }

  private func adjust(_ step: Int) {
    switch selection {
    case 0: change { $0.volume = min(1, max(0, (($0.volume * 10).rounded() + Double(step)) / 10)) }
    case 1: change { $0.palette = $0.palette.cycled(by: step) }
    case 5: change { $0.powerUpMinutes = min(60, max(1, $0.powerUpMinutes.rounded() + Double(step))) }
    default: break
    }
  }

  private func change(_ body: (inout DemoSettings) -> Void) {
    do {
      try settings.update(body)
      error = nil
    } catch {
      self.error = "not saved: \(error.kindDescription)"
    }
  }

  func draw(font: BitmapFont, renderer: OpaquePointer, width: Float, height: Float) {
    drawScreenBackdrop(
      title: "SETTINGS",
      keys: "up/down choose   left/right change   Enter rebind a key   F2 close   (kept apart from saves)",
      font: font, renderer: renderer, width: width, height: height)
    let value = settings.value
    let values = [
      "\(Int((value.volume * 100).rounded()))%", value.palette.rawValue, value.bindings.left, value.bindings.right,
      value.bindings.jump, "\(Int(value.powerUpMinutes)) min (real time)",
    ]
    for (row, name) in Self.rows.enumerated() {
      let y = 140 + Float(row) * 44
      if row == selection {
        SDL_SetRenderDrawColor(renderer, 60, 80, 140, 200)
        var highlight = SDL_FRect(x: 30, y: y - 8, w: width - 60, h: 38)
        SDL_RenderFillRectF(renderer, &highlight)
      }
      font.draw(name, x: 50, y: y, on: renderer, scale: 1.5)
      let shown = row == selection && rebinding != nil ? "press a key..." : values[row]
      font.draw(shown, x: 420, y: y, on: renderer, scale: 1.5, color: (250, 220, 120))
    }
    // The palette's swatches: the player, the goal, a coin, as the scene draws them.
    let swatches: [(UInt8, UInt8, UInt8)] = [(240, 90, 80), (90, 200, 120), (250, 210, 60), (70, 110, 170)]
    for (index, colour) in swatches.enumerated() {
      let (r, g, b) = value.palette.apply(colour.0, colour.1, colour.2)
      SDL_SetRenderDrawColor(renderer, r, g, b, 255)
      var swatch = SDL_FRect(x: 700 + Float(index) * 48, y: 184, w: 36, h: 22)
      SDL_RenderFillRectF(renderer, &swatch)
    }
    if let error { font.draw(error, x: 50, y: 140 + 6 * 44 + 20, on: renderer, color: (255, 120, 100)) }
  }
}
