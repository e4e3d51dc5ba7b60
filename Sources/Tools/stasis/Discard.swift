import ArgumentParser
import Stasis

/// `stasis discard`: the one way a kept generation — one this build could not read, or a cloud
/// conflict's loser — leaves a slot.
struct Discard: ParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Delete one generation of a slot for good, kept or not (the explicit discard).",
    discussion: """
      Example:
        stasis slots Saves                        # shows which generations are kept, and why
        stasis discard autosave 7 --saves Saves

      Stasis never prunes a generation it keeps: one a build could not read (a newer schema, a
      field it could not decode, another key, a failed validation) or a conflict's loser. This
      removes it, and takes it off the slot's kept list. The slot's only generation is refused.
      """
  )

  @Argument(help: "The slot.")
  var slot: String

  @Argument(help: "The generation to delete.")
  var generation: Int

  @Option(help: "The save folder.")
  var saves: String = "Saves"

  func run() throws {
    do {
      let slot = try SaveSlot(self.slot)
      try SaveStore(directory: saves).discard(generation: generation, slot: slot)
      Terminal.standardOutput.line("discarded generation \(generation) of slot '\(slot)'")
    } catch {
      throw fail(error)
    }
  }
}
