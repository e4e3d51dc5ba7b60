// The Swift blocks of SettingsAndTimers.md, compiled (GuideTests checks each is here).
import Foundation
import Stasis
import StasisCloud
import StasisTesting

// MARK: - Settings

struct GameOptions: Codable, Sendable {
  var volume = 0.8
  var palette = "standard"
  var bindings = Bindings()

  struct Bindings: Codable, Sendable {
    var jump = "Space"
  }
}

@MainActor
func openSettings(store: SaveStore, app: Application, audio: SnippetAudio) throws {
  let settings = try SettingsStore(store: store, defaults: GameOptions(), application: app)
  audio.volume = settings.value.volume
  settings.addObserver { change in
    // One call per changed key; changes made while in the background arrive once, on return.
    if change.key == "volume" { audio.volume = settings.value.volume }
    print("setting \(change)")  // "volume: 0.8 → 0.5 (game)"
  }
  try settings.update { $0.volume = 0.5 }
}

@MainActor
func mergeSettings(settings: SettingsStore<GameOptions>, fromOtherDevice other: SettingsFile) throws {
  // Per key, the later stamp wins: settings never conflict.
  try settings.merge(other)
  let upload: SettingsFile = settings.entries
  _ = upload
}

final class SnippetAudio {
  var volume = 1.0
}

// MARK: - Timers

@MainActor
func openTimers(store: SaveStore, app: Application, energy: SnippetEnergy) throws {
  let timers = try TimerCenter(store: store, application: app, notificationTitle: "My Game")
  timers.addObserver { firing in
    // At its date while active; on return, or at the first update() after launch, when it fell due away, once,
    // in date order. A repeating timer missed five times is one firing of five occurrences.
    if firing.identifier == "energy" { energy.refill(times: firing.occurrences) }
  }
  try timers.schedule("energy", after: .seconds(30 * 60), repeatingEvery: .seconds(30 * 60), message: "Energy is full")
  try timers.schedule("crops", at: Date(timeIntervalSince1970: 1_800_000_000), message: "Your crops are ready")
}

@MainActor
func backgroundLoop(app: Application, timers: TimerCenter) {
  // A loop that sleeps while the game is away wakes for the next timer, so its desktop
  // notification is posted on time.
  let wait = min(timers.timeUntilNextTimer ?? .seconds(1), .seconds(1))
  app.update()
  _ = wait
}

final class SnippetEnergy {
  func refill(times: Int) {}
}

// MARK: - A tool that changes a setting, then exits

@MainActor
func changePaletteAndExit(settings: SettingsStore<GameOptions>, settingsSync: SettingsSync<GameOptions>) async throws {
  try settings.update { $0.palette = "tritanopia" }
  await settingsSync.settle()  // before the tool exits: the change's round trip has ended
  print(settingsSync.lastOutcome.map { "\($0)" } ?? "no round trip")
}

// MARK: - Testing them: the wall clock

@MainActor
func timersOnAManualWallClock(folder: String) throws {
  let wall = ManualWallClock(start: Date(timeIntervalSince1970: 1_800_000_000))
  let clock = ManualClock()
  let app = Application(configuration: Application.Configuration(clock: clock))
  let store = SaveStore(directory: folder, wallClock: wall)
  let timers = try TimerCenter(store: store, application: app, wallClock: wall)
  app.launch()
  try timers.schedule("energy", after: .seconds(30 * 60), message: "Energy is full")
  wall.advance(by: .seconds(30 * 60))  // half an hour of real time
  app.update()  // the timer fires here, on time
  wall.set(to: Date(timeIntervalSince1970: 1_700_000_000))  // the player moved the clock back
}
