import CStasisSDL2
import Foundation
import Stasis
import StasisDemoGame
import StasisReplay
import StasisSDL

#if Records
  import StasisDemoRecords
#endif

/// The demo in a real window: SDL events drive the lifecycle, the engine steps at a fixed
/// 60 Hz from an accumulator, and frames interpolate between steps.
@MainActor
final class WindowRunner {
  let options: StasisDemo
  private var window: OpaquePointer!
  private var renderer: OpaquePointer!
  private var font: BitmapFont!
  private var game: Game!
  private var app: Application!
  private var watch: LifecycleEventWatch?
  /// `--cloud`: the slot's sync, whose state the HUD shows.
  private var cloud: DemoCloud?
  private var library: LevelLibrary!
  private var previous: GameState?
  private var status = "ready"
  private var statusColor: (UInt8, UInt8, UInt8) = (200, 200, 200)
  private var paused = false
  private var picker: SlotPicker?
  private var awayUntil: UInt64?
  private var framesThisSecond = 0
  private var fps = 0
  private var secondStarted: UInt64 = 0
  private var windowReady = false
  /// The settings (15.6), apart from the saves; the screen F2 opens.
  private var settings: SettingsStore<DemoSettings>!
  private var settingsScreen: SettingsScreen?
  /// The "which save?" dialog of a cloud conflict left to the player, while it is open.
  private var conflictScreen: ConflictScreen?
  /// The conflict last answered or put off: its dialog does not open again.
  private var answeredConflict: String?
  /// The bound keys' scancodes (left, right, jump), looked up when the bindings change, not
  /// every frame.
  private var boundKeys: [SDL_Scancode] = []
  /// The power-up's wall-clock timer (15.4).
  private var timers: TimerCenter!
  private static let powerUp = "power-up"
  #if Records
    /// The high-score table and the slot index (16), in `records.sqlite`; nil when it could
    /// not be opened (the game plays on without it).
    private var records: StasisDemoRecords?
    /// The high-score table (F3), observed for the whole session.
    private var highScores: HighScoreScreen?
  #endif
  /// Levels finished and the run's frame as of the last step: one more level in one more frame
  /// is a level's end, whose score is recorded (a restore changes both otherwise).
  private var lastStep = (levelsFinished: 0, runFrame: Int64(0), index: 1)
  /// `--replay FILE`: the replay the window plays back instead of the game's own steps.
  private var playback: WindowPlayback?

  init(options: StasisDemo) { self.options = options }

  /// False when there is no display: the caller runs the headless session instead.
  static func displayAvailable() -> Bool {
    SDL_Init(UInt32(SDL_INIT_VIDEO | SDL_INIT_EVENTS)) == 0
  }

