import Logging

/// One key of the settings changed: what ``SettingsStore`` tells its observers.
public struct SettingsChange: Sendable, Equatable, CustomStringConvertible {
  /// Who changed it.
  public enum Source: String, Sendable, Equatable {
    /// This game, through ``SettingsStore/update(_:)``.
    case game
    /// Another process wrote the file: another copy of the game, `stasis settings set`.
    case file
    /// Another device, through ``SettingsStore/merge(_:)`` (a cloud).
    case cloud
  }

  /// The key: a top-level field of the settings type.
  public var key: String
  /// Its value before the change (before the first, when changes were coalesced).
  public var oldValue: SaveValue
  /// Its value now.
  public var newValue: SaveValue
  /// Who made the (newest) change.
  public var source: Source

  /// Creates a change.
  public init(key: String, oldValue: SaveValue, newValue: SaveValue, source: Source) {
    self.key = key
    self.oldValue = oldValue
    self.newValue = newValue
    self.source = source
  }

  /// `key: old → new (source)`.
  public var description: String { "\(key): \(oldValue.inlineText) → \(newValue.inlineText) (\(source.rawValue))" }
}

/// A game's settings (volume, key bindings, a palette): typed, `Codable`, and kept apart from
/// its save slots, so loading a save never rolls them back. The recipe of 15.6.
///
/// - Each change is written atomically and durably to `SAVES/.settings` (``SettingsFile``),
///   under a lock that `stasis settings set` takes too: no process's change is lost.
/// - Observers hear of each changed key (``SettingsChange``).
/// - Changes from elsewhere — another process, `stasis settings set`, a cloud — are read
///   while the game is active (the file is checked every ``checkInterval``), and when it
///   comes back. While the game is in the background they are held: one change per key,
///   delivered on return, as iOS coalesces a suspended app's notifications.
/// - Keys merge by a hybrid logical clock (``SettingsStamp``): the last writer wins per key,
///   so settings synced across devices never conflict.
///
/// ```swift
/// struct Options: Codable, Sendable { var volume = 0.8; var palette = "standard" }
/// let settings = try SettingsStore(store: store, defaults: Options(), application: app)
/// settings.addObserver { change in print("setting \(change)") }
/// try settings.update { $0.volume = 0.5 }
/// ```
@MainActor
public final class SettingsStore<Settings: Codable & Sendable> {
  /// The settings now.
  public private(set) var value: Settings
  /// How often, while the game is active, the file is checked for another process's change
  /// (on the application's clock). Default 1 s.
  public var checkInterval: Duration = .seconds(1)
  /// The save store whose folder holds the file.
  public let store: SaveStore
  /// Where a settings file this build could not read was moved, when one was: it is kept,
  /// never deleted, and the settings started again from the defaults.
  public private(set) var setAside: String?

  private let defaults: SaveObject
  private var file: SettingsFile
  private var fileBytes: [UInt8]?
  private weak var application: Application?
  private var applicationObservers: [ObserverToken] = []
  private var observers = ObserverList<SettingsChange>()
  private var held: [SettingsChange] = []
  /// True while the return's reload runs: what it reads is held with the rest, then told once.
  private var isReturning = false
  private var lastCheck: Duration?
  private let logger: Logger

  /// Opens the settings of `store`'s folder, with `defaults` for every key the file lacks.
  ///
  /// - Parameters:
  ///   - store: the save store; the file is `store.directory/.settings`, changes are stamped
  ///     with `store.device` and the store's wall clock.
  ///   - defaults: the settings of a first launch, and of every key the file does not hold.
  ///   - application: when given, changes from elsewhere are checked while it is active and
  ///     on its return, and held while it is in the background.
  ///   - logger: where the store notes what it read and set aside.
  public init(
    store: SaveStore, defaults: Settings, application: Application? = nil,
    logger: Logger = Logger(label: "stasis.settings")
  ) throws(SaveFileError) {
    self.store = store
    self.logger = logger
    guard case .object(let object) = try SaveValueEncoder().encode(defaults) else {
      throw SaveFileError(.typeMismatch, "settings must be a struct of named fields", context: .init(part: "settings"))
    }
    self.defaults = object
    self.value = defaults
    self.file = SettingsFile()
    do {
      fileBytes = try store.readFolderFile(named: SettingsFile.folderFileName)
      file = try store.settings(from: fileBytes)
    } catch  where error.kind != .io && error.kind != .locked {
      setAside = try store.setAsideFolderFile(named: SettingsFile.folderFileName, because: error, logger: logger)
      fileBytes = nil
    }
    // Every key is in the file, a default under the origin stamp (which any change beats),
    // so `stasis settings` knows each key and its type without the game.
    if object.fields.contains(where: { file[$0.name] == nil }) {
      do {
        (file, fileBytes) = try store.changeSettings { (file) throws(SaveFileError) in
          for field in object.fields { file.merge(.init(key: field.name, value: field.value, stamp: .origin)) }
        }
      } catch {
        logger.error("settings: the defaults could not be written: \(error)")
      }
    }
    value = decoded(file)
    if let application { attach(to: application) }
  }

  isolated deinit {
    if let application { for token in applicationObservers { application.removeObserver(token) } }
  }

  // MARK: Changing

