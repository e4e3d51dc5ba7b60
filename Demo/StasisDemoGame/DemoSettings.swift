/// The demo's settings, kept by Stasis's `SettingsStore` apart from its saves (recipe 15.6):
/// loading a save never rolls them back, and `stasis settings set palette deuteranopia`
/// reaches a running game.
public struct DemoSettings: Codable, Sendable, Equatable {
  /// The master volume, 0...1 (the demo has no sound yet: the settings screen shows it).
  public var volume: Double = 0.8
  /// The keys that move and jump, by SDL key name.
  public var bindings = KeyBindings()
  /// The colours the scene is drawn in.
  public var palette: Palette = .standard
  /// Minutes of real time for the power-up to regenerate (a wall-clock timer, recipe 15.4).
  public var powerUpMinutes: Double = 2

  /// The defaults.
  public init() {}

  /// The keys that move and jump.
  public struct KeyBindings: Codable, Sendable, Equatable {
    /// Moves left (beside the left arrow).
    public var left = "A"
    /// Moves right (beside the right arrow).
    public var right = "D"
    /// Jumps (beside the up arrow).
    public var jump = "Space"

    /// The defaults.
    public init() {}
  }
}

/// A colour palette: the standard one, or one for a colour-vision deficiency, which moves the
/// scene's reds and greens (the player, the goal) apart in lightness and towards blue and orange.
public enum Palette: String, Codable, Sendable, CaseIterable {
  case standard, deuteranopia, protanopia, tritanopia

  /// The colour `(red, green, blue)` drawn in this palette.
  public func apply(_ red: UInt8, _ green: UInt8, _ blue: UInt8) -> (UInt8, UInt8, UInt8) {
    let r = Float(red)
    let g = Float(green)
    let b = Float(blue)
    func clamp(_ value: Float) -> UInt8 { UInt8(max(0, min(255, value.rounded()))) }
    switch self {
    case .standard: return (red, green, blue)
    // Red–green: red becomes orange, green becomes blue; lightness is kept.
    case .deuteranopia, .protanopia:
      return (clamp(0.9 * r + 0.1 * g), clamp(0.5 * r + 0.3 * g + 0.2 * b), clamp(0.1 * r + 0.6 * g + 0.3 * b))
    // Blue–yellow: blue becomes teal, yellow becomes pink.
    case .tritanopia:
      return (clamp(0.8 * r + 0.2 * b), clamp(0.6 * g + 0.4 * b), clamp(0.3 * r + 0.3 * g + 0.4 * b))
    }
  }

  /// The next palette, for a settings screen that cycles through them.
  public func cycled(by step: Int) -> Palette {
    let all = Palette.allCases
    let index = all.firstIndex(of: self)!
    return all[((index + step) % all.count + all.count) % all.count]
  }
}

/// A canvas that draws in a palette: every colour goes through ``Palette/apply(_:_:_:)``.
public struct PaletteCanvas<Base: Canvas>: Canvas {
  /// The canvas drawn on.
  public var base: Base
  /// The palette.
  public var palette: Palette

  /// Wraps `base`.
  public init(_ base: Base, palette: Palette) {
    self.base = base
    self.palette = palette
  }

  public mutating func setColor(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8) {
    let (r, g, b) = palette.apply(red, green, blue)
    base.setColor(r, g, b, alpha)
  }

  public mutating func fillRect(x: Float, y: Float, width: Float, height: Float) {
    base.fillRect(x: x, y: y, width: width, height: height)
  }

  public mutating func drawLine(x1: Float, y1: Float, x2: Float, y2: Float) {
    base.drawLine(x1: x1, y1: y1, x2: x2, y2: y2)
  }

  public mutating func fillRects(_ rects: [Float]) { base.fillRects(rects) }
}

extension Engine {
  /// The regenerating power-up (a wall-clock timer's firing): the combo multiplier at its
  /// highest, for the combo window. An input from outside the step, as a load is.
  public mutating func applyPowerUp() {
    withState { state in
      state.score.multiplier = ScoreState.maxMultiplier
      state.score.comboTimer = ScoreState.comboWindow
    }
  }
}
