// swift-tools-version: 6.0
// Stasis: a game-state save/restore toolkit. The target graph follows ../shared/DESIGN.md.
import PackageDescription

let package = Package(
  name: "Stasis",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "Stasis", targets: ["Stasis"]),
    .library(name: "StasisTesting", targets: ["StasisTesting"]),
    .library(name: "StasisCloud", targets: ["StasisCloud"]),
    .library(name: "StasisMerge", targets: ["StasisMerge"]),
    .library(name: "StasisSDL", targets: ["StasisSDL"]),
    .library(name: "DemoGame", targets: ["DemoGame"]),
    .executable(name: "stasis-demo", targets: ["stasis-demo"]),
    .executable(name: "stasis", targets: ["stasis"]),
    .executable(name: "stasis-bench", targets: ["stasis-bench"]),
    .executable(name: "stasis-example-tanks", targets: ["stasis-example-tanks"]),
    .executable(name: "stasis-server", targets: ["stasis-server"]),
    .executable(name: "stasis-load", targets: ["stasis-load"]),
    .executable(name: "stasis-sim", targets: ["stasis-sim"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
    // `swift package generate-documentation --target Stasis` (the DocC catalog in Sources/Stasis).
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
    // stasis-server: HTTP, the two backends, lifecycle, metrics.
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
    .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    // StasisCloud's HTTP client; the server's tests talk HTTP to it as any client would.
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
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
    // Cloud saves: sync records, the upload queue, fetch and conflicts, over AsyncHTTPClient.
    // Kept out of Stasis, which knows no network; it re-exports StasisMerge.
    .target(
      name: "StasisCloud",
      dependencies: [
        "Stasis", "StasisMerge",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // Test doubles for a game's own save-path tests: fault-injecting and recording file
    // systems, a manual clock, the process-killer hook. Not part of the shipping library.
    .target(name: "StasisTesting", dependencies: ["Stasis", .product(name: "Logging", package: "swift-log")]),
    // CRC32C at memory speed (the CPU's CRC instruction); Swift has none built in.
    .target(name: "CStasisChecksum"),
    // SDL2 from the system, found through pkg-config.
    .systemLibrary(
      name: "CSDL2",
      pkgConfig: "sdl2",
      providers: [.apt(["libsdl2-dev"])]
    ),
    // SDL2_image from the system, for PNG.
    .systemLibrary(
      name: "CSDL2Image",
      pkgConfig: "SDL2_image",
      providers: [.apt(["libsdl2-image-dev"])]
    ),
    // SDL events to lifecycle transitions; window, renderer and frame-capture helpers.
    .target(
      name: "StasisSDL",
      dependencies: ["CSDL2", "CSDL2Image", "Stasis", .product(name: "Logging", package: "swift-log")]
    ),
    // The tiny deterministic game.
    .target(
      name: "DemoGame",
      dependencies: ["Stasis", "StasisMerge", .product(name: "Logging", package: "swift-log")]
    ),
    .executableTarget(
      name: "stasis-demo",
      dependencies: [
        "Stasis", "StasisSDL", "DemoGame", "StasisCloud", "CSDL2", "CSDL2Image",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // The save-file CLI needs only Stasis (and StasisCloud for `stasis cloud`): no SDL, no demo code.
    .executableTarget(
      name: "stasis",
      dependencies: ["Stasis", "StasisCloud", .product(name: "ArgumentParser", package: "swift-argument-parser")]
    ),
    // The save path against memcpy, write+fsync and Foundation's coders (run in release).
    .executableTarget(
      name: "stasis-bench",
      dependencies: [
        "Stasis", "DemoGame", "StasisSDL", "StasisCloud", "StasisServer",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    // Examples/: a second game adopting Stasis through the save coordinator (the README's guide).
    .executableTarget(name: "stasis-example-tanks", dependencies: ["Stasis"], path: "Examples/Tanks"),
    // The save server's library: the storage protocol, SQLite and PostgreSQL backends, the v1 API.
    .target(
      name: "StasisServer",
      dependencies: [
        "Stasis",
        .product(name: "Hummingbird", package: "hummingbird"),
        // The connection cap and the request deadline live in the HTTP/1 channel's pipeline.
        .product(name: "HummingbirdCore", package: "hummingbird"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "Metrics", package: "swift-metrics"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .executableTarget(
      name: "stasis-server",
      dependencies: [
        "StasisServer",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "Metrics", package: "swift-metrics"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // The server under load, on both backends, against pgbench on the same database (release).
    .executableTarget(
      name: "stasis-load",
      dependencies: [
        "Stasis", "StasisServer", "DemoGame",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // The deterministic simulation: devices (store + sync) over simulated disks, the real server
    // in-process over SQLite, faults and clocks from a seed, invariants after every operation.
    .target(
      name: "StasisSimulation",
      dependencies: [
        "Stasis", "StasisTesting", "StasisCloud", "StasisServer",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .executableTarget(
      name: "stasis-sim",
      dependencies: ["StasisSimulation", .product(name: "ArgumentParser", package: "swift-argument-parser")]
    ),
    // The README's and the DocC articles' Swift blocks, compiled (ReadmeTests and GuideTests check every block is here).
    .target(
      name: "ReadmeSnippets",
      dependencies: ["Stasis", "StasisCloud", "StasisTesting", .product(name: "Logging", package: "swift-log")],
      path: "Examples/Snippets"),
    // The decoder under libFuzzer (scripts/fuzz.sh); without -DFUZZING it replays inputs.
    .executableTarget(name: "stasis-fuzz", dependencies: ["Stasis", "FuzzDriver"]),
    // Structure-aware: value edits to real demo saves' trees, loaded, restored, stepped, drawn.
    .executableTarget(name: "stasis-fuzz-state", dependencies: ["Stasis", "DemoGame", "FuzzDriver"]),
    // The libFuzzer hand-over and the replay mode both fuzz targets share.
    .target(name: "FuzzDriver"),
    .testTarget(
      name: "StasisTests",
      dependencies: ["Stasis", "StasisTesting", .product(name: "Logging", package: "swift-log")],
      exclude: ["Fixtures"]
    ),
    // The server end to end, and cloud sync against it: the built stasis-server on a loopback
    // port, on both backends.
    .testTarget(
      name: "StasisServerTests",
      dependencies: [
        "Stasis", "DemoGame", "StasisCloud", "StasisTesting",
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "Crypto", package: "swift-crypto"),
      ]
    ),
    // The simulation's own tests: replay, and the planted bugs it must find.
    .testTarget(name: "StasisSimulationTests", dependencies: ["StasisSimulation"]),
    // The three-way merge and the policies, without a server.
    .testTarget(name: "StasisMergeTests", dependencies: ["Stasis", "StasisMerge"]),
    .testTarget(name: "DemoGameTests", dependencies: ["DemoGame", "Stasis", "StasisMerge", "StasisTesting"]),
    .testTarget(
      name: "StasisSDLTests",
      dependencies: ["StasisSDL", "CSDL2", "Stasis", "StasisTesting", .product(name: "Logging", package: "swift-log")]
    ),
  ]
)
