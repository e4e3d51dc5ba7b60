import Stasis

/// What the moving balls have painted on a level that declares a canvas: `columns × rows`
/// cells over the level's bounds, each remembering when it was last painted, how often and
/// by which ball. It is the demo's large state (the canvas level's is 12.6 MB in a save) that
/// changes little per second: a few hundred cells a step, edited in place, so a cloud upload
/// sends a delta of kilobytes.
///
/// The cells are kept in square tiles, each its own array: a step that paints copies only the
/// tiles it touches while the rollback ring and a save still hold the previous state, never
/// the whole canvas, and an unpainted canvas shares one blank tile. In a save the tiles are
/// bulk arrays, one after another, so the file's bytes do not move when a cell changes.
public struct PaintCanvas: Codable, Equatable, Sendable {
  /// One cell: 8 bytes, saved as raw bytes.
  public struct Cell: BulkStorable, Equatable {
    /// The level frame it was last painted on (``LevelProgress/levelFrame``, its low 32 bits).
    public var frame: UInt32 = 0
    /// Steps a moving ball has spent over it, up to 65,535; 0 for a cell never painted.
    public var visits: UInt16 = 0
    /// The ball that painted it last: 0 is the player, n the level's n-th body (up to 65,535).
    public var painter: UInt16 = 0

    /// An unpainted cell.
    public init() {}

    /// A cell painted `visits` times, last on `frame` by `painter`.
    public init(frame: UInt32, visits: UInt16, painter: UInt16) {
      self.frame = frame
      self.visits = visits
      self.painter = painter
    }

    public static let bulkLayout = BulkLayout(
      of: Cell.self, [.field("frame", \.frame), .field("visits", \.visits), .field("painter", \.painter)])
  }

  /// Cells along a tile's side: a tile holds 32 × 32 cells, 8 KiB.
  public static let tileSide = 32
  /// Most cells a canvas may have: 4,194,304, 32 MiB in a save.
  public static let maxCells = 1 << 22

  /// Cells across the level's bounds, left to right: a multiple of ``tileSide``.
  public var columns: Int
  /// Cells up the level's bounds, bottom to top: a multiple of ``tileSide``.
  public var rows: Int
  /// `columns / tileSide × rows / tileSide` tiles, row by row from the bottom left; each holds
  /// `tileSide × tileSide` cells, row by row from its bottom left.
  public var tiles: [[Cell]]

  /// A canvas of `columns × rows` unpainted cells (multiples of ``tileSide``), all its tiles
  /// one shared blank tile until painted.
  public init(columns: Int, rows: Int) {
    self.columns = columns
    self.rows = rows
    let blank = [Cell](repeating: Cell(), count: Self.tileSide * Self.tileSide)
    tiles = Array(repeating: blank, count: (columns / Self.tileSide) * (rows / Self.tileSide))
  }

  /// Tiles across: `columns / tileSide`.
  public var tileColumns: Int { columns / Self.tileSide }

  /// The cell at `column` (from the left) and `row` (from the bottom), both in range.
  public subscript(column: Int, row: Int) -> Cell {
    get {
      let (tile, cell) = Self.place(column, row, tileColumns: tileColumns)
      return tiles[tile][cell]
    }
    set {
      let (tile, cell) = Self.place(column, row, tileColumns: tileColumns)
      tiles[tile][cell] = newValue
    }
  }

  /// The tile and the cell inside it of `column`, `row`.
  static func place(_ column: Int, _ row: Int, tileColumns: Int) -> (tile: Int, cell: Int) {
    let side = tileSide
    return ((row / side) * tileColumns + column / side, (row % side) * side + column % side)
  }

  /// True when the size is within the limits and the tiles are as many and as full as it
  /// says: what ``GameState/validate()`` checks, with the reason, before a state is played or drawn.
  public var isWellFormed: Bool {
    let side = Self.tileSide
    return (side...StateLimits.canvasSide).contains(columns) && (side...StateLimits.canvasSide).contains(rows)
      && columns % side == 0 && rows % side == 0 && columns * rows <= Self.maxCells
      && tiles.count == (columns / side) * (rows / side) && tiles.allSatisfy { $0.count == side * side }
  }

  /// The cell `offset` metres from the canvas's edge falls in, for cells `size` metres wide,
  /// clamped to `-1...count`: a position far outside or not a number (a state forced past
  /// validation) gives -1 or `count`, never a trap.
  static func index(_ offset: Float, size: Float, count: Int) -> Int {
    let position = offset / size
    guard position > -1 else { return -1 }  // NaN too
    guard position < Float(count) else { return count }
    return Int(position.rounded(.down))
  }

  /// Cells painted at least once. Reads every cell: for tests and tools, not for each step.
  public var paintedCells: Int {
    tiles.reduce(0) { total, tile in total + tile.reduce(0) { $0 + ($1.visits > 0 ? 1 : 0) } }
  }

  /// Paints the cells whose centres lie under a disc of `radius` at `centre`: each takes
  /// `frame` and `painter`, and one more visit. `bounds` is the area the canvas covers. A disc
  /// outside it paints nothing; at most `(2 radius / cell + 1)²` cells are looked at.
  mutating func paint(disc centre: Vector, radius: Float, frame: UInt32, painter: UInt16, bounds: Box) {
    // A canvas forced past validation (a test's, a tool's) paints what it can and never traps.
    guard columns > 0, rows > 0, columns <= StateLimits.canvasSide, rows <= StateLimits.canvasSide else { return }
    let width = (bounds.maxX - bounds.minX) / Float(columns)
    let height = (bounds.maxY - bounds.minY) / Float(rows)
    guard width > 0, height > 0, radius > 0 else { return }
    let firstColumn = max(0, Self.index(centre.x - radius - bounds.minX, size: width, count: columns))
    let lastColumn = min(columns - 1, Self.index(centre.x + radius - bounds.minX, size: width, count: columns))
    let firstRow = max(0, Self.index(centre.y - radius - bounds.minY, size: height, count: rows))
    let lastRow = min(rows - 1, Self.index(centre.y + radius - bounds.minY, size: height, count: rows))
    guard firstColumn <= lastColumn, firstRow <= lastRow else { return }
    let reach = radius * radius
    for row in firstRow...lastRow {
      let dy = bounds.minY + (Float(row) + 0.5) * height - centre.y
      for column in firstColumn...lastColumn {
        let dx = bounds.minX + (Float(column) + 0.5) * width - centre.x
        guard dx * dx + dy * dy <= reach else { continue }
        let (tile, cell) = Self.place(column, row, tileColumns: tileColumns)
        guard tile < tiles.count, cell < tiles[tile].count else { continue }
        tiles[tile][cell].frame = frame
        tiles[tile][cell].visits = tiles[tile][cell].visits == .max ? .max : tiles[tile][cell].visits + 1
        tiles[tile][cell].painter = painter
      }
    }
  }
}
