// The load menu GettingStarted shows: every slot's newest save, from its header alone.
import Stasis

/// Prints a line per slot with the tank game's own summary, without decoding any state.
func printLoadMenu(store: SaveStore) throws {
  for slot in try store.listSlots() {
    guard let header = slot.generations.first?.header else { continue }
    let shown = try header.summary.details(as: TanksSummary.self)
    print(slot.name, shown.health, shown.shells, header.summary.playTime, header.summary.progress ?? 0)
  }
}
