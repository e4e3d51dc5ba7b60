/// One change to a section of a controller's results.
public enum SectionChange: Hashable, Sendable, CustomStringConvertible {
  /// A section that is new, at its index after the change set.
  case inserted(at: Int, name: String)
  /// A section that is gone, at its index before the change set.
  case removed(from: Int, name: String)

  /// `insert section 1 "gold"`, `remove section 0 "silver"`.
  public var description: String {
    switch self {
    case .inserted(let index, let name): "insert section \(index) \"\(name)\""
    case .removed(let index, let name): "remove section \(index) \"\(name)\""
    }
  }
}

/// One change to a record of a controller's results, with index paths as UIKit's batch updates
/// take them: removals and updates at the paths before the change set, insertions at the paths
/// after it, moves from one to the other.
public enum RecordChange: Hashable, Sendable, CustomStringConvertible {
  /// A record that is new (its primary key was not in the results), at its path after the change set.
  case inserted(at: RecordIndexPath)
  /// A record that is gone, at its path before the change set.
  case removed(from: RecordIndexPath)
  /// A record whose position changed (its order among the records that stayed, or its section).
  /// Its content may have changed too: read it at `to`.
  case moved(from: RecordIndexPath, to: RecordIndexPath)
  /// A record that kept its place but whose content changed: `at` before the change set,
  /// `newIndexPath` after it (they differ when rows before it were inserted or removed).
  case updated(at: RecordIndexPath, newIndexPath: RecordIndexPath)

  /// `insert [0, 1]`, `remove [0, 2]`, `move [0, 2] → [1, 0]`, `update [0, 1]` (with
  /// ` now [0, 2]` when its path after the change set differs).
  public var description: String {
    switch self {
    case .inserted(let path): "insert \(path)"
    case .removed(let path): "remove \(path)"
    case .moved(let from, let to): "move \(from) → \(to)"
    case .updated(let path, let newPath): path == newPath ? "update \(path)" : "update \(path) now \(newPath)"
    }
  }
}

/// What changed in a controller's results between two deliveries, in a fixed order: section
/// removals (by old index), section insertions (by new index), then record removals (by old
/// path), insertions (by new path), moves (by new path) and updates (by old path).
///
/// ```swift
/// controller.onChange = { changes in
///   table.performBatchUpdates(changes)  // or reload the rows `changes.records` names
///   print(changes)  // remove [0, 2]; insert [0, 0]; move [0, 1] → [0, 3]
/// }
/// ```
public struct RecordChanges: Hashable, Sendable, CustomStringConvertible {
  /// Sections removed, then sections inserted.
  public var sections: [SectionChange]
  /// Records removed, inserted, moved, then updated.
  public var records: [RecordChange]

  /// Creates a change set.
  public init(sections: [SectionChange] = [], records: [RecordChange] = []) {
    self.sections = sections
    self.records = records
  }

  /// True when nothing changed.
  public var isEmpty: Bool { sections.isEmpty && records.isEmpty }

  /// Every change, in order, separated by `; ` (`nothing` when empty).
  public var description: String {
    isEmpty ? "nothing" : (sections.map(\.description) + records.map(\.description)).joined(separator: "; ")
  }
}
