// swift-tools-version: 6.1
// A game whose graph holds another package's C modules and targets under the names Stasis's
// once had (CSDL2, CSDL2Image, CZstd, CXXHash, CLibNotify) and common ones (TestSupport,
// FuzzDriver, DemoGame): SwiftPM refuses a graph where two packages declare one target name, so
// this builds only while every Stasis target carries the package's prefix. Its SDL binding is its
// own, as a SwiftSDL2 game's is, and StasisSDL maps that binding's events by SDL's raw numbers.
// It syncs (`traits: ["Cloud"]`: URLSession, no package), so zstd's module is in its graph too.
// scripts/test.sh resolves it (at most 6 packages), builds it and runs it.
import PackageDescription

let package = Package(
  name: "BesideOtherBindings",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "Stasis", path: "../..", traits: ["Cloud"]),
    .package(path: "Bindings"),
  ],
  targets: [
    .executableTarget(
      name: "BesideOtherBindings",
      dependencies: [
        .product(name: "Stasis", package: "Stasis"), .product(name: "StasisSDL", package: "Stasis"),
        .product(name: "StasisCloud", package: "Stasis"),
        .product(name: "CSDL2", package: "Bindings"), .product(name: "OtherBindings", package: "Bindings"),
      ])
  ]
)
