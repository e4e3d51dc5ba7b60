import CStasisSDL2
import CStasisSDL2Image
import Foundation
import Stasis
import StasisDemoGame
import StasisSDL

#if Records
  import StasisDemoRecords
  import StasisRecords
#endif

/// The slot picker (F10): every slot with its thumbnail, level, score, play time and date.
///
/// Its list is the slot index in `records.sqlite` (``StasisDemoRecords``), observed through a
/// `FetchedResultsController`: a save that ends while the picker is open moves its row to the
/// top, and the selection stays on the slot it was on. Built without the `Records` trait, it
/// lists the folder instead. Thumbnails come from the save's `thumbnail` section, or are drawn
/// from its state, when a row is first shown.
@MainActor
final class SlotPicker {
  /// A row: what the picker shows of a slot.
  struct Row: Equatable {
    var slot: String
    var generations: Int
    var savedAt: Int64?
    var summary: String
  }

  private var rows: [Row] = []
  private var window = ListWindow(count: 0, visibleRows: 4)
  private var thumbnails: [String: OpaquePointer?] = [:]
  private let store: SaveStore
  private let codec: SaveCodec<GameState>
  private let library: LevelLibrary
  private let renderer: OpaquePointer
  #if Records
    private let controller: FetchedResultsController<DemoSlotEntry>?
  #endif
  private static let rowHeight: Float = 130
  /// Made once, not per row per frame. ASCII only: the bitmap font has no other glyphs.
  private static let dateFormatter: DateFormatter = {
    let formatter = DateFormatter()
    formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
    return formatter
  }()
  private static let top: Float = 120

  #if Records
    /// A picker over the slot index; without `records`, over the folder's listing.
    init(
      store: SaveStore, codec: SaveCodec<GameState>, library: LevelLibrary, renderer: OpaquePointer,
      records: StasisDemoRecords?
    ) {
      self.store = store
      self.codec = codec
      self.library = library
      self.renderer = renderer
      controller = records?.slotList()
      if let controller {
        // Weak both ways: the controller lives in the picker, and stops when the picker goes.
        controller.onChange = { [weak self] _ in
          guard let self, let controller = self.controller else { return }
          self.show(controller.records.map(Self.row))
        }
        do {
          try controller.start()
          show(controller.records.map(Self.row))
          return
        } catch {
          FileHandle.standardError.write(Data("stasis-demo: the slot index: \(error)\n".utf8))
        }
      }
      show(Self.listing(store))
    }

    private static func row(_ entry: DemoSlotEntry) -> Row {
      Row(slot: entry.slot, generations: entry.generations, savedAt: entry.savedAt, summary: entry.summary)
    }
  #else
    init(store: SaveStore, codec: SaveCodec<GameState>, library: LevelLibrary, renderer: OpaquePointer) {
      self.store = store
      self.codec = codec
      self.library = library
      self.renderer = renderer
      show(Self.listing(store))
    }
  #endif

  /// The folder's listing, as `SlotMenu` orders it: what the picker shows without an index.
  private static func listing(_ store: SaveStore) -> [Row] {
    let slots = ((try? store.listSlots()) ?? []).filter { !$0.generations.isEmpty }
    return SlotMenu(slots: slots, visibleRows: 1).slots.map { slot in
      let header = slot.generations.lazy.compactMap(\.header).first
      return Row(
        slot: slot.name, generations: slot.generations.count, savedAt: header?.createdAt,
        summary: header.map { SlotMenu.summaryLine($0.summary) } ?? "unreadable")
    }
  }

  /// Takes a new list, keeping the selection on the slot it was on; a changed row's thumbnail
  /// is drawn again.
  private func show(_ new: [Row]) {
    let selected = selectedSlot
    for row in new where rows.first(where: { $0.slot == row.slot }).map({ $0 != row }) ?? false {
      if let texture = thumbnails.removeValue(forKey: row.slot) ?? nil { SDL_DestroyTexture(texture) }
    }
    let index = new.firstIndex { $0.slot == selected } ?? window.selection
    rows = new
    window.update(count: rows.count, selection: index)
  }

  isolated deinit {
    #if Records
      controller?.stop()
    #endif
    for name in thumbnails.keys.sorted() { if let texture = thumbnails[name] ?? nil { SDL_DestroyTexture(texture) } }
  }

  /// The selected slot's name, if any.
  var selectedSlot: String? { rows.isEmpty ? nil : rows[window.selection].slot }

  /// Up/down by one, page up/down by a screen: the selection never leaves the screen.
  func move(_ delta: Int) { window.move(delta) }
  var pageSize: Int { window.visibleRows }

  /// The row's thumbnail, made when it is first shown.
  private func thumbnail(_ slot: String) -> OpaquePointer? {
    if let made = thumbnails[slot] { return made }
    let made = makeThumbnail(slot)
    thumbnails[slot] = made
    return made
  }

  private func makeThumbnail(_ name: String) -> OpaquePointer? {
    // The newest generation that reads whole, as the row's summary uses.
    guard let slot = try? SaveSlot(name), let generations = try? store.listGenerations(of: slot),
      let document = generations.lazy.compactMap({ try? self.store.readDocument(at: $0.path) }).first
    else { return nil }
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

  func draw(font: BitmapFont, width: Float, height: Float) {
    drawScreenBackdrop(
      title: "SAVE SLOTS",
      keys: "newest first   up/down choose   PgUp/PgDn page   Enter load   F10 close",
      font: font, renderer: renderer, width: width, height: height)
    window.resize(visibleRows: Int((height - Self.top - 30) / Self.rowHeight))
    if rows.isEmpty { font.draw("no saves yet: press F5", x: 40, y: 130, on: renderer) }
    let hidden = window.hidden
    if hidden.above > 0 {
      font.draw("^ \(hidden.above) newer", x: width - 200, y: 92, on: renderer, color: (150, 150, 170))
    }
    if hidden.below > 0 {
      font.draw("v \(hidden.below) older", x: width - 200, y: height - 30, on: renderer, color: (150, 150, 170))
    }
    for index in window.visibleRange {
      let row = rows[index]
      let y = Self.top + Float(index - window.firstVisible) * Self.rowHeight
      if index == window.selection {
        SDL_SetRenderDrawColor(renderer, 60, 80, 140, 200)
        var highlight = SDL_FRect(x: 30, y: y - 6, w: width - 60, h: 124)
        SDL_RenderFillRectF(renderer, &highlight)
      }
      if let texture = thumbnail(row.slot) {
        var target = SDL_FRect(x: 40, y: y, w: 200, h: 112.5)
        SDL_RenderCopyF(renderer, texture, nil, &target)
      }
      guard let savedAt = row.savedAt else {
        font.draw("\(row.slot): unreadable", x: 260, y: y + 10, on: renderer, color: (255, 120, 100))
        continue
      }
      let date = Date(timeIntervalSince1970: Double(savedAt) / 1000)
      font.draw(row.slot, x: 260, y: y + 6, on: renderer, scale: 1.5)
      font.draw(row.summary, x: 260, y: y + 44, on: renderer)
      font.draw(
        "\(Self.dateFormatter.string(from: date))   \(row.generations) generation(s)", x: 260, y: y + 72,
        on: renderer, color: (170, 170, 190))
    }
  }
}
