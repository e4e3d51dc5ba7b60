// A game on its own SDL binding (here `CSDL2`, as SwiftSDL2 names it) beside Stasis and
// StasisSDL: the binding's events reach the lifecycle through SDL's raw numbers.
import CLibNotify
import CSDL2
import CSDL2Image
import CXXHash
import CZstd
import DemoGame
import Foundation
import FuzzDriver
import Stasis
import StasisCloud
import StasisSDL
import TestSupport

// MARK: - Initialization

setenv("SDL_VIDEODRIVER", "dummy", 1)
guard SDL_Init(UInt32(SDL_INIT_VIDEO | SDL_INIT_EVENTS)) == 0 else {
  FileHandle.standardError.write(Data("SDL_Init: \(String(cString: SDL_GetError()))\n".utf8))
  exit(1)
}
let linked = other_csdl2image() + other_czstd() + other_cxxhash() + other_clibnotify()
print("other bindings linked: \(linked) C modules, \([testSupportName, fuzzDriverName, demoGameName].count) targets")

// MARK: - The loop, one pass: the binding's queue, mapped by number

var focusLost = SDL_Event()
focusLost.type = SDL_WINDOWEVENT.rawValue
focusLost.window.event = UInt8(SDL_WINDOWEVENT_FOCUS_LOST.rawValue)
var quit = SDL_Event()
quit.type = SDL_QUIT.rawValue
SDL_PushEvent(&focusLost)
SDL_PushEvent(&quit)
var event = SDL_Event()
while SDL_PollEvent(&event) != 0 {
  if let transition = lifecycleTransitionFromQueue(
    sdlEventType: event.type, windowEvent: event.window.event, data1: event.window.data1, data2: event.window.data2)
  {
    print("transition: \(transition)")
  }
}

// MARK: - Cloud sync over URLSession: a server that is not there is offline, never sent

let nobody = CloudCredentials(url: "http://127.0.0.1:9", token: "t", timeout: .seconds(5))
do {
  _ = try await CloudClient(credentials: nobody).slots()
  print("cloud: a closed port answered")
  exit(1)
} catch {
  print("cloud: \(error.kind), never sent: \(error.neverSent)")
}

// MARK: - De-initialization

SDL_Quit()
