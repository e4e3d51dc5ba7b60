/// What a game gives the ``SaveCoordinator``: its state as a value, and a way to pause it.
///
/// Every requirement, with its default where it has one, is in one table in
/// <doc:GettingStarted#What-a-game-gives-the-coordinator>: ``SaveableGame/State``,
/// ``SaveableGame/snapshot()``, ``SaveableGame/restore(_:)``, ``SaveableGame/isPaused``, and
/// ``SaveableGame/summary(of:)`` (by default an empty ``SaveSummary``).
///
/// ```swift
/// @MainActor final class Tanks: SaveableGame {
///   var state = TanksState()
///   var isPaused = false
///   func snapshot() -> TanksState { state }
///   func restore(_ saved: TanksState) throws { state = saved }
/// }
/// ```
@MainActor
public protocol SaveableGame: AnyObject {
  /// The whole state: plain values, so a snapshot is a copy.
  associatedtype State: Codable & Sendable
  /// A copy of the state, taken on the main thread between steps.
  func snapshot() -> State
  /// Replaces the state with a loaded one (already decoded and validated).
  func restore(_ state: State) throws
  /// True while the simulation must not step (in the background, or paused by the player).
  var isPaused: Bool { get set }
  /// What the save's header shows in a slot picker: play time, progress and the game's own
  /// `Codable` summary (``SaveSummary/init(_:frame:playTime:progress:device:)``). The default
  /// is empty. When it throws, the save is still made, with an empty summary, and the error logged.
  func summary(of state: State) throws -> SaveSummary
}

extension SaveableGame {
  public func summary(of state: State) throws -> SaveSummary { SaveSummary() }
}
