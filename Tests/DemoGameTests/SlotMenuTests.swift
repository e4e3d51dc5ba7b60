import Foundation
import Stasis
import StasisDemoGame
import StasisTestSupport
import StasisTesting
import Testing

@Suite("The slot picker as a player meets it")
struct SlotMenuTests {
  /// Twelve slots: `slot-3` saved last, the rest at one earlier moment.
  private func twelveSlots() throws -> [SlotInfo] {
    let folder = try temporaryFolder().path
    for index in 1...12 {
      let time: Int64 = index == 3 ? 2_000_000 : 1_000_000
      let store = SaveStore(directory: folder, wallClock: ManualWallClock(unixMilliseconds: time))
      _ = try store.save(
        ["level": index], codec: SaveCodec<[String: Int]>(game: GameIdentity(name: "menu")),
        slot: try SaveSlot("slot-\(index)"),
        summary: try SaveSummary(DemoSummary(level: index, score: 0))
      ).wait()
    }
    return try SaveStore(directory: folder).listSlots()
  }

  @Test("newest first; ties in natural order (slot-2 before slot-10), not slot-1, slot-10, slot-11")
  func order() throws {
    let menu = SlotMenu(slots: try twelveSlots(), visibleRows: 5)
    #expect(
      menu.slots.map(\.name) == [
        "slot-3", "slot-1", "slot-2", "slot-4", "slot-5", "slot-6", "slot-7", "slot-8", "slot-9", "slot-10",
        "slot-11", "slot-12",
      ])
  }

  @Test("the selection never leaves the screen: down through all twelve and back up, and after a resize")
  func scrolling() throws {
    var menu = SlotMenu(slots: try twelveSlots(), visibleRows: 5)
    #expect(menu.visibleRange == 0..<5)
    for _ in 0..<15 {
      menu.move(1)
      #expect(menu.visibleRange.contains(menu.selection))
      #expect(menu.visibleRange.count == 5)
    }
    #expect(menu.selection == 11, "stops at the last")
    #expect(menu.visibleRange == 7..<12)
    #expect(menu.hidden == (above: 7, below: 0))
    for _ in 0..<15 {
      menu.move(-1)
      #expect(menu.visibleRange.contains(menu.selection))
    }
    #expect(menu.selection == 0 && menu.visibleRange == 0..<5)
    menu.move(5)
    menu.move(5)
    #expect(menu.selection == 10)
    menu.resize(visibleRows: 3)
    #expect(menu.visibleRange.contains(10) && menu.visibleRange.count == 3)
    menu.resize(visibleRows: 40)
    #expect(menu.visibleRange == 0..<12)
  }

  @Test("a slot whose newest generation is unreadable sorts by its newest readable one")
  func damagedNewest() throws {
    let folder = try temporaryFolder().path
    let codec = SaveCodec<[String: Int]>(game: GameIdentity(name: "menu"))
    for (slot, time) in [("old", Int64(1_000)), ("new", Int64(2_000))] {
      _ = try SaveStore(directory: folder, wallClock: ManualWallClock(unixMilliseconds: time)).save(
        ["x": 1], codec: codec, slot: try SaveSlot(slot), summary: SaveSummary()
      ).wait()
    }
    // A later save of "new" whose header is damaged.
    let damaged = try SaveStore(directory: folder, wallClock: ManualWallClock(unixMilliseconds: 3_000)).save(
      ["x": 2], codec: codec, slot: "new", summary: SaveSummary()
    ).wait()
    try Data([0x89, 0x53, 0x54]).write(to: URL(fileURLWithPath: damaged.path))
    let menu = SlotMenu(slots: try SaveStore(directory: folder).listSlots(), visibleRows: 5)
    #expect(menu.slots.map(\.name) == ["new", "old"])
  }
}
