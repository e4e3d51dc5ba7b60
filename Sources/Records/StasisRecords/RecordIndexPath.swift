/// Where a record sits in a controller's results: its section, and its row in that section.
/// The same pair UIKit's table updates take.
public struct RecordIndexPath: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// The section, from 0.
  public var section: Int
  /// The row within the section, from 0.
  public var row: Int

  /// Creates an index path.
  public init(section: Int, row: Int) {
    self.section = section
    self.row = row
  }

  /// Section first, then row.
  public static func < (lhs: RecordIndexPath, rhs: RecordIndexPath) -> Bool {
    (lhs.section, lhs.row) < (rhs.section, rhs.row)
  }

  /// `[section, row]`, as Foundation's `IndexPath` prints.
  public var description: String { "[\(section), \(row)]" }
}
