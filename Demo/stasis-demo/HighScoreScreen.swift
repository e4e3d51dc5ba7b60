#if Records
  import CStasisSDL2
  import StasisDemoRecords
  import Foundation
  import StasisRecords
  import StasisSDL

  /// The high-score table (F3): the ten best games from `records.sqlite`, through a
  /// `FetchedResultsController` that lives as long as the window. Each row the last change set
  /// touched is marked (NEW, UP from #n, or a raised score) until the table has been seen.
  @MainActor
  final class HighScoreScreen {
    let controller: FetchedResultsController<DemoHighScore>
    /// The marks of the changes not yet seen, by row (after the change set).
    private var marks: [Int: String] = [:]
    /// The last change set, as the controller said it.
    private(set) var lastChanges = ""
    var isOpen = false

    private static let dateFormatter: DateFormatter = {
      let formatter = DateFormatter()
      formatter.dateFormat = "yyyy-MM-dd HH:mm"
      return formatter
    }()

    init(records: StasisDemoRecords) throws {
      controller = records.topTen()
      controller.onChange = { [unowned self] changes in self.take(changes) }
      try controller.start()
    }

    /// Opens or closes the table; closing forgets the marks (they have been seen).
    func toggle() {
      isOpen.toggle()
      if !isOpen { marks = [:] }
    }

    private func take(_ changes: RecordChanges) {
      lastChanges = changes.description
      // The marks are the last change set's: an earlier one's are replaced.
      var next: [Int: String] = [:]
      for change in changes.records {
        switch change {
        case .inserted(let path): next[path.row] = "NEW"
        case .moved(let from, let to): next[to.row] = to.row < from.row ? "UP from #\(from.row + 1)" : "DOWN"
        case .updated(_, let path): next[path.row] = "RAISED"
        case .removed: break
        }
      }
      marks = next
    }

    func draw(font: BitmapFont, renderer: OpaquePointer, width: Float, height: Float) {
      drawScreenBackdrop(
        title: "HIGH SCORES",
        keys: "the ten best games, kept in records.sqlite   F3 close",
        font: font, renderer: renderer, width: width, height: height)
      let rows = controller.records
      if rows.isEmpty { font.draw("no scores yet: clear a level", x: 40, y: 140, on: renderer) }
      for (index, row) in rows.enumerated() {
        let y = 140 + Float(index) * 40
        let colour: (UInt8, UInt8, UInt8) = marks[index] == nil ? (230, 230, 240) : (250, 210, 60)
        font.draw("\(index + 1).", x: 50, y: y, on: renderer, scale: 1.5, color: colour)
        font.draw("\(row.points)", x: 110, y: y, on: renderer, scale: 1.5, color: colour)
        let date = Date(timeIntervalSince1970: Double(row.achievedAt) / 1000)
        font.draw(
          "level \(row.level)   \(row.slot)   \(row.device)   \(Self.dateFormatter.string(from: date))", x: 300,
          y: y + 4, on: renderer, color: (170, 170, 190))
        if let mark = marks[index] { font.draw(mark, x: width - 220, y: y + 4, on: renderer, color: (250, 210, 60)) }
      }
      if !lastChanges.isEmpty {
        // ASCII: the bitmap font has no arrow.
        let text = "last change: " + lastChanges.replacingOccurrences(of: "→", with: "->")
        font.draw(text, x: 40, y: height - 40, on: renderer, color: (150, 150, 170))
      }
    }
  }
#endif
