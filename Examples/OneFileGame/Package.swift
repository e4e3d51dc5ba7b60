// swift-tools-version: 6.1
// A game on Stasis alone, as docs/PERFORMANCE.md's "What a game pays to build" measures it:
// `traits: []` turns off the package's `Cloud` trait, so none of StasisCloud's HTTP client is
// resolved or built.
// scripts/test.sh resolves it (at most 4 packages), builds it and runs it.
import PackageDescription

let package = Package(
  name: "OneFileGame",
  platforms: [.macOS(.v15)],
  dependencies: [.package(name: "Stasis", path: "../..", traits: [])],
  targets: [
    .executableTarget(name: "OneFileGame", dependencies: [.product(name: "Stasis", package: "Stasis")])
  ]
)
