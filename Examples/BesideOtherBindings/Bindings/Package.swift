// swift-tools-version: 6.1
// Another package's bindings, named as SwiftSDL2 and other C wrappers name theirs.
import PackageDescription

let cModules = ["CSDL2Image", "CZstd", "CXXHash", "CLibNotify"]
let package = Package(
  name: "Bindings",
  products: [
    // A system library is a product of its own, as SwiftSDL2's `CSDL2` is.
    .library(name: "CSDL2", targets: ["CSDL2"]),
    .library(name: "OtherBindings", targets: cModules + ["TestSupport", "FuzzDriver", "DemoGame"]),
  ],
  targets: [
    // SDL2 from the system, as SwiftSDL2 declares it.
    .systemLibrary(name: "CSDL2", pkgConfig: "sdl2", providers: [.apt(["libsdl2-dev"])]),
    .target(name: "TestSupport"),
    .target(name: "FuzzDriver"),
    .target(name: "DemoGame"),
  ] + cModules.map { .target(name: $0) }
)