  /// Changes the settings: each changed key is stamped, written atomically and durably with
  /// the keys another process changed meanwhile, and told to observers.
  public func update(_ change: (inout Settings) -> Void) throws(SaveFileError) {
    var new = value
    change(&new)
    guard case .object(let encoded) = try SaveValueEncoder().encode(new) else { return }
    let changed = encoded.fields.filter { current($0.name, in: file) != $0.value }
    guard !changed.isEmpty else { return }
    let now = store.wallClock()
    let device = store.device
    let written: SettingsFile
    (written, fileBytes) = try store.changeSettings { (file) throws(SaveFileError) in
      for field in changed { file.set(field.name, to: field.value, device: device, now: now) }
    }
    adopt(written, ownKeys: changed.map(\.name), as: .game)
  }

  /// Takes another device's settings, key by key: a key changes where the other's stamp is
  /// later (the last writer wins). Written durably; observers hear of each changed key.
  public func merge(_ other: SettingsFile) throws(SaveFileError) {
    let written: SettingsFile
    (written, fileBytes) = try store.changeSettings { (file) throws(SaveFileError) in file.merge(other) }
    adopt(written, ownKeys: other.entries.filter { written[$0.key] == $0 }.map(\.key), as: .cloud)
  }

  /// Reads the file again now, taking what another process changed.
  public func reload() throws(SaveFileError) {
    let bytes = try store.readFolderFile(named: SettingsFile.folderFileName)
    guard bytes != fileBytes else { return }
    fileBytes = bytes
    adopt(try store.settings(from: bytes))
  }

  /// The file's entries as this store knows them: what a cloud uploads.
  public var entries: SettingsFile { file }

  // MARK: Observers

  /// Observes changes, one ``SettingsChange`` per changed key, on the main actor.
  @discardableResult
  public func addObserver(_ block: @escaping @MainActor (SettingsChange) -> Void) -> ObserverToken {
    observers.add(block)
  }

  /// Removes an observer; an unknown token is a no-op.
  public func removeObserver(_ token: ObserverToken) {
    observers.remove(token)
  }

  // MARK: Private

  private func attach(to application: Application) {
    self.application = application
    applicationObservers.append(
      application.addObserver(for: .willEnterForeground) { [weak self] _ in self?.returned() })
    applicationObservers.append(
      application.addUpdateObserver { [weak self] application in self?.poll(application) })
  }

  /// Back from the background: what another process wrote meanwhile joins what was held, key
  /// by key, and each key is told once, from its value before the first change to the value the
  /// store holds now, whichever sources changed it (this game in the background, a file, a cloud).
  private func returned() {
    isReturning = true
    do {
      try reload()
    } catch {
      logger.error("settings: \(error)")
    }
    isReturning = false
    let changes = held.sorted { $0.key < $1.key }  // in key order, as one reload tells its keys
    held.removeAll()
    for change in changes where change.oldValue != change.newValue { deliver(change) }
  }

  private func poll(_ application: Application) {
    guard application.state == .active || application.state == .inactive else { return }
    let now = application.configuration.clock.now()
    if let lastCheck, now - lastCheck < checkInterval { return }
    lastCheck = now
    do {
      try reload()
    } catch {
      logger.error("settings: \(error)")
    }
  }

  /// Makes `new` the known file: the value decoded again, a change told per key whose value
  /// differs (in key order). `ownKeys` are told as `source`'s; the others as another process's.
  private func adopt(_ new: SettingsFile, ownKeys: [String] = [], as source: SettingsChange.Source = .file) {
    let old = file
    file = new
    value = decoded(new)
    var keys: [String] = []
    for entry in new.entries where current(entry.key, in: old) != entry.value { keys.append(entry.key) }
    for key in keys {
      let change = SettingsChange(
        key: key, oldValue: current(key, in: old) ?? .null, newValue: current(key, in: new) ?? .null,
        source: ownKeys.contains(key) ? source : .file)
      announce(change)
    }
  }

  private func announce(_ change: SettingsChange) {
    guard let application, application.state.isInBackground || isReturning else { return deliver(change) }
    if let index = held.firstIndex(where: { $0.key == change.key }) {
      held[index].newValue = change.newValue
      held[index].source = change.source
    } else {
      held.append(change)
    }
  }

  private func deliver(_ change: SettingsChange) {
    observers.notify(change)
  }

  /// A key's value: the file's, else the default's.
  private func current(_ key: String, in file: SettingsFile) -> SaveValue? {
    file[key]?.value ?? defaults[key]
  }

  /// The settings from the defaults with the file's keys over them. A key whose value does
  /// not decode (an edit of the wrong type) keeps its default, and is logged.
  private func decoded(_ file: SettingsFile) -> Settings {
    var object = defaults
    for entry in file.entries where object[entry.key] != nil { object[entry.key] = entry.value }
    if let settings = try? SaveValueDecoder().decodeIgnoringUnreadFields(Settings.self, from: .object(object)) {
      return settings
    }
    // One key at a time: keep each that decodes.
    object = defaults
    for entry in file.entries where object[entry.key] != nil {
      var trial = object
      trial[entry.key] = entry.value
      if (try? SaveValueDecoder().decodeIgnoringUnreadFields(Settings.self, from: .object(trial))) != nil {
        object = trial
      } else {
        logger.error(
          "settings: '\(entry.key)' = \(entry.value.inlineText) does not fit the game's type; the default is used")
      }
    }
    return (try? SaveValueDecoder().decodeIgnoringUnreadFields(Settings.self, from: .object(object))) ?? value
  }
}
