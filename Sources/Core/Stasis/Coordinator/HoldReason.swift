/// Why a ``SaveCoordinator`` holds the game: paused, its steps waiting, nothing saved into the
/// slot. The coordinator says so when the hold begins and again every
/// ``SaveCoordinator/holdNoticeInterval`` while it lasts (a ``SaveEvent/held(_:for:)`` event
/// and a notice log), so a loop that plays on regardless is never silent.
public enum HoldReason: Sendable, Equatable, CustomStringConvertible {
  /// A restore failed over saves that exist, or the player must choose between two builds'
  /// saves: held until the game answers with ``SaveCoordinator/resolveRestoreFailure(_:)``.
  /// (`indirect`: a ``SaveFileError`` of kind ``SaveFileError/Kind/held`` carries its hold.)
  indirect case restoreFailure(SaveFileError)
  /// The slot is catching up with the server (``SaveCoordinator/sync``), for at most
  /// ``SaveCoordinator/syncPatience``; the game plays on by itself after it.
  case catchingUp

  /// One line: what holds the game and what ends the hold.
  public var description: String {
    switch self {
    case .restoreFailure(let error): "until resolveRestoreFailure(_:) answers: \(error)"
    case .catchingUp: "while the slot catches up with the server"
    }
  }
}
