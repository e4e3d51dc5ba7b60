// swift-tools-version: 6.1
// 6.1 for `traits:`; tools 6 and later build in Swift 6 mode unless the package says otherwise.
import PackageDescription

let package = Package(
  name: "SwiftFiveGame",
  platforms: [.macOS(.v15)],
  dependencies: [
    // Your checkout of Stasis, or .package(url: "https://…/stasis.git", from: "…", traits: [])
    .package(name: "Stasis", path: "../..", traits: [])  // traits: ["Cloud"] for cloud saves
  ],
  targets: [
    .executableTarget(
      name: "SwiftFiveGame",
      dependencies: [
        .product(name: "Stasis", package: "Stasis"),
        .product(name: "StasisSDL", package: "Stasis"),  // SDL's events as lifecycle transitions
      ])
  ],
  swiftLanguageModes: [.v5]  // the game's own code stays Swift 5; Stasis keeps its own mode
)

// Examples/SwiftFiveGame: a game in Swift 5 language mode, as Getting started shows it (its
// manifest, and main.swift's loop inside the main actor), with its window events reaching
// StasisSDL by SDL's raw numbers as a game on another SDL binding (SwiftSDL2) passes them.
// Built in Swift 5 mode and run headless: `swift build --package-path Examples/SwiftFiveGame`.
