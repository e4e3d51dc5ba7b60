// swift-tools-version: 6.1
// The save server (`stasis-server`), its load tool, and `stasis-sim`, which runs it in-process:
// a package of their own, so a game that adds Stasis resolves none of the server's packages.
// It depends on the library's package (the repository's root) by path.
import PackageDescription

let package = Package(
  name: "StasisServer",
  platforms: [.macOS(.v15)],
  products: [
    .executable(name: "stasis-server", targets: ["stasis-server"]),
    .executable(name: "stasis-load", targets: ["stasis-load"]),
    .executable(name: "stasis-sim", targets: ["stasis-sim"]),
    .executable(name: "stasis-sync-bench", targets: ["stasis-sync-bench"]),
    // The server in a test's process, for a studio's tests of cloud sync: InMemoryCloudServer.
    .library(name: "StasisServerTesting", targets: ["StasisServerTesting"]),
  ],
  // `SimulationSeams` (off by default) compiles the switches by which stasis-sim varies the
  // rules of the library and of the SQLite backend, to plant the known bugs of its catalogue
  // (StasisSimulation's `PlantedBug`) and prove its checker finds them: `swift build --traits
  // SimulationSeams` (what scripts/test.sh builds and tests). A server built without it, as a
  // studio builds one, has none of them; `stasis-sim --plant` then says it cannot plant.
  traits: [
    .trait(
      name: "SimulationSeams",
      description: "For stasis-sim and its tests only: the rules its honesty check varies. Never in production.")
  ],
  dependencies: [
    .package(
      name: "Stasis", path: "..",
      traits: [.defaults, .init(name: "SimulationSeams", condition: .when(traits: ["SimulationSeams"]))]),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
    // HTTP, the two backends, lifecycle, metrics.
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
    // The studio console: staff passwords (bcrypt) and its server-rendered pages.
    .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
    .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.0"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
    .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    // stasis-load's client; the server's tests talk HTTP to it as any client would.
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
  ],
  targets: [
    // The save server's library: the storage protocol, SQLite and PostgreSQL backends, the v1 API.
    .target(
      name: "StasisServer",
      dependencies: [
        .product(name: "Stasis", package: "Stasis"), .product(name: "StasisDelta", package: "Stasis"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
        .product(name: "Mustache", package: "swift-mustache"),
        .product(name: "StasisInspect", package: "Stasis"), .product(name: "StasisMerge", package: "Stasis"),
        // Desync bundles are read with the library's own reader.
        .product(name: "StasisReplay", package: "Stasis"),
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
        .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
        // `stasis-server admin …` calls the admin API.
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
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
        .product(name: "Stasis", package: "Stasis"), "StasisServer",
        .product(name: "StasisDemoGame", package: "Stasis"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // The deterministic simulation: devices (store + sync) over simulated disks, the real server
    // in-process over SQLite, faults and clocks from a seed, invariants after every operation.
    // The server in a test's process: its router over SQLite, answering a CloudTransport's
    // requests with no socket (InMemoryCloudServer); the simulation sends through the same path.
    .target(
      name: "StasisServerTesting",
      dependencies: [
        "StasisServer", .product(name: "StasisCloud", package: "Stasis"),
        .product(name: "StasisTesting", package: "Stasis"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .target(
      name: "StasisSimulation",
      dependencies: [
        .product(name: "Stasis", package: "Stasis"), .product(name: "StasisTesting", package: "Stasis"),
        .product(name: "StasisCloud", package: "Stasis"), .product(name: "StasisMerge", package: "Stasis"),
        .product(name: "StasisReplay", package: "Stasis"),
        "StasisServer", "StasisServerTesting",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "Logging", package: "swift-log"),
        // The in-process server's databases: SQLite (GRDB, whose transaction observer injects the
        // crash inside a commit) and PostgreSQL (a database of each run's own).
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
      ]
    ),
    .executableTarget(
      name: "stasis-sim",
      dependencies: ["StasisSimulation", .product(name: "ArgumentParser", package: "swift-argument-parser")]
    ),
    // What cloud sync costs the demo's main thread, against the server in-process (release).
    .executableTarget(
      name: "stasis-sync-bench",
      dependencies: [
        .product(name: "Stasis", package: "Stasis"), .product(name: "StasisCloud", package: "Stasis"),
        .product(name: "StasisDemoGame", package: "Stasis"), "StasisServer",
        .product(name: "StasisDelta", package: "Stasis"), .product(name: "StasisTesting", package: "Stasis"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    // What the server's test targets share: the built server on a loopback port, its router
    // in-process (HummingbirdTesting's router mode), databases on both backends, raw HTTP, a
    // fault-injecting proxy, devices that sync (`@testable import`).
    .target(
      name: "ServerTestSupport",
      dependencies: [
        .product(name: "Stasis", package: "Stasis"), .product(name: "StasisDemoGame", package: "Stasis"),
        .product(name: "StasisCloud", package: "Stasis"), .product(name: "StasisTesting", package: "Stasis"),
        .product(name: "StasisReplay", package: "Stasis"),
        "StasisServer",
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HummingbirdTesting", package: "hummingbird"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "Crypto", package: "swift-crypto"),
      ],
      path: "Tests/Support"
    ),
    // The server on both backends: its API through its router in-process (HummingbirdTesting),
    // and the built stasis-server on a loopback port where the socket or the process is the point.
    .testTarget(
      name: "StasisServerTests",
      dependencies: [
        "ServerTestSupport", "StasisServer", .product(name: "Stasis", package: "Stasis"),
        .product(name: "StasisDemoGame", package: "Stasis"), .product(name: "StasisDelta", package: "Stasis"),
        .product(name: "StasisTesting", package: "Stasis"),
        .product(name: "StasisReplay", package: "Stasis"),
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
        .product(name: "GRDB", package: "GRDB.swift"),
      ]
    ),
    // Cloud sync and the `stasis cloud` CLI against a real server: offline, conflicts, lost
    // answers, kept losers.
    .testTarget(
      name: "StasisCloudSyncTests",
      dependencies: [
        "ServerTestSupport", "StasisServerTesting", .product(name: "Stasis", package: "Stasis"),
        .product(name: "StasisDemoGame", package: "Stasis"), .product(name: "StasisCloud", package: "Stasis"),
        .product(name: "StasisTesting", package: "Stasis"), .product(name: "StasisRecords", package: "Stasis"),
        .product(name: "StasisReplay", package: "Stasis"), .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "Crypto", package: "swift-crypto"),
      ]
    ),
    // The studio's rules in-process, with an injected clock: sessions that end, the sign-in
    // throttle, the audit log that refuses to change.
    .testTarget(
      name: "StudioTests",
      dependencies: [
        "StasisServer", .product(name: "Stasis", package: "Stasis"), .product(name: "StasisTesting", package: "Stasis"),
        .product(name: "GRDB", package: "GRDB.swift"), .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
      ]
    ),
    // The simulation's own tests: replay, and the planted bugs it must find.
    .testTarget(name: "StasisSimulationTests", dependencies: ["StasisSimulation"]),
  ]
)