  func run() -> Int32 {
    // ---- Initialization ----
    guard let library = options.levels.map(LevelLibrary.init(folder:)) ?? LevelLibrary.locate() else {
      FileHandle.standardError.write(Data("stasis-demo: cannot find Assets/levels\n".utf8))
      return 1
    }
    self.library = library
    window = SDL_CreateWindow(
      "Stasis demo", Int32(SDL_WINDOWPOS_CENTERED_MASK), Int32(SDL_WINDOWPOS_CENTERED_MASK), 1280, 720,
      SDL_WINDOW_RESIZABLE.rawValue | SDL_WINDOW_SHOWN.rawValue)
    guard window != nil else { return sdlFailure("SDL_CreateWindow") }
    renderer =
      SDL_CreateRenderer(window, -1, SDL_RENDERER_ACCELERATED.rawValue | SDL_RENDERER_PRESENTVSYNC.rawValue)
      ?? SDL_CreateRenderer(window, -1, SDL_RENDERER_SOFTWARE.rawValue)
    guard renderer != nil else { return sdlFailure("SDL_CreateRenderer") }
    SDL_SetRenderDrawBlendMode(renderer, SDL_BLENDMODE_BLEND)
    do {
      font = try BitmapFont(path: library.folder + "/../font.bmp", renderer: renderer)
      var engine = try Engine(library: library, level: options.level, seed: options.seed)
      engine.desyncAt = options.desyncAt
      // A playback saves nothing of the player's: its coordinator's store is a scratch folder.
      let folder = options.replay == nil ? options.saves : NSTemporaryDirectory() + "stasis-playback-\(getpid())"
      let store = SaveStore(directory: folder, device: options.device)
      game = Game(engine: engine, store: store, slot: options.saveSlot)
      if let file = options.replay {
        playback = try WindowPlayback(file: file, library: library, seek: options.seek)
        try game.host.restore(playback!.state)
        if options.trace { traceLine(playback!.started) }
      }
    } catch {
      FileHandle.standardError.write(Data("stasis-demo: \(error)\n".utf8))
      return 1
    }
    game.coordinator.autosaveInterval = Int64((options.autosave * 60).rounded())
    game.autopilot = options.autopilot
    // Drawn from the snapshot on the save's worker: the main thread pays only for the copy.
    game.coordinator.thumbnail = { state in try? DemoThumbnail.png(of: state, library: library) }
    app = Application(
      delegate: game.coordinator,
      configuration: .init(backgroundBudget: .milliseconds(Int64((options.budget * 1000).rounded()))))
    let report = RunReport(options: options)
    report.installTrace(app: app, game: game)
    let traceAll = options.trace
    game.coordinator.onEvent = { [unowned self] event in
      if traceAll { traceLine(event.description) }
      self.show(event)
      #if Records
        switch event {  // the picker's index follows the slot's files
        case .saved: self.records?.indexSlot(self.game.coordinator.slot)
        case .restored:
          self.records?.restoredSave()
          self.records?.indexSlot(self.game.coordinator.slot)
        default: break
        }
      #endif
    }
    // A playback reaches no server: its state is the replay's, not the player's.
    cloud = playback == nil ? DemoCloud.attach(options, to: game) { line in if traceAll { traceLine(line) } } : nil
    let application = app!
    watch = LifecycleEventWatch { transition in
      // On desktop Linux SDL sends no SDL_APP_* events; where it does, this is the main thread.
      MainActor.assumeIsolated { _ = application.apply(transition) }
    }
    app.addEpisodeObserver { [unowned self] episode in
      if case .expired = episode.outcome {
        self.status = "budget expired"
        self.statusColor = (255, 120, 100)
      }
    }
    do {
      try openSettingsAndTimers(store: game.coordinator.store)
    } catch {
      FileHandle.standardError.write(Data("stasis-demo: \(error)\n".utf8))
      return 1
    }
    cloud?.syncSettings(settings, application: app)
    openRecords()
    app.launch(options: options.resume && playback == nil ? LaunchOptions(restoreSlot: options.saveSlot) : .none)
    // Every run is recorded, one replay per slot: SAVES/replays/SLOT.stasis (not a playback).
    if !options.noReplay, playback == nil {
      game.recordReplay(
        named: options.slot, seed: options.seed, continuing: options.resume, digestInterval: options.replayDigestEvery,
        application: app)
    }

    // ---- The loop: events, fixed steps, a frame ----
    let frequency = Double(SDL_GetPerformanceFrequency())
    var last = SDL_GetPerformanceCounter()
    var accumulator = 0.0
    let step = 1.0 / 60.0
    secondStarted = last
    var running = true
    while running {
      var event = SDL_Event()
      while SDL_PollEvent(&event) != 0 {
        if handleKey(event) { continue }
        if event.type == SDL_WINDOWEVENT.rawValue {
          let id = SDL_WindowEventID(UInt32(event.window.event))
          if id == SDL_WINDOWEVENT_EXPOSED { windowReady = true }
          // X11 maps a new window as shown, hidden, shown: not a trip to the background.
          if !windowReady && (id == SDL_WINDOWEVENT_HIDDEN || id == SDL_WINDOWEVENT_SHOWN) { continue }
        }
        if let transition = lifecycleTransitionFromQueue(event) {
          app.apply(transition)
        }
      }
      if app.state == .notRunning {  // terminated: wait for the final save and score, then leave
        // A records write begun as the episode ended (the final save's index) ends at an
        // update(): waited for here, on this thread, without the main queue.
        while app.hasBackgroundEpisode { app.waitForBackgroundWork() }
        while hasPendingRecords {
          app.waitForDeliveries(timeout: .seconds(1))
          app.update()
        }
        game.coordinator.waitForSaves()
        running = false
        continue
      }
      let now = SDL_GetPerformanceCounter()
      let elapsed = min(Double(now - last) / frequency, 0.25)  // after a stall, do not try to catch up
      last = now
      if let awayUntil, now >= awayUntil {
        self.awayUntil = nil
        app.enterForeground()
      }
      app.update()
      guard app.state == .active, !app.state.isInBackground else {
        // Away: no stepping, no drawing; wake for events or the budget.
        accumulator = 0
        game.tick(app)  // collects finished saves for the HUD
        SDL_WaitEventTimeout(nil, 20)
        continue
      }
      openConflictScreen()
      if let playback {
        accumulator += elapsed
        while accumulator >= step {
          if playback.isPlaying { previous = game.engine.snapshot() }
          if let line = playback.step(&game.host.engine), options.trace { traceLine(line) }
          accumulator -= step
        }
        status = playback.status
      } else if !paused && picker == nil && settingsScreen == nil && conflictScreen == nil && !highScoresOpen {
        accumulator += elapsed
        let input = currentInput()
        while accumulator >= step {
          previous = game.engine.snapshot()
          game.tick(app, input: input)
          accumulator -= step
          noteLevelEnd()
          // A heartbeat for scripts and the window test: the engine is stepping.
          if options.trace, game.engine.state.level.runFrame % 60 == 0 {
            traceLine("engine: frame \(game.engine.state.level.runFrame)")
          }
        }
      } else {
        game.tick(app)  // paused: collects finished saves only (the engine is paused)
      }
      draw(alpha: Float(accumulator / step))
    }

    // ---- De-initialization ----
    watch = nil
    let code = report.finish(app: app, game: game)
    if playback != nil { try? FileManager.default.removeItem(atPath: game.coordinator.store.directory) }
    font = nil
    SDL_DestroyRenderer(renderer)
    SDL_DestroyWindow(window)
    SDL_Quit()
    return code
  }

