import Foundation

/// What the scene is drawn on: a window's renderer, or an off-screen surface for thumbnails.
/// Coordinates are pixels, y down.
public protocol Canvas {
  /// The colour of what is drawn next.
  mutating func setColor(_ red: UInt8, _ green: UInt8, _ blue: UInt8, _ alpha: UInt8)
  /// A filled rectangle.
  mutating func fillRect(x: Float, y: Float, width: Float, height: Float)
  /// A one-pixel line.
  mutating func drawLine(x1: Float, y1: Float, x2: Float, y2: Float)
  /// Filled rectangles in the current colour: `x, y, width, height` of each, one after
  /// another. A renderer that can draws them in one call (the default draws them one by one).
  mutating func fillRects(_ rects: [Float])
}

extension Canvas {
  public mutating func fillRects(_ rects: [Float]) {
    var index = 0
    while index + 3 < rects.count {
      fillRect(x: rects[index], y: rects[index + 1], width: rects[index + 2], height: rects[index + 3])
      index += 4
    }
  }

  /// A filled circle, as horizontal spans (SDL2 has no circle primitive), only the rows
  /// between 0 and `clipHeight`: a huge radius costs at most one span per visible row.
  public mutating func fillCircle(x: Float, y: Float, radius: Float, clipHeight: Float = 4_096) {
    guard x.isFinite, y.isFinite, radius.isFinite, radius > 0 else { return }
    guard radius >= 0.75 else {
      fillRect(x: x - 0.75, y: y - 0.75, width: 1.5, height: 1.5)
      return
    }
    let top = max(-radius.rounded(.down), (-y - 1).rounded(.down))
    let bottom = min(radius, clipHeight - y + 1)
    guard top <= bottom else { return }
    for row in 0...Int(bottom - top) {
      let dy = top + Float(row)
      let half = max(0, radius * radius - dy * dy).squareRoot()
      fillRect(x: x - half, y: y + dy, width: 2 * half, height: 1)
    }
  }
}

/// Draws a game state through its camera: the sky, the level's boxes and segments, the goal,
/// the collectibles not yet picked up, the bodies, and the player. The same code draws the
/// window's frames and the thumbnails.
public struct SceneDrawing {
  /// The picture's size in pixels.
  public var width: Float
  public var height: Float

  /// Creates a drawing of `width` × `height` pixels.
  public init(width: Int, height: Int) {
    self.width = Float(width)
    self.height = Float(height)
  }

  /// Pixels per metre at this camera's zoom: the view is 16 metres wide at zoom 1.
  public func scale(_ camera: CameraState) -> Float { width / (2 * Engine.halfView(zoom: camera.zoom).x) }

  /// The pixel where a world point appears.
  public func project(_ point: Vector, camera: CameraState) -> (x: Float, y: Float) {
    let s = scale(camera)
    return ((point.x - camera.position.x) * s + width / 2, height / 2 - (point.y - camera.position.y) * s)
  }

  /// Draws `state` on `canvas`; `camera` may be an interpolated one.
  public func draw<C: Canvas>(_ state: GameState, level: LevelDefinition, camera: CameraState, on canvas: inout C) {
    let s = scale(camera)
    canvas.setColor(Self.sky.red, Self.sky.green, Self.sky.blue, 255)
    canvas.fillRect(x: 0, y: 0, width: width, height: height)
    if let paint = state.canvas { drawPaint(paint, bounds: level.bounds, camera: camera, on: &canvas) }

    canvas.setColor(90, 200, 120, 255)
    let goal = project(Vector(level.goal.minX, level.goal.maxY), camera: camera)
    canvas.fillRect(
      x: goal.x, y: goal.y, width: (level.goal.maxX - level.goal.minX) * s,
      height: (level.goal.maxY - level.goal.minY) * s)

    canvas.setColor(120, 126, 150, 255)
    for box in level.boxes {
      let corner = project(Vector(box.minX, box.maxY), camera: camera)
      canvas.fillRect(x: corner.x, y: corner.y, width: (box.maxX - box.minX) * s, height: (box.maxY - box.minY) * s)
    }
    for segment in level.segments {
      let a = project(segment.a, camera: camera)
      let b = project(segment.b, camera: camera)
      for offset in [-1, 0, 1] as [Float] {
        canvas.drawLine(x1: a.x, y1: a.y + offset, x2: b.x, y2: b.y + offset)
      }
    }

    canvas.setColor(250, 210, 60, 255)
    for (index, item) in level.collectibles.enumerated()
    where index < state.level.collected.count && !state.level.collected[index] {
      let point = project(Vector(item.x, item.y), camera: camera)
      canvas.fillCircle(x: point.x, y: point.y, radius: 0.25 * s, clipHeight: height)
    }

    let margin: Float = 2
    for (index, body) in state.physics.bodies.enumerated().dropFirst() {
      let point = project(body.position, camera: camera)
      let radius = body.radius * s
      guard point.x > -radius - margin, point.x < width + radius + margin, point.y > -radius - margin,
        point.y < height + radius + margin
      else { continue }
      if body.isAsleep {
        canvas.setColor(70, 110, 170, 255)
      } else {
        canvas.setColor(UInt8(90 + (index * 37) % 100), 150, 230, 255)
      }
      canvas.fillCircle(x: point.x, y: point.y, radius: radius, clipHeight: height)
    }

    guard let player = state.physics.bodies.first else { return }
    let centre = project(player.position, camera: camera)
    canvas.setColor(240, 90, 80, 255)
    canvas.fillCircle(x: centre.x, y: centre.y, radius: player.radius * s, clipHeight: height)
    // A spoke shows the ball rolling.
    canvas.setColor(255, 240, 230, 255)
    let spoke = Vector(cos(player.angle), sin(player.angle)) * (player.radius * s)
    canvas.drawLine(x1: centre.x, y1: centre.y, x2: centre.x + spoke.x, y2: centre.y - spoke.y)
  }

