// The scripted platform: what the window's events do in a real game (StasisSDL turns SDL's
// into these calls). Headless, the example sends itself away and back, and quits with
// Stasis's own `Application.quit()`.
import Stasis

extension Application {
  /// The game goes to the background and comes back once the save there is durable.
  @MainActor func roundTripToBackground() {
    enterBackground()
    while hasBackgroundEpisode { waitForBackgroundWork() }
    enterForeground()
  }
}
