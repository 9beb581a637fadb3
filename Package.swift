// swift-tools-version:6.1
import PackageDescription

/// swift-log: every adapter logs through it, with metadata (rendered by the Logs module).
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")

let package = Package(
    name: "beacond",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "beacond", targets: ["beacond"]),
        .executable(name: "beaconctl", targets: ["beaconctl"]),
        .library(name: "BeaconCore", targets: ["BeaconCore"]),
        // For the benchmarks' package (Benchmarks/), which measures the modules as they are.
        .library(
            name: "BeaconModules",
            targets: [
                "BeaconConfig", "BeaconRuntime", "BlueZ", "Logs", "MQTT", "POSIX", "Publishing", "Simulation",
                "Storage",
            ]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
    ],
    targets: [
        // Pure engine: decoding, monitoring, ranging, events. No I/O, no Foundation (AES from Crypto).
        .target(name: "BeaconCore", dependencies: ["Crypto"], linkerSettings: [.linkedLibrary("m")]),
        // libcrypto (Debian: libssl3; libssl-dev to build) behind a few C functions, loaded with
        // dlopen at first use: AES-128 for phones' private addresses, HMAC-SHA256 for signatures.
        .target(name: "CCrypto", dependencies: ["CLoader"]),
        // ESPHome's native API as a client of Bluetooth proxies: frames, messages, the session.
        .target(name: "ESPHome", dependencies: ["BeaconCore", "Crypto"]),
        // The two primitives the daemon needs, over libcrypto, with their key schedules kept.
        .target(name: "Crypto", dependencies: ["CCrypto"]),
        // YAML text -> validated configuration; every error carries file:line:column and the key.
        .target(name: "BeaconConfig", dependencies: ["BeaconCore", "CYAML"]),
        // libyaml (Debian: libyaml-dev): YAML events with line and column, composed in BeaconConfig.
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        // libdbus-1 (Debian: libdbus-1-dev): a system-library target with a shim for the type codes.
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // org.bluez over libdbus-1 -> Sighting values; adapter and discovery recovery.
        .target(name: "BlueZ", dependencies: ["CDBus", "BeaconCore", logging]),
        // Device1 signals built as bluetoothd sends them: for the parser tests and bluez-emitter only.
        .target(name: "BlueZFixtures", dependencies: ["BlueZ", "CDBus"]),
        // SQLite 3 (Debian: libsqlite3-dev) through its C API.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The SQLite file under gateway.state_dir: region states, event history, outbox.
        .target(name: "Storage", dependencies: ["BeaconCore", "CSQLite", "CLinux"]),
        // HTTP/1.1 on a Unix socket, one epoll thread: the API's transport (peer credentials, streams).
        .target(name: "HTTPServer", dependencies: ["BeaconCore", "CLinux", "POSIX", logging]),
        // dlopen and dlsym for the libraries loaded at first use (CCrypto, CCurl, CMosquitto).
        .target(name: "CLoader", linkerSettings: [.linkedLibrary("dl")]),
        // Headers Glibc's module leaves out (epoll, eventfd, accept4, SO_PEERCRED, inode flags).
        .target(name: "CLinux"),
        // libcurl behind one C function (curl_easy_setopt is variadic): webhook requests over HTTP(S).
        // Loaded with dlopen when the first webhook starts, so it costs nothing without webhooks.
        .target(name: "CCurl", dependencies: ["CLoader"]),
        // Events out: ids, durable history and outbox, webhooks with signatures and retries.
        .target(
            name: "Publishing", dependencies: ["BeaconCore", "Crypto", "MQTT", "POSIX", "Storage", "CCurl", logging]),
        // The API's shapes (status, webhooks, metric names), written by the daemon, read by beaconctl.
        .target(name: "APIModel", dependencies: ["BeaconCore"]),
        // SPEC §4.1 over HTTPServer: routes, admin check, event stream, metrics.
        .target(
            name: "API",
            dependencies: [
                "APIModel", "BeaconCore", "BeaconConfig", "BeaconRuntime", "HTTPServer", "Logs", "POSIX", "Publishing",
                "Storage",
                logging,
            ],
            // Served from the binary: scripts/embed writes them into FloorViewPage.swift and the
            // FloorView*Script.swift files.
            exclude: ["FloorView/floor.html", "FloorView/floor.js", "FloorView/geometry.js", "FloorView/analytics.js"]),
        // A simulated site: tags walking among receivers through a noisy radio channel, with truth.
        .target(name: "Simulation", dependencies: ["BeaconCore", "BeaconConfig"]),
        // libsystemd (Debian: libsystemd-dev): sd_notify, the watchdog, the journal.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // Readiness, status, watchdog, reload and stop notices; journal logging with fields.
        .target(name: "Systemd", dependencies: ["CSystemd", "POSIX", "Logs", logging]),
        // The one log format: swift-log metadata rendered as logfmt, for standard error and tests.
        .target(name: "Logs", dependencies: [logging]),
        // libmosquitto (Debian: libmosquitto-dev): MQTT 3.1.1/5 with TLS, for a site's gateways.
        // Loaded with dlopen when a site's first client starts: a gateway alone never maps it.
        .target(name: "CMosquitto", dependencies: ["CLoader"]),
        // One broker connection kept up on its own thread: reconnects with backoff, will, TLS.
        .target(name: "MQTT", dependencies: ["BeaconCore", "CMosquitto", "POSIX", logging]),
        // Drives the core from a trace (replay) or, later, from live adapters.
        .target(name: "BeaconRuntime", dependencies: ["BeaconCore", "BeaconConfig", "POSIX", logging]),
        // What every adapter needs of the operating system, once: threads, clocks, writing all.
        .target(name: "POSIX", dependencies: ["CLinux"]),
        .executableTarget(
            name: "beacond",
            dependencies: [
                "BeaconCore", "BeaconConfig", "BeaconRuntime", "BlueZ", "Crypto", "Storage", "Publishing", "API",
                "APIModel", "HTTPServer",
                logging, "Simulation", "Systemd", "POSIX", "MQTT", "ESPHome", "CLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "beaconctl",
            dependencies: [
                "APIModel", "BeaconCore", "BeaconConfig", "BeaconRuntime", "POSIX", "MQTT", "CCurl", "Crypto", "BlueZ",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The BlueZ tests' fast bluetoothd stand-in, and the D-Bus ingest benchmark's
        // (bench/dbus-ingest.py). The benchmarks themselves are a package of their own,
        // Benchmarks/, out of the graph the daemon and its tests build.
        .executableTarget(
            name: "bluez-emitter", dependencies: ["CDBus", "BlueZ", "BlueZFixtures"], path: "bench/bluez-emitter",
            swiftSettings: [.swiftLanguageMode(.v5)]),
        // libFuzzer's driver when fuzz/run links it in; otherwise absent, and beacond-fuzz replays files.
        .target(name: "CFuzzer"),
        // The parsers of what comes from outside (sightings, config, HTTP) under libFuzzer; see fuzz/README.md.
        .executableTarget(
            name: "beacond-fuzz",
            dependencies: [
                "CFuzzer", "CDBus", "BeaconCore", "BeaconConfig", "BeaconRuntime", "BlueZ", "HTTPServer", "API", "Logs",
                "Publishing", "Simulation", "Storage", "ESPHome",
            ]),
        .testTarget(name: "BeaconCoreTests", dependencies: ["BeaconCore", "BeaconConfig", "Crypto", "Simulation"]),
        .testTarget(name: "BeaconConfigTests", dependencies: ["BeaconConfig", "BeaconCore"]),
        .testTarget(name: "ESPHomeTests", dependencies: ["ESPHome", "BeaconCore", "Crypto"]),
        // Shared by the test targets: finding built executables, running commands.
        .target(name: "TestSupport", dependencies: ["Logs"], path: "Tests/TestSupport"),
        .testTarget(
            name: "BlueZTests", dependencies: ["BlueZ", "BlueZFixtures", "BeaconCore", "TestSupport"],
            exclude: ["Support"]),
        // Black-box tests of the built daemon and beaconctl: real sockets, buses, receivers,
        // signals and kill -9, through the API and the command line only.
        .testTarget(name: "DaemonTests", dependencies: ["BeaconCore", "TestSupport"], exclude: ["Support"]),
        .testTarget(
            name: "APIRouterTests",
            dependencies: [
                "API", "APIModel", "HTTPServer", "BeaconRuntime", "BeaconConfig", "BeaconCore", "Logs", "Publishing",
                "Storage",
            ]),
        // The daemon's services in process: their logic driven with the times a test gives.
        .testTarget(
            name: "ServiceTests",
            dependencies: [
                "beacond", "BeaconConfig", "BeaconCore", "BeaconRuntime", "BlueZ", "Logs", "Publishing", "Storage",
                "TestSupport",
            ]),
        // One advertisement through every step of ARCHITECTURE.md's path, in process.
        .testTarget(
            name: "AdvertisementPathTests",
            dependencies: [
                "BlueZ", "BlueZFixtures", "BeaconCore", "Publishing", "Storage", "Logs", "TestSupport",
            ]
        ),
        .testTarget(name: "HTTPServerTests", dependencies: ["BeaconCore", "HTTPServer", "Logs", "TestSupport"]),
        .testTarget(
            name: "PublishingTests",
            dependencies: [
                "Publishing", "MQTT", "Storage", "BeaconCore", "BeaconRuntime", "CLoader", "Logs", "TestSupport",
            ]),
        .testTarget(
            name: "SystemdTests", dependencies: ["Systemd", "Logs", "TestSupport", logging]),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "BeaconCore", "Simulation", "TestSupport"]),
        .testTarget(
            name: "BeaconRuntimeTests",
            dependencies: ["BeaconRuntime", "BeaconConfig", "BeaconCore", "Simulation", "TestSupport", logging]),
    ],
    swiftLanguageModes: [.v6]
)

// Upcoming features, turned on for every target of ours.
// ExistentialAny: https://github.com/swiftlang/swift-evolution/blob/main/proposals/0335-existential-any.md
// MemberImportVisibility: https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md
for target in package.targets where [.executable, .test, .regular].contains(target.type) {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility"),
        ]
}
