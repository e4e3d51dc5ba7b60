import Foundation
import Stasis

/// The load menu's model, as a player meets it: the newest save first (ties by name in natural
/// order, so `slot-2` comes before `slot-10`), and a window of rows that scrolls to keep the
/// selection in view. No drawing: the window draws `visibleRange`.
public struct SlotMenu: Sendable {
  /// The slots, newest first.
  public let slots: [SlotInfo]
  /// The selected row.
  public private(set) var selection = 0
  /// The first row on screen.
  public private(set) var firstVisible = 0
  /// How many rows fit on screen.
  public private(set) var visibleRows: Int

  /// A menu of `slots` (in any order) showing `visibleRows` rows at a time.
  public init(slots: [SlotInfo], visibleRows: Int) {
    self.slots = slots.sorted(by: Self.newerFirst)
    self.visibleRows = max(1, visibleRows)
  }

  /// The rows on screen.
  public var visibleRange: Range<Int> { firstVisible..<min(slots.count, firstVisible + visibleRows) }
  /// The selected slot, if any.
  public var selected: SlotInfo? { slots.isEmpty ? nil : slots[selection] }
  /// Rows hidden above and below the window.
  public var hidden: (above: Int, below: Int) { (firstVisible, slots.count - visibleRange.upperBound) }

  /// Moves the selection by `delta` rows, stopping at the ends, and scrolls it into view.
  public mutating func move(_ delta: Int) {
    guard !slots.isEmpty else { return }
    selection = min(max(selection + delta, 0), slots.count - 1)
    scrollToSelection()
  }

  /// Changes how many rows fit (the window was resized), keeping the selection in view.
  public mutating func resize(visibleRows rows: Int) {
    visibleRows = max(1, rows)
    scrollToSelection()
  }

  private mutating func scrollToSelection() {
    if selection < firstVisible { firstVisible = selection }
    if selection >= firstVisible + visibleRows { firstVisible = selection - visibleRows + 1 }
    firstVisible = max(0, min(firstVisible, max(0, slots.count - visibleRows)))
  }

  /// Newest readable save first; a slot with no readable header last; ties by name, numbers compared as numbers.
  static func newerFirst(_ a: SlotInfo, _ b: SlotInfo) -> Bool {
    // The newest generation whose header reads: one damaged save does not sink a whole slot.
    let left = a.generations.lazy.compactMap(\.header).first?.createdAt ?? .min
    let right = b.generations.lazy.compactMap(\.header).first?.createdAt ?? .min
    if left != right { return left > right }
    return a.name.compare(b.name, options: [.numeric]) == .orderedAscending
  }
}
