import Hummingbird

/// The request context: the player the bearer token names, once the auth middleware ran.
public struct ServerContext: RequestContext {
  public var coreContext: CoreRequestContextStorage
  /// The authenticated player.
  public var player: Player?

  public init(source: Source) {
    coreContext = .init(source: source)
    player = nil
  }

  /// Uploads are streamed and bounded by the handler itself.
  public var maxUploadSize: Int { .max }
}
