// swift-tools-version: 6.1
// Stasis: a game-state save/restore toolkit (docs/ARCHITECTURE.md draws its targets). The save
// server, its load tool and the simulation are a package of their own, in Server/.
import PackageDescription

let package = Package(
  name: "Stasis",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "Stasis", targets: ["Stasis"]),
    .library(name: "StasisTesting", targets: ["StasisTesting"]),
    .library(name: "StasisCloud", targets: ["StasisCloud"]),
    .library(name: "StasisMerge", targets: ["StasisMerge"]),
    .library(name: "StasisDelta", targets: ["StasisDelta"]),
    .library(name: "StasisInspect", targets: ["StasisInspect"]),
    .library(name: "StasisSDL", targets: ["StasisSDL"]),
    .library(name: "StasisNotify", targets: ["StasisNotify"]),
    .library(name: "StasisRecords", targets: ["StasisRecords"]),
    .library(name: "StasisReplay", targets: ["StasisReplay"]),
    // The demo game's engine, for Server/'s simulation, load tool and tests (built there from
    // its own folder, Demo/StasisDemoGame, once). It is the demo, not the toolkit: no game needs it.
    .library(name: "StasisDemoGame", targets: ["StasisDemoGame"]),
    .executable(name: "stasis-demo", targets: ["stasis-demo"]),
    .executable(name: "stasis", targets: ["stasis"]),
    .executable(name: "stasis-bench", targets: ["stasis-bench"]),
    .executable(name: "stasis-example-tanks", targets: ["stasis-example-tanks"]),
    .executable(name: "stasis-example-ecs", targets: ["stasis-example-ecs"]),
  ],
  // `Cloud` (on by default) is StasisCloud: sync over Foundation's URLSession, which the
  // toolchain ships (libcurl on Linux), so it brings no package. `AsyncHTTPClient` (on by
  // default) adds `HTTPCloudTransport`, on AsyncHTTPClient and SwiftNIO. A game that does not sync
  // turns both off with `.package(url: …, from: …, traits: [])` and resolves four packages;
  // `traits: ["Cloud"]` syncs and resolves the same four: SwiftPM does not fetch a dependency that
  // only a disabled trait uses.
  // `Records` (on by default) is StasisRecords's SQLite store, GRDB. A game that wants the store
  // but no sync says `traits: ["Records"]`. Without `Records`, StasisRecords has no store (only
  // its change values) and `stasis records` says it was built without it.
  traits: [
    .trait(name: "Cloud", description: "StasisCloud: cloud sync over Foundation's URLSession (no package)."),
    .trait(
      name: "AsyncHTTPClient", description: "StasisCloud's HTTPCloudTransport: AsyncHTTPClient and SwiftNIO.",
      enabledTraits: ["Cloud"]),
    .trait(name: "Records", description: "StasisRecords's structured store on SQLite: GRDB."),
    // Only the simulation's build (Server/, `--traits SimulationSeams`) turns this on: it
    // compiles the switches by which stasis-sim varies the library's rules, to plant the bugs of
    // its own catalogue and prove its checker finds them. Never in a game.
    .trait(
      name: "SimulationSeams",
      description: "For stasis-sim only: the rules its honesty check varies. Never on in a game or server."),
    .default(enabledTraits: ["Cloud", "AsyncHTTPClient", "Records"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
    // StasisCloud's HTTPCloudTransport, used only under the `AsyncHTTPClient` trait.
    .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
    // StasisRecords's SQLite, used only under the `Records` trait.
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
  ],
  targets: [
    // The toolkit: lifecycle, background budget, save format, store. No SDL, no game.
    .target(
      name: "Stasis",
      dependencies: [
        "CStasisChecksum",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Crypto", package: "swift-crypto"),
      ]
    ),
    // The three-way merge of two saves against their base, by the game's declarations, and the
    // conflict policies: no network, so a game (the demo) can declare its merge without HTTP.
    .target(name: "StasisMerge", dependencies: ["Stasis"]),
    // A save as its difference from another (delta uploads, downloads and the server's storage),
    // with zstd from Debian: only what syncs links it.
    .target(name: "StasisDelta", dependencies: ["Stasis", "CStasisZstd"]),
    // The `stasis` CLI's dump and diff renderers, for the save server's console too: a save's
    // tree as JSON, two saves' differences as text or JSON. Arrays align by `MergeRules`.
    .target(name: "StasisInspect", dependencies: ["Stasis", "StasisMerge"]),
    // Replays and desync bundles: inputs, keyframes (as deltas) and a digest timeline in one
    // Stasis file; the verifier that narrows a divergence. Its digest is XXH3 (Debian's xxhash):
    // only a game that records replays links it.
    .target(name: "StasisReplay", dependencies: ["Stasis", "StasisDelta", "StasisMerge", "CStasisXXHash"]),
    // xxHash from the system, found through pkg-config.
    .systemLibrary(name: "CStasisXXHash", pkgConfig: "libxxhash", providers: [.apt(["libxxhash-dev"])]),
    // zstd from the system, found through pkg-config.
    .systemLibrary(name: "CStasisZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
    // Cloud saves: sync records, the upload queue, fetch and conflicts, over URLSession (and
    // AsyncHTTPClient under its trait).
    // Kept out of Stasis, which knows no network; it re-exports StasisMerge.
    .target(
      name: "StasisCloud",
      dependencies: [
        "Stasis", "StasisMerge", "StasisDelta",
        .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
        .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
        .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
        .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
        .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["AsyncHTTPClient"])),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // The structured store (recipe 16): record types with migrations, fetch requests, and
    // fetched-results controllers that deliver ordered changes on the main actor. On GRDB,
    // only under the `Records` trait; without it the module is empty.
    .target(
      name: "StasisRecords",
      dependencies: [
        "Stasis",
        .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Records"])),
      ]
    ),
    // Test doubles for a game's own save-path tests: fault-injecting and recording file
    // systems, a manual clock, the process-killer hook. Not part of the shipping library.
    .target(name: "StasisTesting", dependencies: ["Stasis", .product(name: "Logging", package: "swift-log")]),
    // CRC32C at memory speed (the CPU's CRC instruction); Swift has none built in.
    .target(name: "CStasisChecksum"),
    // SDL2 from the system, found through pkg-config.
    .systemLibrary(
      name: "CStasisSDL2",
      pkgConfig: "sdl2",
      providers: [.apt(["libsdl2-dev"])]
    ),
    // SDL2_image from the system, for PNG.
    .systemLibrary(
      name: "CStasisSDL2Image",
      pkgConfig: "SDL2_image",
      providers: [.apt(["libsdl2-image-dev"])]
    ),
    // SDL events to lifecycle transitions; window, renderer and frame-capture helpers.
    .target(
      name: "StasisSDL",
      dependencies: ["CStasisSDL2", "CStasisSDL2Image", "Stasis", .product(name: "Logging", package: "swift-log")]
    ),
    // libnotify from the system (freedesktop notifications over D-Bus), found through pkg-config.
    .systemLibrary(name: "CStasisLibNotify", pkgConfig: "libnotify", providers: [.apt(["libnotify-dev"])]),
    // Timers' desktop notifications (15.4): a `TimerNotifier` over libnotify. Its own product, so a
    // game on Stasis alone builds without libnotify-dev.
    .target(name: "StasisNotify", dependencies: ["Stasis", "CStasisLibNotify"]),
    // The tiny deterministic game.
    .target(
      name: "StasisDemoGame",
      dependencies: ["Stasis", "StasisMerge", "StasisReplay", .product(name: "Logging", package: "swift-log")]
    ),
    // The demo's high-score table and slot index, on StasisRecords (apart from StasisDemoGame, which
    // the server's package builds too, without GRDB). Empty without the `Records` trait.
    .target(name: "StasisDemoRecords", dependencies: ["StasisDemoGame", "Stasis", "StasisRecords"]),
    .executableTarget(
      name: "stasis-demo",
      dependencies: [
        "Stasis", "StasisSDL", "StasisDemoGame", "StasisDemoRecords", "StasisMerge", "StasisNotify", "CStasisSDL2",
        "CStasisSDL2Image",
        // `--cloud`: without the `Cloud` trait the demo builds, and plays, without it.
        .target(name: "StasisCloud", condition: .when(traits: ["Cloud"])),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // The save-file CLI needs only Stasis, its renderers (StasisInspect), StasisCloud for
    // `stasis cloud` and StasisRecords for `stasis records`: no SDL, no demo code.
    .executableTarget(
      name: "stasis",
      dependencies: [
        "Stasis", "StasisInspect", "StasisMerge", "StasisCloud", "StasisRecords", "StasisReplay",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    // The save path against memcpy, write+fsync and Foundation's coders (run in release).
    .executableTarget(
      name: "stasis-bench",
      dependencies: [
        "Stasis", "StasisDemoGame", "StasisSDL", "StasisTesting", "StasisReplay", "StasisTinyECS",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    // Examples/: a second game adopting Stasis through the save coordinator (the README's guide).
    .executableTarget(name: "stasis-example-tanks", dependencies: ["Stasis"], path: "Examples/Tanks"),
    // Examples/: an asteroids game on TinyECS, its world saved by entity (the guide "Saving an entity world").
    .executableTarget(
      name: "stasis-example-ecs",
      dependencies: [
        "Stasis", "StasisReplay", "StasisTinyECS", .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      path: "Examples/ECSGame"),
    // A small roguelike written against 0.9.0's API, unchanged: it must build with deprecation
    // warnings only (scripts/compat.sh) and run (CompatGameTests). Not a product.
    .executableTarget(name: "stasis-compat", dependencies: ["Stasis", "StasisCloud"], path: "Examples/Compat"),
    // The README's and the DocC articles' Swift blocks, compiled (ReadmeTests and GuideTests check every block is here).
    // FirebladeECS's names and signatures, for the guide's FirebladeECS adapter (Saving an entity world).
    .target(name: "StasisFirebladeStandIn", path: "Examples/FirebladeStandIn"),
    .target(
      name: "StasisReadmeSnippets",
      dependencies: [
        "Stasis", "StasisCloud", "StasisTesting", "StasisNotify", "StasisRecords", "StasisReplay",
        "StasisFirebladeStandIn",
        .product(name: "Logging", package: "swift-log"),
        // Cloud saves' snippet of an HTTPCloudTransport that trusts a studio's own root.
        .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
        .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["AsyncHTTPClient"])),
      ],
      path: "Examples/Snippets"),
    // The decoder under libFuzzer (scripts/fuzz.sh); without -DFUZZING it replays inputs.
    .executableTarget(name: "stasis-fuzz", dependencies: ["Stasis", "StasisFuzzDriver"]),
    // Structure-aware: value edits to real demo saves' trees, loaded, restored, stepped, drawn.
    .executableTarget(name: "stasis-fuzz-state", dependencies: ["Stasis", "StasisDemoGame", "StasisFuzzDriver"]),
    // The libFuzzer hand-over and the replay mode both fuzz targets share.
    .target(name: "StasisFuzzDriver"),
    // A small ECS of the shape games use (class components, swap-remove storage, reused ids,
    // families) that knows nothing of Stasis: the tests and stasis-example-ecs adopt Stasis on it.
    .target(name: "StasisTinyECS", path: "Tests/TinyECS"),
    .testTarget(
      name: "StasisTests",
      dependencies: ["Stasis", "StasisTesting", "StasisTinyECS", .product(name: "Logging", package: "swift-log")],
      exclude: ["Fixtures"]
    ),
    .testTarget(name: "StasisMergeTests", dependencies: ["Stasis", "StasisMerge"]),
    // The structured store headless: changes delivered for scripted writes, background
    // coalescing on a driven Application, migrations, and a write cut by the budget.
    .testTarget(
      name: "StasisRecordsTests",
      dependencies: [
        "Stasis", "StasisRecords", "StasisTesting",
        .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Records"])),
      ]),
    .testTarget(name: "StasisDeltaTests", dependencies: ["Stasis", "StasisDelta", "StasisTesting"]),
    // Replays recorded, sought and verified; a planted drift narrowed to its tick; the sync test.
    .testTarget(
      name: "StasisReplayTests",
      dependencies: ["Stasis", "StasisReplay", "StasisInspect", "StasisTesting", "StasisDelta"]),
    // StasisCloud's HTTP transport against loopback listeners (the sync against a real server
    // is tested in Server/).
    .testTarget(
      name: "StasisCloudTests",
      dependencies: [
        "Stasis", "StasisCloud", "StasisTesting",
        .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
      ]),
    // What the test targets share: the repository's root, built products, processes.
    .target(name: "StasisTestSupport", dependencies: ["StasisTesting"], path: "Tests/Support"),
    .testTarget(
      name: "DemoGameTests",
      dependencies: [
        "StasisDemoGame", "StasisDemoRecords", "Stasis", "StasisMerge", "StasisReplay", "StasisTesting",
        "StasisTestSupport",
      ]),
    // The stasis CLI, run as a user runs it: golden outputs, and a game that is not the demo.
    // The goldens: what each command prints, as files (Golden.swift).
    .testTarget(
      name: "CLITests",
      dependencies: ["Stasis", "StasisRecords", "StasisReplay", "StasisTesting", "StasisTestSupport"],
      exclude: ["Goldens"]),
    // StasisInspect's strings against what the built `stasis` prints for the same saves.
    .testTarget(
      name: "StasisInspectTests", dependencies: ["Stasis", "StasisInspect", "StasisMerge", "StasisTestSupport"]),
    // Examples/Tanks built and run, every Swift block of the README and the guide compiled.
    .testTarget(name: "ExampleTests", dependencies: ["Stasis", "StasisTestSupport"]),
    // DesktopNotifier against a real session bus (its own dbus-daemon) and a notification server
    // that records what it receives (Python, with Debian's python3-dbus).
    .testTarget(
      name: "StasisNotifyTests", dependencies: ["Stasis", "StasisNotify", "StasisTestSupport"], exclude: ["Fixtures"]),
    .testTarget(
      name: "StasisSDLTests",
      dependencies: [
        "StasisSDL", "CStasisSDL2", "Stasis", "StasisTesting", .product(name: "Logging", package: "swift-log"),
      ]
    ),
  ]
)

// The modules by layer, as docs/ARCHITECTURE.md draws them: each target's folder. From the
// bottom: the core (the file, its coding, the store, the lifecycle), sync (deltas, merges, the
// cloud), records, the platform (SDL, desktop notifications), the tools (the CLI, the
// benchmark, the fuzzers), the test kit; the demo in a folder of its own. CI
// (scripts/check-architecture.py) fails when a folder and this map disagree.
let layers: [(folder: String, targets: [String])] = [
  ("Sources/Core", ["Stasis", "CStasisChecksum"]),
  ("Sources/Sync", ["StasisDelta", "CStasisZstd", "StasisMerge", "StasisCloud"]),
  ("Sources/Records", ["StasisRecords"]),
  ("Sources/Replay", ["StasisReplay", "CStasisXXHash"]),
  ("Sources/Platform", ["StasisSDL", "CStasisSDL2", "CStasisSDL2Image", "StasisNotify", "CStasisLibNotify"]),
  (
    "Sources/Tools",
    ["stasis", "StasisInspect", "stasis-bench", "stasis-fuzz", "stasis-fuzz-state", "StasisFuzzDriver"]
  ),
  ("Sources/Testing", ["StasisTesting"]),
  ("Demo", ["StasisDemoGame", "StasisDemoRecords", "stasis-demo"]),
]
for (folder, names) in layers {
  for target in package.targets where names.contains(target.name) {
    target.path = "\(folder)/\(target.name)"
  }
}
