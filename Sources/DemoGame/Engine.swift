/// The game's fixed-step engine: advances exactly 1/60 s per step and never reads the clock.
public struct Engine: Sendable, Equatable {
  /// Steps taken since the level started.
  public private(set) var frame: Int = 0
  /// True while the engine refuses to step (background, pause overlay).
  public var isPaused = false

  /// Creates an engine at frame 0.
  public init() {}

  /// Advances one step of 1/60 s unless paused; returns whether it stepped.
  @discardableResult
  public mutating func step() -> Bool {
    guard !isPaused else { return false }
    frame += 1
    return true
  }
}