  /// Opens the "which save?" dialog when a conflict waits for the player that was not answered.
  private func openConflictScreen() {
    guard conflictScreen == nil, let choice = cloud?.pendingChoice, choice.id != answeredConflict else { return }
    conflictScreen = ConflictScreen(choice)
    if options.trace { traceLine("conflict: which save? \(choice.ours) · \(choice.theirs)") }
  }

  private func sdlFailure(_ call: String) -> Int32 {
    FileHandle.standardError.write(Data("stasis-demo: \(SDLError(call))\n".utf8))
    return 1
  }

  // MARK: Input

  private func currentInput() -> Input {
    var count: Int32 = 0
    guard let keys = SDL_GetKeyboardState(&count) else { return Input() }
    func down(_ code: SDL_Scancode) -> Bool { Int32(code.rawValue) < count && keys[Int(code.rawValue)] != 0 }
    // The arrows always; the bound keys (settings) beside them.
    func bound(_ index: Int) -> Bool { boundKeys[index] != SDL_SCANCODE_UNKNOWN && down(boundKeys[index]) }
    return Input(
      left: down(SDL_SCANCODE_LEFT) || bound(0), right: down(SDL_SCANCODE_RIGHT) || bound(1),
      jump: down(SDL_SCANCODE_UP) || bound(2))
  }

