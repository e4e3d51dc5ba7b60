import Foundation
import Stasis
import StasisCloud

/// The settings a simulated device keeps (15.6): two keys, so that devices, `update`s and
/// merges meet on the same key.
struct SimulatedSettings: Codable, Sendable {
  var volume: Int64 = 8
  var palette = "standard"
}

/// A device's settings and timers while its process runs, and what the simulation knows was
/// acknowledged: every `update` or `merge` that returned, every `schedule` that returned.
///
/// The invariants (``check()`` and ``checkAllFired()``): **no setting change lost** — every key's
/// stamp on the device is at least the stamp of its last acknowledged change, across kills, and
/// every key's stamp on the server is at least the newest the server answered with
/// (``checkServer(_:device:)``);
/// **no timer fired twice or never** — an acknowledged timer has fired once or is still
/// scheduled, across kills and clock jumps, and once the clock is past every date, it has fired
/// once.
@MainActor
final class DeviceRecipes {
  private(set) var settings: SettingsStore<SimulatedSettings>?
  private(set) var timers: TimerCenter?
  /// The newest acknowledged change of each key, in the order keys were first changed.
  private(set) var acknowledgedSettings: [(key: String, stamp: SettingsStamp)] = []
  /// The newest stamp of each key in an answer of the server's (`200`): what the server
  /// acknowledged, across every process of the device.
  private(set) var serverAcknowledgedSettings: [(key: String, stamp: SettingsStamp)] = []
  /// Timers whose `schedule` returned, and their dates (milliseconds).
  private(set) var acknowledgedTimers: [(identifier: String, due: Int64)] = []
  /// How often each timer fired, over every process of the device.
  private var fired: [(identifier: String, count: Int)] = []
  /// Timers not yet fired when the process was killed while the disk held a timers file whose
  /// write had failed after its rename (the folder's flush failed): the center was told the
  /// firing's write failed and delivered nothing, and the crash may keep that file. Such a
  /// timer may come back gone without a firing; no store can both deliver at most once and
  /// never lose one when the disk fails a flush and the process dies before the next one.
  private var mayBeLost: [String] = []
  private var nextTimer = 1

  /// Opens the settings and the timers over the process's store (on the device's disk).
  func open(store: SaveStore, application: Application, wallClock: any WallClock) -> String? {
    do {
      settings = try SettingsStore(store: store, defaults: SimulatedSettings(), application: application)
      let timers = try TimerCenter(store: store, application: application, wallClock: wallClock)
      timers.addObserver { [unowned self] firing in
        if let index = fired.firstIndex(where: { $0.identifier == firing.identifier }) {
          fired[index].count += 1
        } else {
          fired.append((firing.identifier, 1))
        }
      }
      self.timers = timers
      return nil
    } catch {
      settings = nil
      timers = nil
      return "settings or timers could not be opened: \(error.kind)"
    }
  }

  /// The process is killed while its timers file may hold a firing's write the center was told
  /// failed (``SimulatedDisk/unflushedAfterFailedFlush``): its timers not yet fired may be lost.
  func killedWithUnflushedTimers() {
    for (identifier, _) in acknowledgedTimers where count(identifier) == 0 && !mayBeLost.contains(identifier) {
      mayBeLost.append(identifier)
    }
  }

  /// Timers a kill may have lost (``killedWithUnflushedTimers()``), for the trace.
  var timersThatMayBeLost: [String] { mayBeLost }

  /// The process ended (killed or quit).
  func close() {
    settings = nil
    timers = nil
  }

  /// Changes a key; remembered when the call returned.
  func change(volume: Int64?, palette: String?) -> String {
    guard let settings else { return "not running" }
    do {
      try settings.update {
        if let volume { $0.volume = volume }
        if let palette { $0.palette = palette }
      }
    } catch {
      return "refused: \(error.kind)"
    }
    for key in [volume.map { _ in "volume" }, palette.map { _ in "palette" }].compactMap({ $0 }) {
      acknowledge(key)
    }
    return "acknowledged"
  }

