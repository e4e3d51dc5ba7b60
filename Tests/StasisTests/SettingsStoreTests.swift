import Foundation
import Stasis
import StasisTesting
import Synchronization
import Testing

struct Options: Codable, Sendable, Equatable {
  var volume = 0.8
  var palette = "standard"
  var bindings = Bindings()

  struct Bindings: Codable, Sendable, Equatable {
    var jump = "space"
    var left = "a"
  }
}

@MainActor
@Suite("Settings (15.6): typed, durable, coalesced in the background, last writer wins per key")
struct SettingsStoreTests {
  let directory = makeTemporaryDirectory()
  let wall = ManualWallClock()

  func store(device: String = "deck", directory: String? = nil) -> SaveStore {
    SaveStore(directory: directory ?? self.directory, wallClock: wall, device: device)
  }

  func open(_ app: Application? = nil, device: String = "deck", directory: String? = nil) throws -> (
    SettingsStore<Options>, Recorded<SettingsChange>
  ) {
    let settings = try SettingsStore(
      store: store(device: device, directory: directory), defaults: Options(), application: app)
    let changes = Recorded<SettingsChange>()
    settings.addObserver { change in changes.items.append(change) }
    return (settings, changes)
  }

  @Test("a change is written durably, told to observers per key, and read by the next process")
  func roundTrip() throws {
    let (settings, changes) = try open()
    #expect(settings.value == Options())
    try settings.update {
      $0.volume = 0.5
      $0.bindings.jump = "w"
    }
    #expect(
      changes.items.map(\.description) == [
        #"bindings: {"jump":"space","left":"a"} → {"jump":"w","left":"a"} (game)"#, "volume: 0.8 → 0.5 (game)",
      ])
    try settings.update { $0.volume = 0.5 }
    #expect(changes.items.count == 2, "no change, no notification")
    let (reopened, _) = try open()
    #expect(reopened.value.volume == 0.5)
    #expect(reopened.value.bindings.jump == "w")
    let file = try store().readSettings()
    #expect(file["volume"]?.stamp.device == "deck")
    #expect(file["palette"]?.stamp == .origin, "a default is written under the origin stamp, which any change beats")
    #expect(file["palette"]?.value == .string("standard"))
  }

  @Test("another process's change: taken while active at the next check, and no process's change is lost")
  func anotherProcess() throws {
    let (app, recorder, clock) = makeApplication()
    app.launch()
    let (settings, changes) = try open(app)
    try settings.update { $0.volume = 0.3 }
    // `stasis settings set palette deuteranopia`, from another process:
    try store(device: "stasis-cli").updateSettings { file in
      file.set("palette", to: .string("deuteranopia"), device: "stasis-cli", now: wall.unixMilliseconds())
    }
    // The game, which has not read it yet, changes another key: both survive.
    try settings.update { $0.bindings.left = "q" }
    #expect(settings.value.palette == "deuteranopia")
    let file = try store().readSettings()
    #expect(file["palette"]?.value == .string("deuteranopia"))
    #expect(file["volume"]?.value == .float64(0.3))
    #expect(
      changes.items.map(\.source) == [.game, .game, .file], "bindings, then palette: one change per key, in key order")
    changes.items.removeAll()
    // While active, a change is read at the next check (every second on the app's clock).
    try store(device: "stasis-cli").updateSettings { file in
      file.set("volume", to: .float64(1.0), device: "stasis-cli", now: wall.unixMilliseconds())
    }
    clock.advance(by: .seconds(1))
    app.update()
    #expect(changes.items.map(\.description) == ["volume: 0.3 → 1 (file)"])
    _ = recorder
  }

  @Test("changes made while in the background arrive once per key, newest value, on return")
  func coalescedInTheBackground() throws {
    let (app, recorder, clock) = makeApplication()
    app.launch()
    let (settings, changes) = try open(app)
    app.enterBackground()
    app.update()
    let cli = store(device: "stasis-cli")
    for palette in ["protanopia", "tritanopia", "deuteranopia"] {
      try cli.updateSettings {
        $0.set("palette", to: .string(palette), device: "stasis-cli", now: wall.unixMilliseconds())
      }
      wall.advance(by: .seconds(1))
    }
    try settings.merge(
      SettingsFile(entries: [
        .init(key: "volume", value: .float64(0.1), stamp: .init(milliseconds: wall.unixMilliseconds(), device: "phone"))
      ]))
    clock.advance(by: .seconds(5))
    app.update()
    #expect(changes.items.isEmpty, "held while in the background")
    app.enterForeground()
    #expect(
      changes.items.map(\.description) == [
        #"palette: "standard" → "deuteranopia" (file)"#, "volume: 0.8 → 0.1 (cloud)",
      ])
    #expect(settings.value.palette == "deuteranopia")
    _ = recorder
  }

  @Test(
    "case 3: the game's change in the background and another process's after it are one change per key, to what the store holds"
  )
  func coalescedAcrossSources() throws {
    let (app, recorder, _) = makeApplication()
    app.launch()
    let (settings, changes) = try open(app)
    app.enterBackground()
    try settings.update { $0.volume = 0.6 }  // the game, in the background (its didEnterBackground)
    wall.advance(by: .seconds(1))
    let cli = store(device: "stasis-cli")  // `stasis settings set volume 0.25`
    try cli.updateSettings { $0.set("volume", to: .float64(0.25), device: "stasis-cli", now: wall.unixMilliseconds()) }
    app.enterForeground()
    #expect(changes.items.map(\.description) == ["volume: 0.8 → 0.25 (file)"])
    #expect(settings.value.volume == 0.25)
    // An observer that applies each newValue in order ends where the store is.
    var applied = 0.8
    for change in changes.items { if case .float64(let value) = change.newValue { applied = value } }
    #expect(applied == settings.value.volume)
    _ = recorder
  }

  @Test("two devices converge: per key, the later stamp wins on both, whatever the order of merges")
  func devicesConverge() throws {
    let other = makeTemporaryDirectory()
    let (deck, _) = try open(device: "deck")
    let (phone, _) = try open(device: "phone", directory: other)
    try deck.update { $0.volume = 0.2 }
    wall.advance(by: .seconds(1))
    try phone.update {
      $0.volume = 0.9
      $0.palette = "tritanopia"
    }
    wall.advance(by: .seconds(1))
    try deck.update { $0.palette = "protanopia" }
    try deck.merge(phone.entries)
    try phone.merge(deck.entries)
    #expect(deck.value == phone.value)
    #expect(deck.value.volume == 0.9)
    #expect(deck.value.palette == "protanopia")
    // A clock moved back still stamps later than what the device has seen.
    wall.advance(by: .seconds(-3600))
    try phone.update { $0.volume = 0.4 }
    try deck.merge(phone.entries)
    #expect(deck.value.volume == 0.4)
  }

  @Test("a value of the wrong type keeps its default; an unreadable file is set aside and kept")
  func badInput() throws {
    try store().updateSettings { file in
      file.set("volume", to: .string("loud"), device: "stasis-cli", now: 1)
      file.set("palette", to: .string("tritanopia"), device: "stasis-cli", now: 1)
    }
    let (settings, _) = try open()
    #expect(settings.value.volume == 0.8)
    #expect(settings.value.palette == "tritanopia")
    try Array("garbage".utf8).write(to: "\(directory)/.settings")
    let (fresh, _) = try open()
    #expect(fresh.value == Options())
    let aside = try #require(fresh.setAside)
    #expect(try [UInt8](contentsOf: aside) == Array("garbage".utf8))
    try fresh.update { $0.volume = 0.6 }
    #expect(try store().readSettings()["volume"]?.value == .float64(0.6))
  }
}