  /// The demo's keys; true when the event was one of them.
  private func handleKey(_ event: SDL_Event) -> Bool {
    guard event.type == SDL_KEYDOWN.rawValue, event.key.repeat == 0 else { return false }
    let key = SDL_KeyCode(UInt32(event.key.keysym.sym))
    if let settingsScreen {
      if !settingsScreen.handle(key) { self.settingsScreen = nil }
      return true
    }
    if let conflictScreen {
      guard let answer = conflictScreen.answer(to: key) else { return true }
      answeredConflict = conflictScreen.choice.id
      if options.trace { traceLine("conflict: \(answer)") }
      guard answer != .later, let cloud else {
        self.conflictScreen = nil
        return true
      }
      conflictScreen.settling = true
      cloud.resolve(keepingOurs: answer == .keepOurs, application: app) { [unowned self] restore, error in
        self.conflictScreen = nil
        if let error { status = "conflict not settled: \(error)" }
        // The cloud's save was written here: the game restores it (ours stays as it is).
        if restore != nil { game.coordinator.restoreSlot() }
        if options.trace { traceLine("conflict: settled\(restore.map { ", restored generation \($0)" } ?? "")") }
      }
      return true
    }
    #if Records
      if let highScores, highScores.isOpen {
        if key == SDLK_F3 || key == SDLK_ESCAPE { highScores.toggle() }
        return true
      }
    #endif
    if let playback, key != SDLK_ESCAPE {
      let line: String?
      switch key {  // the game's own keys do nothing in a playback
      case SDLK_LEFT: line = playback.seek(by: -WindowPlayback.seekTicks, on: &game.host.engine)
      case SDLK_RIGHT: line = playback.seek(by: WindowPlayback.seekTicks, on: &game.host.engine)
      case SDLK_HOME: line = playback.seek(to: playback.startTick, on: &game.host.engine)
      case SDLK_p, SDLK_SPACE:
        playback.isPaused.toggle()
        line = "replay: \(playback.isPaused ? "paused" : "playing") at tick \(playback.tick)"
      default: return true
      }
      previous = nil
      if let line, options.trace { traceLine(line) }
      return true
    }
    if let picker {
      switch key {
      case SDLK_UP: picker.move(-1)
      case SDLK_DOWN: picker.move(1)
      case SDLK_PAGEUP: picker.move(-picker.pageSize)
      case SDLK_PAGEDOWN: picker.move(picker.pageSize)
      case SDLK_RETURN: load(picker.selectedSlot)
      case SDLK_F10, SDLK_ESCAPE: self.picker = nil
      default: return false
      }
      return true
    }
    if let failure = game.coordinator.restoreFailure {  // the player chooses; the unreadable save is kept
      let choice: RestoreChoice? =
        key == SDLK_n
        ? .startOver
        : key == SDLK_o
          ? failure.olderGeneration.map { .loadGeneration($0) }
          : key == SDLK_a ? failure.reason.newer.map { .loadGeneration($0) } : nil
      if let choice {
        do {
          try game.coordinator.resolveRestoreFailure(choice)
          status = choice == .startOver ? "new game (the unreadable save is kept)" : status
          previous = nil
        } catch {
          status = "load failed: \(error.kindDescription)"
        }
        return true
      }
    }
    switch key {
    case SDLK_p:
      paused.toggle()
      game.setPaused(paused)
    case SDLK_F5:
      status = "saving..."
      statusColor = (255, 220, 120)
      game.coordinator.saveNow()
    case SDLK_F9:
      status = "loading..."
      game.coordinator.restoreSlot()
    case SDLK_F10:
      #if Records
        picker = SlotPicker(
          store: game.coordinator.store, codec: game.coordinator.codec, library: library, renderer: renderer,
          records: records)
      #else
        picker = SlotPicker(
          store: game.coordinator.store, codec: game.coordinator.codec, library: library, renderer: renderer)
      #endif
    case SDLK_F3:
      #if Records
        guard let highScores else {
          status = "no high-score table: records.sqlite could not be opened"
          return true
        }
        highScores.toggle()
      #else
        status = "no high-score table: built without the Records trait"
      #endif
    case SDLK_ESCAPE:
      status = "saving before quitting..."  // ASCII: the bitmap font has no "…"
      app.terminate()
    case SDLK_F2:
      settingsScreen = SettingsScreen(settings: settings)
    case SDLK_b:
      app.enterBackground()
      awayUntil = SDL_GetPerformanceCounter() + 2 * SDL_GetPerformanceFrequency()
    default:
      return false
    }
    return true
  }

  private func load(_ name: String?) {
    picker = nil
    guard let name else { return }
    do {
      let loaded = try game.coordinator.store.load(codec: game.coordinator.codec, slot: try SaveSlot(name))
      try game.coordinator.restore(loaded)
      previous = nil
    } catch {
      status = "load failed: \(error)"
      statusColor = (255, 120, 100)
    }
  }

