// swift-tools-version:6.1
import PackageDescription

/// beacond's benchmarks and load tools (BENCHMARKS.md), a package of their own as swift-nio's
/// Benchmarks/ are: the daemon's build and its tests do not compile them, and they measure
/// the daemon's modules through the root package's products, as a user of them would.
/// Build them with `swift build -c release --package-path Benchmarks --product NAME`.
let modules: Target.Dependency = .product(name: "BeaconModules", package: "beacond")
let core: Target.Dependency = .product(name: "BeaconCore", package: "beacond")

let package = Package(
    name: "beacond-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "beacond", path: ".."),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
    ],
    targets: [
        // The engine's throughput and memory; replay's engine alone; events written as text.
        .executableTarget(name: "beacond-bench", dependencies: [core, modules]),
        // Site: other gateways' batches on a real broker, and a tag walked across a zone.
        .executableTarget(
            name: "beacond-site-bench", dependencies: [core, modules, .product(name: "Logging", package: "swift-log")]),
        // Publishing: durable events/s through the outbox, sighting-to-webhook latency.
        .executableTarget(name: "beacond-publish-bench", dependencies: [core, modules]),
        // Positioning: error against truth and a centroid baseline, zone alerts, cost.
        .executableTarget(name: "beacond-position-bench", dependencies: [core, modules]),
        // D-Bus ingest: beacond's scanner and engine as a receiver of bench/bluez-emitter.
        .executableTarget(
            name: "beacond-dbus-bench", dependencies: [core, modules], swiftSettings: [.swiftLanguageMode(.v5)]),
    ],
    swiftLanguageModes: [.v6]
)
