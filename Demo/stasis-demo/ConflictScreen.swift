import CStasisSDL2
import StasisSDL

/// A cloud conflict left to the player (`--conflict-policy manual`), as the dialog shows it:
/// each side in one line (device, the summary's level and score, play time) and the state's
/// fields that differ most. Plain text, so that the window knows nothing of the sync.
struct ConflictChoice: Equatable {
  /// Which conflict: the local generation and the server's revision.
  var id: String
  /// This device's save: `deck: level 2, score 1,200, 3 min`.
  var ours: String
  /// The server's head.
  var theirs: String
  /// The fields apart, ours first: `coins 14 against 9`.
  var fields: [String]
}

/// The "which save?" dialog: both sides and the fields that differ, O keeps this device's save,
/// T takes the cloud's, Esc decides later (the slot stays in conflict, the HUD says so).
@MainActor
final class ConflictScreen {
  let choice: ConflictChoice
  /// True once the player chose, while the sync settles it: the game stays paused (no autosave
  /// can land over the choice) and keys wait.
  var settling = false

  init(_ choice: ConflictChoice) { self.choice = choice }

  /// The player's answer.
  enum Answer: Equatable {
    case keepOurs, takeTheirs, later
  }

  /// What a key press chose; nil for any other key, and while settling (the dialog stays open).
  func answer(to key: SDL_KeyCode) -> Answer? {
    guard !settling else { return nil }
    switch key {
    case SDLK_o: return .keepOurs
    case SDLK_t: return .takeTheirs
    case SDLK_ESCAPE: return .later
    default: return nil
    }
  }

  func draw(font: BitmapFont, renderer: OpaquePointer, width: Float, height: Float) {
    drawScreenBackdrop(
      title: "WHICH SAVE?",
      keys: settling
        ? "settling with the server..."
        : "O keep this device's   T take the cloud's   Esc later (the other is kept either way)",
      font: font, renderer: renderer, width: width, height: height)
    let rows: [(label: String, text: String, color: (UInt8, UInt8, UInt8))] = [
      ("THIS DEVICE", choice.ours, (140, 230, 150)), ("THE CLOUD", choice.theirs, (250, 220, 120)),
    ]
    for (index, row) in rows.enumerated() {
      let y = 150 + Float(index) * 70
      SDL_SetRenderDrawColor(renderer, 40, 50, 80, 200)
      var box = SDL_FRect(x: 30, y: y - 10, w: width - 60, h: 56)
      SDL_RenderFillRectF(renderer, &box)
      font.draw(row.label, x: 50, y: y, on: renderer, color: (150, 150, 170))
      font.draw(row.text, x: 50, y: y + 20, on: renderer, scale: 1.5, color: row.color)
    }
    font.draw("WHAT DIFFERS", x: 50, y: 310, on: renderer, color: (150, 150, 170))
    let fields = choice.fields.isEmpty ? ["nothing in the state: only where and when they were saved"] : choice.fields
    for (index, field) in fields.enumerated() {
      font.draw(field, x: 50, y: 336 + Float(index) * 30, on: renderer, scale: 1.5)
    }
  }
}
