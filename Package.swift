// swift-tools-version:6.0
// HapSync: Core Haptics for Linux. See README.md for the layer map.
import PackageDescription

let package = Package(
    name: "HapSync",
    products: [
        // The library other Swift packages depend on. Later layers (rendering, runtime,
        // backends) join this product as they land.
        .library(name: "HapSync", targets: ["AHAP", "HapSyncCore"]),
        .executable(name: "hapsync", targets: ["hapsync"]),
        .executable(name: "hapsync-bench", targets: ["hapsync-bench"]),
    ],
    targets: [
        // Pure core: AHAP model, reader, writer, resource resolution. Foundation only.
        .target(name: "AHAP"),
        // Pure core: what a pattern means over time (timeline, command stream, voices, plots).
        .target(name: "HapSyncCore", dependencies: ["AHAP"]),
        // Command-line logic as a library, so tests can run it in process.
        .target(name: "HapSyncCLI", dependencies: ["AHAP", "HapSyncCore"]),
        // Thin executable: hands argv to HapSyncCLI.
        .executableTarget(name: "hapsync", dependencies: ["HapSyncCLI"]),
        // Benchmarks (see Bench/README.md).
        .executableTarget(name: "hapsync-bench", dependencies: ["AHAP", "HapSyncCore"], path: "Bench"),
        .testTarget(name: "AHAPTests", dependencies: ["AHAP"]),
        .testTarget(name: "HapSyncCoreTests", dependencies: ["HapSyncCore"]),
        // Depends on the executable so `swift test` builds the binary the end-to-end tests run.
        .testTarget(name: "HapSyncCLITests", dependencies: ["HapSyncCLI", "hapsync"]),
    ]
)
