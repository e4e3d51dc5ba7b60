import CSDL2
import CSDL2Image
import DemoGame
import Foundation
import Stasis
import StasisSDL

/// The slot picker (F10): every slot with its thumbnail, level, score, play time and date.
/// Thumbnails come from the save's `thumbnail` section, or are drawn from its state.
@MainActor
final class SlotPicker {
  private var menu: SlotMenu
  private var thumbnails: [OpaquePointer?] = []
  private let renderer: OpaquePointer
  private static let rowHeight: Float = 130
  /// Made once, not per row per frame. ASCII only: the bitmap font has no other glyphs.
  private static let dateFormatter: DateFormatter = {
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    return formatter
  }()
  private static let top: Float = 120

  init(store: SaveStore, codec: SaveCodec<GameState>, library: LevelLibrary, renderer: OpaquePointer) {
    self.renderer = renderer
    menu = SlotMenu(slots: ((try? store.listSlots()) ?? []).filter { !$0.generations.isEmpty }, visibleRows: 4)
    thumbnails = menu.slots.map { slot in
      // The newest generation that reads whole, as the row's summary uses.
      guard let document = slot.generations.lazy.compactMap({ try? store.readDocument(at: $0.path) }).first else {
        return nil
      }
      var png: [UInt8]?
      if case .raw(let stored)? = document[section: "thumbnail"]?.content {
        png = stored
      } else if let state = try? codec.state(from: document) {  // validated against its level
        png = try? DemoThumbnail.png(of: state, library: library)
      }
      guard var bytes = png else { return nil }
      return bytes.withUnsafeMutableBytes { raw -> OpaquePointer? in
        guard let stream = SDL_RWFromMem(raw.baseAddress, Int32(raw.count)), let surface = IMG_Load_RW(stream, 1) else {
          return nil
        }
        defer { SDL_FreeSurface(surface) }
        return SDL_CreateTextureFromSurface(renderer, surface)
      }
    }
  }

  isolated deinit {
    for texture in thumbnails { if let texture { SDL_DestroyTexture(texture) } }
  }

  var selected: SlotInfo? { menu.selected }

  /// Up/down by one, page up/down by a screen: the selection never leaves the screen.
  func move(_ delta: Int) { menu.move(delta) }
  var pageSize: Int { menu.visibleRows }

  func draw(font: BitmapFont, width: Float, height: Float) {
    SDL_SetRenderDrawColor(renderer, 10, 12, 20, 225)
    var all = SDL_FRect(x: 0, y: 0, w: width, h: height)
    SDL_RenderFillRectF(renderer, &all)
    font.draw("SAVE SLOTS", x: 40, y: 40, on: renderer, scale: 2)
    font.draw(
      "newest first   up/down choose   PgUp/PgDn page   Enter load   F10 close", x: 40, y: 84, on: renderer,
      color: (150, 150, 170))
    menu.resize(visibleRows: Int((height - Self.top - 30) / Self.rowHeight))
    if menu.slots.isEmpty { font.draw("no saves yet: press F5", x: 40, y: 130, on: renderer) }
    let hidden = menu.hidden
    if hidden.above > 0 {
      font.draw("^ \(hidden.above) newer", x: width - 200, y: 92, on: renderer, color: (150, 150, 170))
    }
    if hidden.below > 0 {
      font.draw("v \(hidden.below) older", x: width - 200, y: height - 30, on: renderer, color: (150, 150, 170))
    }
    for row in menu.visibleRange {
      let slot = menu.slots[row]
      let y = Self.top + Float(row - menu.firstVisible) * Self.rowHeight
      if row == menu.selection {
        SDL_SetRenderDrawColor(renderer, 60, 80, 140, 200)
        var highlight = SDL_FRect(x: 30, y: y - 6, w: width - 60, h: 124)
        SDL_RenderFillRectF(renderer, &highlight)
      }
      if let texture = thumbnails[row] {
        var target = SDL_FRect(x: 40, y: y, w: 200, h: 112.5)
        SDL_RenderCopyF(renderer, texture, nil, &target)
      }
      guard let header = slot.generations.lazy.compactMap(\.header).first else {
        font.draw("\(slot.name): unreadable", x: 260, y: y + 10, on: renderer, color: (255, 120, 100))
        continue
      }
      let date = Date(timeIntervalSince1970: Double(header.createdAt) / 1000)
      font.draw(slot.name, x: 260, y: y + 6, on: renderer, scale: 1.5)
      font.draw(Self.summaryLine(header.summary), x: 260, y: y + 44, on: renderer)
      font.draw(
        "\(Self.dateFormatter.string(from: date))   \(slot.generations.count) generation(s)", x: 260,
        y: y + 72, on: renderer, color: (170, 170, 190))
    }
  }

  /// The row's summary: the demo's own fields from the header (a save of any build or
  /// format; fields a newer build added are ignored), progress and play time.
  static func summaryLine(_ summary: SaveSummary) -> String {
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