  private func show(_ event: SaveEvent) {
    switch event {
    case .saved(_, let receipt, _):
      let ms = (receipt.encodeDuration + receipt.writeDuration).inMilliseconds
      status = "saved generation \(receipt.generation) in \(Int(ms.rounded())) ms"
      statusColor = (140, 230, 150)
    case .saveFailed(_, let error, _):
      status = error.kind == .cancelled ? "budget expired: save cancelled" : "save failed: \(error.kindDescription)"
      statusColor = (255, 120, 100)
    case .restored(let generation, _, let skipped, _):
      status = "restored from generation \(generation)" + (skipped.isEmpty ? "" : " (newer ones failed)")
      statusColor = (140, 200, 255)
    case .keptMemory: status = "resumed from memory"
    case .held(.catchingUp, _): status = "catching up with the server"
    case .loadFailed(let error), .held(.restoreFailure(let error), _):
      status = "\(event.isHold ? "held" : "load failed"): \(error.kindDescription)"
      if let failure = game.coordinator.restoreFailure {
        status +=
          failure.reason.newer != nil
          ? " - O: older build's save, A: this build's, N: new game"
          : failure.olderGeneration == nil ? " - N: new game" : " - O: older save, N: new game"
      }
      FileHandle.standardError.write(Data("stasis-demo: \(event)\n".utf8))
    }
  }

  // MARK: Drawing

  private func viewState(alpha: Float) -> GameState {
    var view = game.engine.state
    guard let previous, previous.physics.bodies.count == view.physics.bodies.count,
      previous.level.index == view.level.index
    else { return view }
    func mix(_ a: Vector, _ b: Vector) -> Vector { a + (b - a) * alpha }
    view.camera.position = mix(previous.camera.position, view.camera.position)
    view.physics.bodies.withUnsafeMutableBufferPointer { bodies in
      previous.physics.bodies.withUnsafeBufferPointer { before in
        for index in bodies.indices where !bodies[index].isAsleep {
          bodies[index].position = mix(before[index].position, bodies[index].position)
        }
      }
    }
    return view
  }

  private func draw(alpha: Float) {
    var width: Int32 = 0
    var height: Int32 = 0
    SDL_GetRendererOutputSize(renderer, &width, &height)
    var canvas = PaletteCanvas(SDLCanvas(renderer: renderer), palette: settings.value.palette)
    let view = viewState(alpha: alpha)
    SceneDrawing(width: Int(width), height: Int(height)).draw(
      view, level: game.engine.level, camera: view.camera, on: &canvas)
    drawHUD(width: Float(width), height: Float(height))
    if paused { drawOverlay("PAUSED", width: Float(width), height: Float(height)) }
    picker?.draw(font: font, width: Float(width), height: Float(height))
    settingsScreen?.draw(font: font, renderer: renderer, width: Float(width), height: Float(height))
    conflictScreen?.draw(font: font, renderer: renderer, width: Float(width), height: Float(height))
    #if Records
      if let highScores, highScores.isOpen {
        highScores.draw(font: font, renderer: renderer, width: Float(width), height: Float(height))
      }
    #endif
    SDL_RenderPresent(renderer)
    countFrame()
  }

  private func countFrame() {
    framesThisSecond += 1
    let now = SDL_GetPerformanceCounter()
    if now - secondStarted >= SDL_GetPerformanceFrequency() {
      fps = framesThisSecond
      framesThisSecond = 0
      secondStarted = now
    }
  }

