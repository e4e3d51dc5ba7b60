/// A change to the world around the game: the window's size, the display, a setting.
///
/// Changes posted while the application is in the background are held and delivered
/// once per ``Kind``, newest value, right after `willEnterForeground`, as iOS coalesces
/// notifications for a suspended app.
public struct EnvironmentChange: Sendable, Equatable {
  /// The kind of change. An open set: a game adds its own with `Kind("audioRouteChanged")`.
  public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    /// Creates a kind from its name.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Creates a kind from its name.
    public init(_ name: String) { self.rawValue = name }
    /// The kind's name.
    public var description: String { rawValue }

    /// The window's drawable size changed.
    public static let windowResized = Kind("windowResized")
    /// The window moved to another display, or the display's mode changed.
    public static let displayChanged = Kind("displayChanged")
    /// A user or system setting changed.
    public static let settingsChanged = Kind("settingsChanged")
  }

  /// The new value carried by a change.
  public enum Value: Sendable, Equatable, CustomStringConvertible {
    /// No value: the change itself is the news.
    case none
    /// A size in pixels (a window resized).
    case size(width: Int, height: Int)
    /// An index (a display, a language).
    case index(Int)
    /// Text (a setting's new value).
    case text(String)

    /// The value as text, for the trace.
    public var description: String {
      switch self {
      case .none: return "-"
      case .size(let width, let height): return "\(width)x\(height)"
      case .index(let index): return "#\(index)"
      case .text(let text): return text
      }
    }
  }

  /// What changed.
  public var kind: Kind
  /// Its new value.
  public var value: Value

  /// Creates a change of `kind` to `value`.
  public init(_ kind: Kind, _ value: Value = .none) {
    self.kind = kind
    self.value = value
  }
}

/// Holds the environment changes posted while in the background: the newest value of each
/// kind, in the order the kinds first arrived (an array, so delivery order is deterministic).
struct CoalescedChanges {
  private var pending: [EnvironmentChange] = []

  mutating func hold(_ change: EnvironmentChange) {
    if let index = pending.firstIndex(where: { $0.kind == change.kind }) {
      pending[index] = change
    } else {
      pending.append(change)
    }
  }

  mutating func drain() -> [EnvironmentChange] {
    defer { pending.removeAll() }
    return pending
  }
}
