import Logging
@_spi(Simulation) import Stasis
@_spi(Simulation) import StasisCloud
import StasisServer

// The simulation's one seam: the only file of this module that the `SimulationSeams` trait
// changes. Each planted bug is one rule varied through the seams the libraries and the server
// compile under the trait (each library's in one file too: `StoreRules.swift`,
// `SyncRules.swift`, `StorageSeams.swift`). Nothing outside the simulation names a bug; the
// libraries only know which rule a switch varies. Without the trait, the devices and the
// server run every rule as it ships, and nothing can be planted.

extension Simulation {
  /// Whether this build can plant bugs: only under the `SimulationSeams` trait (`swift build
  /// --traits SimulationSeams`, as `scripts/test.sh` builds `Server/`). Without it the libraries
  /// hold no switch to vary their rules by, and `stasis-sim --plant` says so.
  public nonisolated static var canPlant: Bool {
    #if SimulationSeams
      true
    #else
      false
    #endif
  }
}

// The catalogue's one mapping: each bug is one rule varied through the seams the libraries and
// the server compile under the `SimulationSeams` trait. Nothing outside the simulation names a
// bug; the libraries only know which rule a switch varies.
#if SimulationSeams
  extension PlantedBug? {
    /// The store's rules in a run planting this bug (the store's own for nil).
    var storeSeams: SaveStore.Seams {
      var seams = SaveStore.Seams()
      switch self {
      case .generationAtLockTime: seams.writesInSnapshotOrder = false
      case .pruneUnreadable: seams.prunesUnreadable = true
      case .keepNothingBeforeWriting: seams.keepsBeforeWriting = false
      case .sameStateTwice: seams.comparesWithNewestFile = false
      case .unflushedSettingsAndTimers: seams.flushesFolderFiles = false
      default: break
      }
      return seams
    }

    /// The server storage rules in a run planting this bug, on either backend (its own for nil).
    var serverSeams: StorageSeams {
      var seams = StorageSeams()
      switch self {
      case .dropAcknowledgedUpload: seams.prunesAllButOne = true
      case .collectionIgnoresChains: seams.followsChains = false
      case .settingsOverwriteNewer: seams.settingsUpsertIsConditional = false
      default: break
      }
      return seams
    }

    /// Varies a device's sync (and its merges) for a run planting this bug.
    func vary(_ configuration: inout CloudSyncConfiguration) {
      switch self {
      case .newestOnlyAfterLostAnswer: configuration.seams.recognisesOnlyNewest = true
      case .mergeAcrossUnrelatedHistories: configuration.seams.mergesAcrossUnrelatedHistories = true
      case .mergeSectionBySection: configuration.seams.mergesRestValueByValue = true
      default: break
      }
    }
  }
#endif

extension PlantedBug? {
  /// A device's store over `disk`, its rules varied for this bug where the build can.
  func store(
    directory: String, generationsToKeep: Int, signing: SigningPolicy, disk: any FileSystem,
    wallClock: any WallClock, device: String, logger: Logger
  ) -> SaveStore {
    #if SimulationSeams
      SaveStore(
        directory: directory, generationsToKeep: generationsToKeep, signing: signing, fileSystem: disk,
        wallClock: wallClock, device: device, logger: logger, seams: storeSeams)
    #else
      SaveStore(
        directory: directory, generationsToKeep: generationsToKeep, signing: signing, fileSystem: disk,
        wallClock: wallClock, device: device, logger: logger)
    #endif
  }

  /// Varies a device's sync for this bug where the build can; nothing without the trait.
  func varySync(_ configuration: inout CloudSyncConfiguration) {
    #if SimulationSeams
      vary(&configuration)
    #endif
  }

  /// The in-process server's SQLite backend, its rules varied for this bug where the build can.
  func sqlite(path: String, smallestDelta: Int) throws -> SQLiteBackend {
    #if SimulationSeams
      try SQLiteBackend(path: path, seams: serverSeams, smallestDelta: smallestDelta)
    #else
      try SQLiteBackend(path: path, smallestDelta: smallestDelta)
    #endif
  }

  /// The in-process server's PostgreSQL backend, its rules varied for this bug where the build can.
  func postgres(url: String, connections: Int, smallestDelta: Int, logger: Logger) throws -> PostgresBackend {
    #if SimulationSeams
      try PostgresBackend(
        url: url, connections: connections, smallestDelta: smallestDelta, seams: serverSeams, logger: logger)
    #else
      try PostgresBackend(url: url, connections: connections, smallestDelta: smallestDelta, logger: logger)
    #endif
  }
}
