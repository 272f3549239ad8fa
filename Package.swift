// swift-tools-version:6.0
// HapSync: Core Haptics for Linux. See README.md for the layer map.
import PackageDescription

let package = Package(
    name: "HapSync",
    products: [
        // The library other Swift packages depend on. Later layers (rendering, runtime,
        // backends) join this product as they land.
        .library(name: "HapSync", targets: ["AHAP", "HapSyncCore", "HapSyncRuntime", "HapticOutput", "AudioOutput"]),
        .library(name: "HapSyncTestSupport", targets: ["HapSyncTestSupport"]),
        .executable(name: "hapsync", targets: ["hapsync"]),
        .executable(name: "hapsync-bench", targets: ["hapsync-bench"]),
    ],
    targets: [
        // Pure core: AHAP model, reader, writer, resource resolution. Foundation only.
        .target(name: "AHAP"),
        // Pure core: what a pattern means over time (timeline, command stream, voices, plots).
        .target(name: "HapSyncCore", dependencies: ["AHAP"]),
        // Command-line logic as a library, so tests can run it in process.
        // C shims for system calls Swift cannot make directly (variadic prctl, _GNU_SOURCE sem_clockwait).
        .target(name: "CHapSyncSystem"),
        // Runtime: clock, scheduler thread, lock-free rings, output stage, engine and player API.
        .target(name: "HapSyncRuntime", dependencies: ["AHAP", "HapSyncCore", "CHapSyncSystem"]),
        // The kernel's input/uinput ioctl numbers (function-like macros) and fixed-signature ioctl.
        .target(name: "CLinuxInput"),
        // C libraries from Debian for audio: libsndfile (decoding), libsamplerate (rate conversion),
        // libpulse (output). System-library targets with module maps.
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CPulse", pkgConfig: "libpulse", providers: [.apt(["libpulse-dev"])]),
        // Audio at the edge: decoding and resampling at load, PulseAudio output and its clock.
        .target(name: "AudioOutput", dependencies: ["HapSyncCore", "HapSyncRuntime", "CSndFile", "CSampleRate", "CPulse"]),
        // Backends at the edge: trace and evdev rumble.
        .target(name: "HapticOutput", dependencies: ["AHAP", "HapSyncRuntime", "CLinuxInput"]),
        // Test doubles others may want: a manual clock and a recording backend.
        .target(name: "HapSyncTestSupport", dependencies: ["HapSyncCore", "HapSyncRuntime"]),
        .target(name: "HapSyncCLI", dependencies: ["AHAP", "HapSyncCore", "HapSyncRuntime", "HapticOutput", "AudioOutput"]),
        // Thin executable: hands argv to HapSyncCLI.
        .executableTarget(name: "hapsync", dependencies: ["HapSyncCLI"]),
        // A fake rumble gamepad on /dev/uinput and its log checker, for the real-kernel VM test (.ci/vm-evdev-test).
        .executableTarget(name: "hapsync-fakepad", dependencies: ["CLinuxInput"]),
        .executableTarget(name: "hapsync-fakepad-check", dependencies: ["HapticOutput"]),
        // Benchmarks (see README "Performance").
        .executableTarget(name: "hapsync-bench", dependencies: ["AHAP", "HapSyncCore", "HapSyncRuntime", "AudioOutput", "HapSyncTestSupport"], path: "Bench"),
        .testTarget(name: "AHAPTests", dependencies: ["AHAP"]),
        .testTarget(name: "HapSyncCoreTests", dependencies: ["HapSyncCore"]),
        .testTarget(name: "AudioTests", dependencies: ["AHAP", "HapSyncCore", "AudioOutput", "HapSyncRuntime", "HapticOutput", "HapSyncTestSupport"]),
        .testTarget(name: "HapticOutputTests", dependencies: ["AHAP", "HapSyncCore", "HapticOutput", "HapSyncRuntime", "HapSyncTestSupport", "CLinuxInput"]),
        .testTarget(name: "HapSyncRuntimeTests", dependencies: ["HapSyncRuntime", "HapticOutput", "HapSyncTestSupport"]),
        // Depends on the executable so `swift test` builds the binary the end-to-end tests run.
        .testTarget(name: "HapSyncCLITests", dependencies: ["HapSyncCLI", "hapsync"]),
    ]
)
