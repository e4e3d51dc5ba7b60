/// One row of a controller's results as the diff sees it: who it is (its primary key), what it
/// holds (every column's value) and which section it is in.
struct DiffedRow<Identity: Hashable & Sendable, Content: Equatable & Sendable>: Equatable, Sendable {
  var identity: Identity
  var content: Content
  var section: String
}

/// The ordered difference between two results: which sections and records were removed,
/// inserted, moved and updated, with their index paths. Records are matched by identity; the
/// records that stayed and kept their order are the longest run of them in the same relative
/// order, so the moves are as few as possible. Dictionaries are only looked up, never iterated:
/// the output's order comes from the two arrays alone.
enum ResultsDiff {
  /// Sections in order of first appearance, and each row's index path in them.
  struct Layout {
    var sections: [String] = []
    var paths: [RecordIndexPath] = []

    init<I, C>(_ rows: [DiffedRow<I, C>]) {
      var sectionIndex: [String: Int] = [:]
      var counts: [Int] = []
      for row in rows {
        let section: Int
        if let known = sectionIndex[row.section] {
          section = known
        } else {
          section = sections.count
          sectionIndex[row.section] = section
          sections.append(row.section)
          counts.append(0)
        }
        paths.append(RecordIndexPath(section: section, row: counts[section]))
        counts[section] += 1
      }
    }
  }

  static func changes<I, C>(from old: [DiffedRow<I, C>], to new: [DiffedRow<I, C>]) -> RecordChanges {
    let oldLayout = Layout(old)
    let newLayout = Layout(new)

    // Sections: those in both, in an order both agree on, are kept; the rest are removed and inserted.
    let oldSectionIndex = firstIndices(oldLayout.sections)
    let commonSections = newLayout.sections.compactMap { oldSectionIndex[$0] }
    var keptSections: Set<String> = []  // looked up only
    for position in longestIncreasingRun(commonSections) {
      keptSections.insert(oldLayout.sections[commonSections[position]])
    }
    var sectionChanges: [SectionChange] = []
    for (index, name) in oldLayout.sections.enumerated() where !keptSections.contains(name) {
      sectionChanges.append(.removed(from: index, name: name))
    }
    for (index, name) in newLayout.sections.enumerated() where !keptSections.contains(name) {
      sectionChanges.append(.inserted(at: index, name: name))
    }

    // Records.
    let oldIndex = firstIndices(old.map(\.identity))
    let newIndex = firstIndices(new.map(\.identity))
    var removed: [RecordChange] = []
    for (index, row) in old.enumerated() where newIndex[row.identity] == nil {
      removed.append(.removed(from: oldLayout.paths[index]))
    }
    var inserted: [RecordChange] = []
    var common: [(old: Int, new: Int)] = []
    for (index, row) in new.enumerated() {
      if let before = oldIndex[row.identity] {
        common.append((before, index))
      } else {
        inserted.append(.inserted(at: newLayout.paths[index]))
      }
    }
    var stays = [Bool](repeating: false, count: common.count)
    for position in longestIncreasingRun(common.map(\.old)) { stays[position] = true }
    var moved: [RecordChange] = []
    var updated: [(RecordIndexPath, RecordChange)] = []
    for (position, pair) in common.enumerated() {
      let before = old[pair.old]
      let after = new[pair.new]
      let from = oldLayout.paths[pair.old]
      let to = newLayout.paths[pair.new]
      if !stays[position] || before.section != after.section || !keptSections.contains(after.section) {
        moved.append(.moved(from: from, to: to))
      } else if before.content != after.content {
        updated.append((from, .updated(at: from, newIndexPath: to)))
      }
    }
    updated.sort { $0.0 < $1.0 }
    return RecordChanges(sections: sectionChanges, records: removed + inserted + moved + updated.map(\.1))
  }

  /// The index of each element's first occurrence.
  private static func firstIndices<T: Hashable>(_ elements: [T]) -> [T: Int] {
    var indices: [T: Int] = [:]
    for (index, element) in elements.enumerated() where indices[element] == nil { indices[element] = index }
    return indices
  }

  /// The positions of a longest strictly increasing subsequence of `values`, ascending
  /// (patience sorting, O(n log n)); among equally long ones, always the same one.
  static func longestIncreasingRun(_ values: [Int]) -> [Int] {
    var tails: [Int] = []  // tails[k]: position of the smallest tail of a run of length k + 1
    var previous = [Int](repeating: -1, count: values.count)
    for (position, value) in values.enumerated() {
      var low = 0
      var high = tails.count
      while low < high {
        let middle = (low + high) / 2
        if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
      }
      if low > 0 { previous[position] = tails[low - 1] }
      if low == tails.count { tails.append(position) } else { tails[low] = position }
    }
    var run: [Int] = []
    var position = tails.last ?? -1
    while position >= 0 {
      run.append(position)
      position = previous[position]
    }
    return run.reversed()
  }
}
