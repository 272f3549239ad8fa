// swift-tools-version:6.0
// HapSync: Core Haptics for Linux. See README.md for the layer map.
import PackageDescription

let package = Package(
    name: "HapSync",
    products: [
        // The library other Swift packages depend on. Later layers (rendering, runtime,
        // backends) join this product as they land.
        .library(name: "HapSync", targets: ["AHAP"]),
        .executable(name: "hapsync", targets: ["hapsync"]),
        .executable(name: "hapsync-bench", targets: ["hapsync-bench"]),
    ],
    targets: [
        // Pure core: AHAP model, reader, writer, resource resolution. Foundation only.
        .target(name: "AHAP"),
        // Command-line logic as a library, so tests can run it in process.
        .target(name: "HapSyncCLI", dependencies: ["AHAP"]),
        // Thin executable: hands argv to HapSyncCLI.
        .executableTarget(name: "hapsync", dependencies: ["HapSyncCLI"]),
        // Benchmarks (see Bench/README.md).
        .executableTarget(name: "hapsync-bench", dependencies: ["AHAP"], path: "Bench"),
        .testTarget(name: "AHAPTests", dependencies: ["AHAP"]),
        // Depends on the executable so `swift test` builds the binary the end-to-end tests run.
        .testTarget(name: "HapSyncCLITests", dependencies: ["HapSyncCLI", "hapsync"]),
    ]
)
