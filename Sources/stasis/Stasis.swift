import ArgumentParser
import Stasis

/// `stasis`: opens Stasis save files using only their own description.
@main
struct StasisCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "stasis",
    abstract: "Inspect, verify, dump and diff Stasis save files without the game's code."
  )
}