  /// Carries the device's settings through the server, as ``SettingsSync`` does in one round
  /// trip: `PUT /v1/settings` with the device's entries, then the server's answer (the player's
  /// merged settings) merged here. Every key of an answer the device merged is acknowledged on
  /// the device at its new stamp, and every key of an answer it received, on the server.
  func syncSettings(through client: CloudClient) async -> String {
    guard let settings else { return "not running" }
    let answer: SettingsFile
    do {
      answer = try await client.mergeSettings(settings.entries)
    } catch {
      return "not synced: \(error.kind)"
    }
    for entry in answer.entries {
      if let index = serverAcknowledgedSettings.firstIndex(where: { $0.key == entry.key }) {
        serverAcknowledgedSettings[index].stamp = max(serverAcknowledgedSettings[index].stamp, entry.stamp)
      } else {
        serverAcknowledgedSettings.append((entry.key, entry.stamp))
      }
    }
    // The same process still runs: the simulation's operations take turns on the main actor.
    do {
      try settings.merge(answer)
    } catch {
      return "answer not written: \(error.kind)"
    }
    for entry in answer.entries { acknowledge(entry.key) }
    return "acknowledged (\(answer.entries.count) keys)"
  }

  /// Schedules a one-shot timer `after` from now; remembered when the call returned.
  func schedule(after: Duration, now: Int64) -> String {
    guard let timers else { return "not running" }
    let identifier = "timer-\(nextTimer)"
    nextTimer += 1
    do {
      try timers.schedule(identifier, after: after)
    } catch {
      return "\(identifier) refused: \(error.kind)"
    }
    acknowledgedTimers.append((identifier, now + Int64(after.inMilliseconds)))
    return "\(identifier) acknowledged"
  }

  private func acknowledge(_ key: String) {
    guard let stamp = settings?.entries[key]?.stamp else { return }
    if let index = acknowledgedSettings.firstIndex(where: { $0.key == key }) {
      acknowledgedSettings[index].stamp = max(acknowledgedSettings[index].stamp, stamp)
    } else {
      acknowledgedSettings.append((key, stamp))
    }
  }

  private func count(_ identifier: String) -> Int { fired.first { $0.identifier == identifier }?.count ?? 0 }

  /// The invariants while the device runs; nil when they hold.
  func check(device: String) -> BrokenInvariant? {
    if let twice = fired.first(where: { $0.count > 1 }) {
      return .init(.timerFiresOnce, "\(device): timer \(twice.identifier) fired \(twice.count) times")
    }
    guard let settings, let timers else { return nil }
    for (key, stamp) in acknowledgedSettings {
      let now = settings.entries[key]?.stamp ?? .origin
      if now < stamp {
        return .init(.settingKept, "\(device): setting '\(key)' lost: acknowledged at \(stamp), the device has \(now)")
      }
    }
    for (identifier, _) in acknowledgedTimers
    where count(identifier) == 0 && !timers.scheduled.contains(where: { $0.identifier == identifier })
      && !mayBeLost.contains(identifier)
    {
      return .init(.timerFiresOnce, "\(device): timer \(identifier) lost: it never fired and is no longer scheduled")
    }
    return nil
  }

  /// The server's side of **no setting change lost**: each key the server answered with is in
  /// its settings at the answer's stamp or a later one; nil when it holds.
  func checkServer(_ stored: SettingsFile, device: String) -> BrokenInvariant? {
    for (key, stamp) in serverAcknowledgedSettings {
      let now = stored[key]?.stamp ?? .origin
      if now < stamp {
        return .init(
          .settingKept, "server: setting '\(key)' lost: it answered \(device) with \(stamp), it now has \(now)")
      }
    }
    return nil
  }

  /// The latest date of an acknowledged timer not yet fired.
  var latestDue: Int64? {
    acknowledgedTimers.filter { count($0.identifier) == 0 && !mayBeLost.contains($0.identifier) }.map(\.due).max()
  }

  /// Once the clock is past every date and the game has checked: each acknowledged timer fired once.
  func checkAllFired(device: String) -> BrokenInvariant? {
    for (identifier, _) in acknowledgedTimers where count(identifier) != 1 {
      if count(identifier) == 0, mayBeLost.contains(identifier) { continue }
      return .init(.timerFiresOnce, "\(device): timer \(identifier) fired \(count(identifier)) times, not once")
    }
    return nil
  }

  var timersFired: Int { fired.reduce(0) { $0 + $1.count } }
}
