import Foundation
import Stasis

/// A scrolling list's window, as a player meets it: a selection that stops at the ends, and a
/// window of rows that scrolls to keep it in view. No drawing: the window draws `visibleRange`.
public struct ListWindow: Sendable, Equatable {
  /// How many rows the list has.
  public private(set) var count: Int
  /// The selected row.
  public private(set) var selection = 0
  /// The first row on screen.
  public private(set) var firstVisible = 0
  /// How many rows fit on screen.
  public private(set) var visibleRows: Int

  /// A window over `count` rows showing `visibleRows` at a time.
  public init(count: Int, visibleRows: Int) {
    self.count = count
    self.visibleRows = max(1, visibleRows)
  }

  /// The rows on screen.
  public var visibleRange: Range<Int> { firstVisible..<min(count, firstVisible + visibleRows) }
  /// Rows hidden above and below the window.
  public var hidden: (above: Int, below: Int) { (firstVisible, count - visibleRange.upperBound) }

  /// Moves the selection by `delta` rows, stopping at the ends, and scrolls it into view.
  public mutating func move(_ delta: Int) {
    guard count > 0 else { return }
    selection = min(max(selection + delta, 0), count - 1)
    scrollToSelection()
  }

  /// Changes how many rows fit (the window was resized), keeping the selection in view.
  public mutating func resize(visibleRows rows: Int) {
    visibleRows = max(1, rows)
    scrollToSelection()
  }

  /// The list changed under the window: `count` rows now, the selection at `selection` (where
  /// the selected row went, or the nearest row when it is gone).
  public mutating func update(count: Int, selection: Int) {
    self.count = count
    self.selection = count == 0 ? 0 : min(max(selection, 0), count - 1)
    scrollToSelection()
  }

  private mutating func scrollToSelection() {
    if selection < firstVisible { firstVisible = selection }
    if selection >= firstVisible + visibleRows { firstVisible = selection - visibleRows + 1 }
    firstVisible = max(0, min(firstVisible, max(0, count - visibleRows)))
  }
}

/// The load menu's model, as a player meets it: the newest save first (ties by name in natural
/// order, so `slot-2` comes before `slot-10`), in a ``ListWindow``.
public struct SlotMenu: Sendable {
  /// The slots, newest first.
  public let slots: [SlotInfo]
  /// The window over them.
  public private(set) var window: ListWindow

  /// A menu of `slots` (in any order) showing `visibleRows` rows at a time.
  public init(slots: [SlotInfo], visibleRows: Int) {
    self.slots = slots.sorted(by: Self.newerFirst)
    window = ListWindow(count: slots.count, visibleRows: visibleRows)
  }

  /// The selected row.
  public var selection: Int { window.selection }
  /// The first row on screen.
  public var firstVisible: Int { window.firstVisible }
  /// How many rows fit on screen.
  public var visibleRows: Int { window.visibleRows }
  /// The rows on screen.
  public var visibleRange: Range<Int> { window.visibleRange }
  /// The selected slot, if any.
  public var selected: SlotInfo? { slots.isEmpty ? nil : slots[selection] }
  /// Rows hidden above and below the window.
  public var hidden: (above: Int, below: Int) { window.hidden }

  /// Moves the selection by `delta` rows, stopping at the ends, and scrolls it into view.
  public mutating func move(_ delta: Int) { window.move(delta) }

  /// Changes how many rows fit (the window was resized), keeping the selection in view.
  public mutating func resize(visibleRows rows: Int) { window.resize(visibleRows: rows) }

  /// Newest readable save first; a slot with no readable header last; ties by name, numbers compared as numbers.
  static func newerFirst(_ a: SlotInfo, _ b: SlotInfo) -> Bool {
    // The newest generation whose header reads: one damaged save does not sink a whole slot.
    let left = a.generations.lazy.compactMap(\.header).first?.createdAt ?? .min
    let right = b.generations.lazy.compactMap(\.header).first?.createdAt ?? .min
    if left != right { return left > right }
    return a.name.compare(b.name, options: [.numeric]) == .orderedAscending
  }
}

extension SlotMenu {
  /// A summary as a row shows it: the demo's own fields from the header (a save of any build
  /// or format; fields a newer build added are ignored), progress and play time.
  public static func summaryLine(_ summary: SaveSummary) -> String {
    var parts: [String] = []
    if let demo = try? summary.details(as: DemoSummary.self) {
      parts += ["level \(demo.level)", "score \(demo.score)"]
    }
    if let progress = summary.progress { parts.append(String(format: "%.0f%%", progress * 100)) }
    let seconds = Int(summary.playTime.isFinite ? min(max(summary.playTime, 0), 1e9) : 0)
    parts.append(
      seconds >= 3600
        ? "\(seconds / 3600) h \(seconds / 60 % 60) m"
        : seconds >= 60 ? "\(seconds / 60) m \(seconds % 60) s" : "\(seconds) s")
    return parts.joined(separator: "   ")
  }
}
