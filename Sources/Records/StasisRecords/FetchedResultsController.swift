#if Records
  import Dispatch
  import Stasis

  /// An observed ``RecordFetchRequest``: its records in sections, kept current as the database
  /// changes, with each change delivered as ordered ``RecordChanges`` on the main actor.
  /// Modelled on Core Data's `NSFetchedResultsController`, on GRDB's `ValueObservation`.
  ///
  /// Records are matched by primary key between two results: a key that appears is inserted,
  /// one that goes is removed, one whose position changed is moved, and one whose columns
  /// changed in place is updated.
  ///
  /// With an application (``RecordStore/application``), changes are delivered inside its
  /// `update()`, on the game's thread; while it is in the background they are held, and
  /// delivered as one change set on `willEnterForeground`, before the game's first frame.
  ///
  /// ```swift
  /// let controller = FetchedResultsController(
  ///   store: store, request: RecordFetchRequest(HighScore.self, sortedBy: [Column("points").desc], limit: 10))
  /// controller.onChange = { changes in table.apply(changes) }
  /// try controller.start()  // the current records, at once; no onChange for them
  /// ```
  @MainActor
  public final class FetchedResultsController<Record: FetchableRecord & TableRecord & Sendable> {
    /// What the controller shows.
    public let request: RecordFetchRequest<Record>
    /// The store it observes.
    public let store: RecordStore
    /// The results in sections, as of the last delivery.
    public private(set) var sections: [RecordSection<Record>] = []
    /// Called on the main actor with each non-empty change, after ``sections`` is updated.
    public var onChange: (@MainActor (RecordChanges) -> Void)?
    /// Called on the main actor when the observation fails; it then stops.
    public var onError: (@MainActor (any Error) -> Void)?
    /// True while changes observed in the background wait for the return to the foreground.
    public var hasHeldChanges: Bool { held != nil }

    private var awaitingFirst = true
    private var delivered: [FetchedRecord<Record>] = []
    private var held: [FetchedRecord<Record>]?
    private var cancellable: AnyDatabaseCancellable?
    private var foregroundObserver: ObserverToken?
    private var observed: [ResultsRow] = []  // the newest results, delivered or held
    private var waiters: [(results: [ResultsRow], continuation: CheckedContinuation<Void, Never>)] = []

    private typealias ResultsRow = DiffedRow<[DatabaseValue], [DatabaseValue]>

    /// Creates a controller; ``start()`` fetches and begins observing.
    public init(store: RecordStore, request: RecordFetchRequest<Record>) {
      self.store = store
      self.request = request
    }

    /// All the records, section after section.
    public var records: [Record] { sections.flatMap(\.records) }

    /// The record at an index path of the last delivery.
    public subscript(indexPath: RecordIndexPath) -> Record {
      sections[indexPath.section].records[indexPath.row]
    }

    /// Fetches the current records (``sections`` is set when this returns, with no
    /// ``onChange`` for them) and observes the request from then on. Calling it again restarts.
    ///
    /// - Throws: what the first fetch threw (a `DatabaseError`, a record that does not decode).
    public func start() throws {
      stop()
      let first = FirstFetch()
      let request = self.request
      awaitingFirst = true
      let observation = ValueObservation.tracking { db in try request.fetch(db) }
      cancellable = observation.start(
        in: store.reader, scheduling: MainActorScheduler(application: store.application),
        onError: { [weak self] error in
          if first.isRunning {
            first.error = error
          } else {
            self?.onError?(error)
          }
        },
        onChange: { [weak self] results in self?.observe(results) })
      first.isRunning = false
      if let error = first.error {
        stop()
        throw error
      }
      if let application = store.application {
        foregroundObserver = application.addObserver(for: .willEnterForeground) { [weak self] _ in
          self?.releaseHeldChanges()
        }
      }
    }

    /// Stops observing; ``sections`` keeps the last delivery. Held changes are dropped.
    public func stop() {
      cancellable?.cancel()
      cancellable = nil
      held = nil
      if let foregroundObserver { store.application?.removeObserver(foregroundObserver) }
      foregroundObserver = nil
    }

    /// Returns once the observation has produced (delivered, or held in the background) the
    /// results the database holds now: a test awaits a write, then this, instead of sleeping.
    /// Counting notifications would not do: GRDB may notify a value it fetched before the write.
    package func waitForCurrentResults() async throws {
      let request = self.request
      let now = try await store.read { db in try request.fetch(db).map(\.row) }
      if let application = store.application {
        // With an application, changes reach the controller at its update(): run what is handed
        // over (and only that) until they have come, or nothing more comes for 30 s.
        while observed != now, application.waitForDeliveries(timeout: .seconds(30)) {
          application.runPendingDeliveries()
        }
        return
      }
      guard observed != now else { return }
      await withCheckedContinuation { waiters.append((now, $0)) }
    }

    isolated deinit {
      if let foregroundObserver { store.application?.removeObserver(foregroundObserver) }
    }

    // MARK: Private

    /// GRDB's `.immediate`, minus its `Thread.isMainThread` check: the first value at once, the
    /// rest handed to the game's thread. With an application, through its deliveries: a change
    /// reaches the game at its next `update()`, however its loop holds the thread. Without one,
    /// on the main queue.
    private struct MainActorScheduler: ValueObservationMainActorScheduler {
      let application: Application?

      func immediateInitialValue() -> Bool { true }
      func scheduleOnMainActor(_ action: @escaping @MainActor () -> Void) {
        guard let application else { return DispatchQueue.main.async(execute: action) }
        // GRDB's action is not marked Sendable, but it is made to be sent to the main actor,
        // and it runs there once.
        nonisolated(unsafe) let action = action
        application.deliverOnUpdate { action() }
      }
    }

    /// What the first, synchronous fetch of ``start()`` said.
    @MainActor private final class FirstFetch {
      var isRunning = true
      var error: (any Error)?
    }

    private func observe(_ results: [FetchedRecord<Record>]) {
      if awaitingFirst {
        awaitingFirst = false
        delivered = results
        sections = Self.sections(of: results)
      } else if let application = store.application, application.state.isInBackground {
        held = results
      } else {
        deliver(results)
      }
      observed = results.map(\.row)
      let ready = waiters.filter { $0.results == observed }
      waiters.removeAll { $0.results == observed }
      for waiter in ready { waiter.continuation.resume() }
    }

    private func releaseHeldChanges() {
      guard let results = held else { return }
      held = nil
      deliver(results)
    }

    private func deliver(_ results: [FetchedRecord<Record>]) {
      let changes = ResultsDiff.changes(from: delivered.map(\.row), to: results.map(\.row))
      delivered = results
      sections = Self.sections(of: results)
      if !changes.isEmpty { onChange?(changes) }
    }

    private static func sections(of results: [FetchedRecord<Record>]) -> [RecordSection<Record>] {
      let layout = ResultsDiff.Layout(results.map(\.row))
      var sections = layout.sections.map { RecordSection<Record>(name: $0, records: []) }
      for (index, result) in results.enumerated() {
        sections[layout.paths[index].section].records.append(result.record)
      }
      return sections
    }
  }
#endif
