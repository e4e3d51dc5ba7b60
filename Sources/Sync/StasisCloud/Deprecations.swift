import Logging
import Stasis

// What 0.10.0 renamed, kept for one minor version so that a game written against 0.9.0
// compiles with warnings that say what to write (removed in 0.11.0; CHANGELOG.md).

/// 0.9.0's coordinator-side sync, which is ``CloudSync`` itself now.
@available(*, deprecated, renamed: "CloudSync")
public typealias CloudSaveSync = CloudSync

/// 0.9.0's name for ``Conflict``.
@available(*, deprecated, renamed: "Conflict")
public typealias SyncConflict = Conflict

extension CloudSync {
  /// 0.9.0's `cloud.sync`: the sync is the object itself now (`cloud.onEvent { … }`).
  @available(*, deprecated, message: "CloudSaveSync and CloudSync are one type now: use the sync itself")
  public var sync: CloudSync { self }

  /// 0.9.0's initializer, whose credentials were labelled `server`.
  @available(*, deprecated, renamed: "init(coordinator:credentials:configuration:clock:transport:logger:)")
  @MainActor
  public convenience init<Game: SaveableGame>(
    coordinator: SaveCoordinator<Game>, server: CloudCredentials, configuration: CloudSyncConfiguration = .init(),
    clock: any MonotonicClock = SystemClock(), transport: any CloudTransport = HTTPCloudTransport(),
    logger: Logger = Logger(label: "stasis.cloud")
  ) {
    self.init(
      coordinator: coordinator, credentials: server, configuration: configuration, clock: clock, transport: transport,
      logger: logger)
  }
}

extension CloudClient {
  /// 0.9.0's name for ``credentials``.
  @available(*, deprecated, renamed: "credentials")
  public var server: CloudCredentials { credentials }

  /// 0.9.0's initializer, whose credentials were labelled `server`.
  @available(*, deprecated, renamed: "init(credentials:)")
  public init(server: CloudCredentials) { self.init(credentials: server) }

  /// 0.9.0's initializer, whose credentials were labelled `server`.
  @available(*, deprecated, renamed: "init(credentials:transport:)")
  public init(server: CloudCredentials, transport: any CloudTransport) {
    self.init(credentials: server, transport: transport)
  }
}

/// 0.9.0's login file type, the `stasis` CLI's own now; only its token reader was for games.
@available(*, deprecated, message: "use CloudCredentials.token(fromFile:)")
public enum CloudLogin {
  /// 0.9.0's token reader.
  @available(*, deprecated, renamed: "CloudCredentials.token(fromFile:)")
  public static func token(fromFile path: String) throws -> String { try CloudCredentials.token(fromFile: path) }
}