  // MARK: The paint

  /// The background's colour.
  static let sky: (red: UInt8, green: UInt8, blue: UInt8) = (28, 32, 48)
  /// The painters' colours: the player's, then five that the bodies take in turn.
  static let painterColors: [(Float, Float, Float)] = [
    (240, 90, 80), (90, 170, 240), (120, 220, 150), (240, 200, 80), (190, 120, 230), (80, 210, 210),
  ]
  /// How strongly a cell shows its painter's colour over the sky, by visits: 1, 2–3, 4–15, 16 or more.
  static let shades: [Float] = [0.3, 0.45, 0.65, 0.9]

  /// The colour of a painted cell, as an index into ``paintPalette``; nil for an unpainted one.
  static func paintColor(_ cell: PaintCanvas.Cell) -> Int? {
    guard cell.visits > 0 else { return nil }
    let painter = cell.painter == 0 ? 0 : 1 + Int(cell.painter - 1) % (painterColors.count - 1)
    let shade = cell.visits >= 16 ? 3 : cell.visits >= 4 ? 2 : cell.visits >= 2 ? 1 : 0
    return painter * shades.count + shade
  }

  /// Every painter's colour at every shade, mixed with the sky.
  static let paintPalette: [(UInt8, UInt8, UInt8)] = painterColors.flatMap { color in
    shades.map { amount in
      func mix(_ sky: UInt8, _ paint: Float) -> UInt8 { UInt8(Float(sky) + (paint - Float(sky)) * amount) }
      return (mix(sky.red, color.0), mix(sky.green, color.1), mix(sky.blue, color.2))
    }
  }

  /// Draws the painted cells in view, and only those: a row's run of cells of one colour is
  /// one rectangle, and a colour's rectangles go in one call.
  func drawPaint<C: Canvas>(_ paint: PaintCanvas, bounds: Box, camera: CameraState, on canvas: inout C) {
    let s = scale(camera)
    let cellWidth = (bounds.maxX - bounds.minX) / Float(paint.columns)
    let cellHeight = (bounds.maxY - bounds.minY) / Float(paint.rows)
    guard s > 0, cellWidth > 0, cellHeight > 0 else { return }
    // The world rectangle the picture shows, in cells, clamped to the canvas.
    let halfWidth = width / 2 / s
    let halfHeight = height / 2 / s
    func cell(_ offset: Float, _ size: Float, _ count: Int) -> Int {
      PaintCanvas.index(offset, size: size, count: count)
    }
    let firstColumn = max(0, cell(camera.position.x - halfWidth - bounds.minX, cellWidth, paint.columns))
    let lastColumn = min(paint.columns - 1, cell(camera.position.x + halfWidth - bounds.minX, cellWidth, paint.columns))
    let firstRow = max(0, cell(camera.position.y - halfHeight - bounds.minY, cellHeight, paint.rows))
    let lastRow = min(paint.rows - 1, cell(camera.position.y + halfHeight - bounds.minY, cellHeight, paint.rows))
    guard firstColumn <= lastColumn, firstRow <= lastRow, paint.isWellFormed else { return }
    var batches = [[Float]](repeating: [], count: Self.paintPalette.count)
    let origin = project(Vector(bounds.minX, bounds.minY), camera: camera)
    let pixelWidth = cellWidth * s
    let pixelHeight = cellHeight * s
    let side = PaintCanvas.tileSide
    for row in firstRow...lastRow {
      let top = origin.y - Float(row + 1) * pixelHeight
      var runStart = firstColumn
      var runColor: Int? = nil
      func endRun(at column: Int) {
        guard let color = runColor else { return }
        batches[color].append(contentsOf: [
          origin.x + Float(runStart) * pixelWidth, top, Float(column - runStart) * pixelWidth, pixelHeight,
        ])
      }
      // A tile's row of cells at a time, read from its buffer.
      var column = firstColumn
      while column <= lastColumn {
        let last = min(lastColumn, column - column % side + side - 1)
        let rowStart = (row % side) * side - (column - column % side)
        paint.tiles[(row / side) * paint.tileColumns + column / side].withUnsafeBufferPointer { cells in
          for index in column...last {
            let cell = cells[rowStart + index]
            let color = cell.visits == 0 ? nil : Self.paintColor(cell)
            guard color != runColor else { continue }
            endRun(at: index)
            runStart = index
            runColor = color
          }
        }
        column = last + 1
      }
      endRun(at: lastColumn + 1)
    }
    for (index, rects) in batches.enumerated() where !rects.isEmpty {
      let color = Self.paintPalette[index]
      canvas.setColor(color.0, color.1, color.2, 255)
      canvas.fillRects(rects)
    }
  }
}