  private func drawHUD(width: Float, height: Float) {
    let state = game.engine.state
    SDL_SetRenderDrawColor(renderer, 0, 0, 0, 150)
    var bar = SDL_FRect(x: 0, y: 0, w: width, h: 30)
    SDL_RenderFillRectF(renderer, &bar)
    let left = String(
      format: "SCORE %lld  x%d  HIGH %lld  LEVEL %d  TIME %.1f  FPS %d", state.score.points, state.score.multiplier,
      state.score.highScore, state.level.index, state.level.timer, fps)
    font.draw(left, x: 10, y: 5, on: renderer)
    font.draw(status, x: width - font.width(of: status) - 10, y: 5, on: renderer, color: statusColor)
    if let cloud {
      // The cloud's state: "synced r12", "offline, 2 waiting", "conflict".
      let (hud, color) = cloud.hud
      let text = "CLOUD " + hud
      font.draw(text, x: width - font.width(of: text) - 10, y: height - 24, on: renderer, color: color)
    }
    let help =
      "arrows/A D move  Space jump  P pause  F5 save  F9 load  F10 slots  F2 settings  F3 scores  B background  Esc quit"
    font.draw(help, x: 10, y: height - 24, on: renderer, color: (150, 150, 170))
    // The power-up's timer, on the wall clock: it regenerates while the game is closed too.
    if let timer = timers.scheduled.first(where: { $0.identifier == Self.powerUp }) {
      let seconds = max(0, Int(timer.date.timeIntervalSince(timers.wallClock.now()).rounded(.up)))
      let text = String(format: "POWER-UP IN %d:%02d", seconds / 60, seconds % 60)
      font.draw(text, x: 10, y: 34, on: renderer, color: (250, 210, 60))
    }
  }

  // MARK: Settings and timers

  /// Opens the settings and the timers beside the saves; the power-up regenerates every
  /// `powerUpMinutes` of real time, and a changed setting takes effect at once.
  private func openSettingsAndTimers(store: SaveStore) throws(SaveFileError) {
    settings = try SettingsStore(store: store, defaults: DemoSettings(), application: app)
    timers = try TimerCenter(
      store: store, application: app, notifier: DemoNotifier.make(), notificationTitle: "Stasis demo")
    settings.addObserver { [unowned self] change in
      self.status =
        "setting \(change.key) = \(change.newValue.inlineText)"
        + (change.source == .game ? "" : " (\(change.source.rawValue))")
      self.statusColor = (200, 200, 255)
      if change.key == "powerUpMinutes" { self.schedulePowerUp(replacing: true) }
      if change.key == "bindings" { self.lookUpBoundKeys() }
    }
    lookUpBoundKeys()
    timers.addObserver { [unowned self] firing in
      guard firing.identifier == Self.powerUp, playback == nil else { return }
      self.game.applyPowerUp()
      self.status =
        "POWER-UP: x\(ScoreState.maxMultiplier)" + (firing.circumstance == .onTime ? "" : " (while you were away)")
      self.statusColor = (250, 210, 60)
    }
    if playback == nil { schedulePowerUp(replacing: false) }  // a playback's power-ups are in its inputs
  }

  private func lookUpBoundKeys() {
    let bindings = settings.value.bindings
    let names: [String] = [bindings.left, bindings.right, bindings.jump]
    boundKeys = names.map { SDL_GetScancodeFromName($0) }
  }

  private func schedulePowerUp(replacing: Bool) {
    guard replacing || !timers.scheduled.contains(where: { $0.identifier == Self.powerUp }) else { return }
    let every = Duration.seconds(settings.value.powerUpMinutes * 60)
    do {
      try timers.schedule(Self.powerUp, after: every, repeatingEvery: every, message: "Your power-up is ready")
    } catch {
      status = "timer not saved: \(error.kindDescription)"
    }
  }

  // MARK: Records

  /// Opens the records beside the saves, indexes the folder for the picker, and records the
  /// score at the quit (a background task: the quit waits for it, inside the budget).
  private func openRecords() {
    #if Records
      do {
        let records = try StasisDemoRecords(saves: game.coordinator.store, application: app)
        self.records = records
        highScores = try HighScoreScreen(records: records)
        records.indexFolder()
        app.addObserver(for: .willTerminate) { [unowned self] _ in self.recordScore() }
      } catch {
        FileHandle.standardError.write(Data("stasis-demo: records: \(error)\n".utf8))
        status = "no records: \(error)"
        statusColor = (255, 120, 100)
      }
    #endif
  }

  private var highScoresOpen: Bool {
    #if Records
      highScores?.isOpen ?? false
    #else
      false
    #endif
  }

  private var hasPendingRecords: Bool {
    #if Records
      records?.hasPendingWrites ?? false
    #else
      false
    #endif
  }

