import Stasis

/// Counted, not guessed: how many times a path did its work. A test asserts these on the path it
/// drives — a return with nothing new decodes nothing, a conflict's merge decodes each file once
/// and reads nothing back, a game loop's frame never blocks — where a timing would only say it
/// was fast on that machine that day. Requests are the cloud client's own count
/// (`CloudClient.transferred.requests`, in `StasisCloud`).
///
/// ```swift
/// let before = WorkCounters(store: store, application: app)
/// app.enterForeground()        // the return: a catch-up
/// app.update()
/// let after = WorkCounters(store: store, application: app)
/// #expect(after.waitsOnGameThread == before.waitsOnGameThread)
/// #expect(after.decodes(since: before).values.allSatisfy { $0 <= 1 })
/// ```
public struct WorkCounters: Sendable, Equatable {
  /// Files decoded (bytes checked and read into a document), by file: a generation's path, or
  /// `r7` for a revision the cloud sync downloaded, or `SLOT (incoming)` for bytes a sync wrote
  /// without handing over their document.
  public var decodes: [String: Int]
  /// States made of documents by the game's codec (migrations, validation), by file: a
  /// generation's path, `rN` for a download the sync verified, `merged` for a merge it checked.
  public var stateDecodes: [String: Int]
  /// States given to the game (`SaveableGame.restore(_:)`) by the coordinator.
  public var restores: Int
  /// Written files copied again, in one piece, for their upload (a save whose sync asked for
  /// its file after the encoding began): 0 when a background save with cloud copies its bytes once.
  public var uploadCopies: Int
  /// Save files read whole from disk, by path (`SaveStore.readBytes(at:)`: a load, a write's
  /// check of the slot's newest generation, a tool's read).
  public var reads: [String: Int]
  /// Generations the coordinator read back from disk after a sync wrote them (a restore that
  /// did not come from memory).
  public var readBacks: Int
  /// Blocking waits on the game's thread: each call of an explicit wait made while there was
  /// something to wait for (`Application.waitForBackgroundWork()` during a background episode,
  /// `waitForDeliveries(timeout:)` with nothing delivered yet, `SaveCoordinator.waitForCatchUp()`
  /// during a catch-up, `waitForSaves()` with a save in flight). Nothing else in the library
  /// waits there.
  public var waitsOnGameThread: Int

  /// The counts of `store` and `application` now.
  @MainActor
  public init(store: SaveStore, application: Application? = nil) {
    var decodes: [String: Int] = [:]
    var stateDecodes: [String: Int] = [:]
    var reads: [String: Int] = [:]
    var (readBacks, restores, uploadCopies) = (0, 0, 0)
    for (key, count) in store.counts.all {
      if key == OperationCounts.readBacks {
        readBacks = count
      } else if key == OperationCounts.restores {
        restores = count
      } else if key == OperationCounts.uploadCopies {
        uploadCopies = count
      } else if key.hasPrefix("state ") {
        stateDecodes[String(key.dropFirst("state ".count))] = count
      } else if key.hasPrefix("decode ") {
        decodes[String(key.dropFirst("decode ".count))] = count
      } else if key.hasPrefix("read ") {
        reads[String(key.dropFirst("read ".count))] = count
      }
    }
    self.decodes = decodes
    self.stateDecodes = stateDecodes
    self.restores = restores
    self.uploadCopies = uploadCopies
    self.reads = reads
    self.readBacks = readBacks
    waitsOnGameThread = application?.counts[OperationCounts.gameThreadWaits] ?? 0
  }

  /// The decodes made since `earlier`, by file (files not decoded since are left out).
  public func decodes(since earlier: WorkCounters) -> [String: Int] {
    Self.since(decodes, earlier.decodes)
  }

  /// The states decoded since `earlier`, by file (files not decoded since are left out).
  public func stateDecodes(since earlier: WorkCounters) -> [String: Int] {
    Self.since(stateDecodes, earlier.stateDecodes)
  }

  /// The whole-file reads made since `earlier`, by path (paths not read since are left out).
  public func reads(since earlier: WorkCounters) -> [String: Int] {
    Self.since(reads, earlier.reads)
  }

  private static func since(_ now: [String: Int], _ earlier: [String: Int]) -> [String: Int] {
    var since: [String: Int] = [:]
    for (file, count) in now where count > earlier[file, default: 0] {
      since[file] = count - earlier[file, default: 0]
    }
    return since
  }
}
