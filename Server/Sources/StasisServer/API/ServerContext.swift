import Hummingbird

/// The request context: the player the bearer token names, once the auth middleware ran.
package struct ServerContext: RequestContext {
  package var coreContext: CoreRequestContextStorage
  /// The authenticated player.
  package var player: Player?
  /// The authenticated staff member (`/v1/admin/…` and the console).
  package var staff: StaffMember?
  /// The signed-in console session's id and session (the console).
  package var session: (id: String, session: StaffSession)?
  /// The client's address: what signing in is throttled by.
  package var remoteAddress: String

  package init(source: Source) {
    coreContext = .init(source: source)
    player = nil
    staff = nil
    session = nil
    remoteAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
  }

  /// The authenticated player, as Hummingbird's `requireIdentity()` gives an identity: a
  /// route behind the bearer-token middleware always has one, and one reached without it is
  /// answered `401`, never a crash.
  package func requirePlayer() throws -> Player {
    guard let player else { throw APIError(.unauthorized, "this route needs a player's bearer token") }
    return player
  }

  /// The authenticated staff member: a route behind the staff-key middleware always has one,
  /// and one reached without it is answered `401`, never a crash.
  package func requireStaff() throws -> StaffMember {
    guard let staff else { throw APIError(.unauthorized, "this route needs a staff API key") }
    return staff
  }

  /// Uploads are streamed and bounded by the handler itself.
  package var maxUploadSize: Int { .max }
}