  /// A level ended in the last step: its score goes into the table.
  private func noteLevelEnd() {
    let level = game.engine.state.level
    defer { lastStep = (level.levelsFinished, level.runFrame, level.index) }
    guard level.levelsFinished == lastStep.levelsFinished + 1, level.runFrame == lastStep.runFrame + 1 else { return }
    recordScore(level: lastStep.index)  // the level finished, not the one the step moved on to
  }

  private func recordScore(level: Int? = nil) {
    #if Records
      let state = game.engine.state
      records?.recordScore(
        points: state.score.points, level: level ?? state.level.index, slot: game.coordinator.slot)
    #endif
  }

  private func drawOverlay(_ text: String, width: Float, height: Float) {
    SDL_SetRenderDrawColor(renderer, 0, 0, 0, 140)
    var all = SDL_FRect(x: 0, y: 0, w: width, h: height)
    SDL_RenderFillRectF(renderer, &all)
    font.draw(text, x: (width - font.width(of: text, scale: 3)) / 2, y: height / 2 - 30, on: renderer, scale: 3)
  }
}

/// `--replay FILE` in the window: the replay's steps at 60 a second, from its start (or from
/// `--seek TICK`). ← and → scrub 5 s back or on (from the keyframe at or before the tick: at most
/// a keyframe interval of steps, taken at once), Home goes back to the start, P or Space pauses.
/// What it does goes to the trace (`--trace`), one line each.
@MainActor
final class WindowPlayback {
  /// How far ← and → go: 5 s of game time.
  static let seekTicks: Int64 = 300

  let replay: Replay<GameState, ReplayInput>
  /// The state the playback starts from (the start, or the tick `--seek` named).
  private(set) var state: GameState
  /// The tick the engine is at.
  private(set) var tick: Int64
  var isPaused = false
  private var ended = false

  init(file: String, library: LevelLibrary, seek: Int64?) throws {
    replay = try Replay(
      try ReplayFile(contentsOf: file), codec: DemoSaveFormat.codec(levels: library), input: ReplayInput.self)
    let target = min(max(seek ?? replay.manifest.startTick, replay.manifest.startTick), replay.manifest.endTick)
    var engine = try Engine(library: library, level: 1, seed: 1)
    let (start, from, inputs) = try replay.seek(to: target)
    try engine.restore(start)
    for input in inputs { ReplayStepper.apply(input, to: &engine) }
    state = engine.state
    tick = from + Int64(inputs.count)
  }

  var startTick: Int64 { replay.manifest.startTick }
  var endTick: Int64 { replay.manifest.endTick }
  var isPlaying: Bool { !isPaused && tick < endTick }

  /// The trace's first line.
  var started: String {
    "replay: playing ticks \(tick) to \(endTick) (keyframes every \(replay.manifest.keyframeInterval))"
  }

  /// The HUD's line.
  var status: String {
    let state = tick >= endTick ? "ended" : isPaused ? "paused" : "playing"
    return "REPLAY \(state) \(tick)/\(endTick)  <- -> SEEK 5 S  P PAUSE"
  }

  /// The next step of the replay on `engine`; the trace's line when the replay ends.
  func step(_ engine: inout Engine) -> String? {
    guard isPlaying else { return nil }
    ReplayStepper.apply(replay.inputs[Int(tick - startTick)], to: &engine)
    tick += 1
    guard tick == endTick, !ended else { return nil }
    ended = true
    return "replay: ended at tick \(tick), frame \(engine.state.level.runFrame)"
  }

  /// Scrubs `ticks` back or on.
  func seek(by ticks: Int64, on engine: inout Engine) -> String {
    seek(to: tick + ticks, on: &engine)
  }

  /// Goes to `target` (within the replay), from the keyframe at or before it.
  func seek(to target: Int64, on engine: inout Engine) -> String {
    let target = min(max(target, startTick), endTick)
    do {
      let (start, from, inputs) = try replay.seek(to: target)
      try engine.restore(start)
      for input in inputs { ReplayStepper.apply(input, to: &engine) }
      engine.isPaused = false
      tick = target
      ended = tick == endTick
      return "replay: seek to tick \(target) (from the keyframe at \(from), \(inputs.count) steps): frame "
        + "\(engine.state.level.runFrame)"
    } catch {
      return "replay: cannot seek to tick \(target): \(error)"
    }
  }
}
