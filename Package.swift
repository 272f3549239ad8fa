// swift-tools-version:6.0
// HapSync: Core Haptics for Linux. See docs/development.md for the layer map.
import PackageDescription

let package = Package(
    name: "HapSync",
    products: [
        // The library other Swift packages depend on: every layer from the AHAP model to the backends.
        .library(name: "HapSync", targets: ["HapSync"]),
        // Core Haptics' names and signatures over the engine, so iOS code compiles unchanged.
        .library(name: "CoreHaptics", targets: ["CoreHaptics"]),
        // The C API (Sources/CHapSync/include/hapsync.h) as a shared library for C, C++, Rust, C#,
        // Python: built as libHapSyncCAPI.so (a product may not share the executable's name),
        // installed as libhapsync.so by `hapsync install`.
        .library(name: "HapSyncCAPI", type: .dynamic, targets: ["HapSyncCAPI"]),
        .library(name: "HapSyncTestSupport", targets: ["HapSyncTestSupport"]),
        .executable(name: "hapsync", targets: ["hapsync"]),
        .executable(name: "hapsync-bench", targets: ["hapsync-bench"]),
    ],
    targets: [
        // Layer 0: concurrency primitives below everything (SPSCRing, SeqLock, Locked, ThreadRole). Each
        // states its contract; nothing here knows about haptics.
        .target(name: "HapSyncConcurrency"),
        // Layer 0: the system's errno (`SystemErrno`, the one strerror and EINTR retry) and clocks
        // (`SystemClock`), as swift-system keeps them: everything that calls the system reports
        // through these.
        .target(name: "HapSyncSystem"),
        // Layer 1: the AHAP model, reader, writer, resource resolution. Foundation only, and the
        // system layer for the reader's file checks.
        .target(name: "HapSyncAHAP", dependencies: ["HapSyncSystem"]),
        // Layer 1, pure (no file or device I/O: .ci/layer-check): what a pattern means over time
        // (timeline, command stream, voices, mixer, synthesizer, live parameters, plots).
        .target(name: "HapSyncCore", dependencies: ["HapSyncAHAP", "HapSyncConcurrency"]),
        // Layer 2, the runtime: clock, system-call chokepoint, scheduler thread, output stage, engine and
        // player API; C shims for system calls Swift cannot make directly (variadic prctl, _GNU_SOURCE
        // sem_clockwait); libdbus-1 for RealtimeKit (real-time threads granted over the system bus to a
        // user who has no right to them; its pkg-config flags are include paths only).
        .target(name: "CHapSyncSystem"),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .target(name: "HapSyncRuntime", dependencies: ["HapSyncSystem", "HapSyncAHAP", "HapSyncCore", "HapSyncConcurrency", "CHapSyncSystem", "CDBus"]),
        // Layer 3, haptic backends at the edge: trace, evdev rumble, fan-out; the kernel's input/uinput
        // ioctl numbers (function-like macros) and a fixed-signature ioctl.
        .target(name: "CLinuxInput"),
        .target(name: "HapSyncHapticOutput", dependencies: ["HapSyncSystem", "HapSyncAHAP", "HapSyncRuntime", "HapSyncConcurrency", "CLinuxInput"]),
        // Layer 3, audio files at load: decoding (libsndfile; FFmpeg for AAC and ALAC, headers only, its
        // libraries opened with dlopen when first needed), resampling (libsamplerate), the samples shared
        // between players and the bound on what one pattern decodes. No sound server.
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CFFmpeg", providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]),
        .target(name: "HapSyncAudioFiles", dependencies: ["HapSyncAHAP", "HapSyncCore", "HapSyncRuntime", "HapSyncConcurrency", "CSndFile", "CSampleRate", "CFFmpeg"]),
        // Layer 4: haptics from a sound file: onsets by spectral flux, a felt-loudness and centroid
        // layer, written as AHAP (`hapsync generate`). Decodes; links no sound server.
        .target(name: "HapSyncGeneration", dependencies: ["HapSyncAHAP", "HapSyncCore", "HapSyncAudioFiles"]),
        // Layer 4: what every sound server's stream renders, written once: the mixer on the stream's
        // audio thread, the waveform drive and its channel layout, latency that grows after underruns,
        // and the protocol the servers' outputs share. Links no sound server's library.
        .target(name: "HapSyncAudioStream", dependencies: ["HapSyncCore", "HapSyncRuntime", "HapSyncConcurrency"]),
        // Layer 5: PulseAudio's protocol (a PulseAudio server, or PipeWire's pipewire-pulse): the playback
        // stream and its clock, the waveform output's own stream, the sink list. Links libpulse, without
        // pkg-config: its flags (-D_REENTRANT -pthread) are ones SwiftPM refuses with a warning in every
        // build, ours and our users'; the headers are in /usr/include, the module map links libpulse.
        .systemLibrary(name: "CPulse", providers: [.apt(["libpulse-dev"])]),
        .target(name: "HapSyncPulseAudio", dependencies: ["HapSyncAudioStream", "HapSyncAudioFiles", "HapSyncCore", "HapSyncRuntime", "HapSyncConcurrency", "CPulse"]),
        // Layer 5: PipeWire natively: a pw_stream rendered in PipeWire's real-time data thread, its clock
        // from pw_stream_get_time_n. libpipewire-0.3's pkg-config flags add -D_REENTRANT, which SwiftPM
        // refuses with a warning in every build; so its headers are reached through system/, two links
        // to Debian's /usr/include/pipewire-0.3/pipewire and /usr/include/spa-0.2/spa.
        .target(name: "CPipeWire", exclude: ["system"], cSettings: [.headerSearchPath("system")],
                linkerSettings: [.linkedLibrary("pipewire-0.3")]),
        .target(name: "HapSyncPipeWire", dependencies: ["HapSyncSystem", "HapSyncAudioStream", "HapSyncAudioFiles", "HapSyncCore", "HapSyncRuntime", "HapSyncConcurrency", "CPipeWire"]),
        // Layer 6: the audio output the front ends import: which sound server (`AudioServerChoice`)
        // and the modules above re-exported.
        .target(name: "HapSyncAudioOutput", dependencies: ["HapSyncAudioFiles", "HapSyncAudioStream", "HapSyncPulseAudio", "HapSyncPipeWire", "HapSyncRuntime"]),
        // Layer 7: the outputs assembled in one place for every front end: the haptic backends a
        // request names (`HapticOutputRequest`), and what a library front end's settings ask for
        // (`LibraryOutputs`: HAPSYNC_* and the C API's config).
        .target(name: "HapSyncOutputs", dependencies: ["HapSyncAudioOutput", "HapSyncHapticOutput", "HapSyncRuntime"]),
        // Layer 6: `hapsync serve`: OSC datagrams (decoded and encoded by liblo, linked by its module map:
        // its pkg-config flags add only -lpthread) in, engine commands out.
        .systemLibrary(name: "CLo", providers: [.apt(["liblo-dev"])]),
        .target(name: "HapSyncOSC", dependencies: ["HapSyncSystem", "HapSyncAHAP", "HapSyncCore", "HapSyncRuntime", "HapSyncConcurrency", "CLo"]),
        // Front end: Core Haptics' API (CHHapticPattern, CHHapticEvent, ...) over HapSync.
        .target(name: "CoreHaptics", dependencies: ["HapSyncOutputs", "HapSyncAHAP", "HapSyncCore", "HapSyncConcurrency", "HapSyncRuntime", "HapSyncHapticOutput", "HapSyncAudioOutput"]),
        // Front end: the C API: its header and the per-thread error store (C), and its Swift
        // implementation.
        .target(name: "CHapSync"),
        .target(name: "HapSyncCAPI", dependencies: ["HapSyncOutputs", "CHapSync", "HapSyncAHAP", "HapSyncCore", "HapSyncRuntime", "HapSyncConcurrency", "HapSyncHapticOutput", "HapSyncAudioOutput"]),
        // Front end: the command line as a library, so tests can run it in process, and the thin
        // executable that hands it argv.
        .target(name: "HapSyncCLI", dependencies: ["HapSyncOutputs", "CHapSync", "HapSyncAHAP", "HapSyncCore", "HapSyncRuntime", "HapSyncConcurrency", "HapSyncHapticOutput", "HapSyncAudioOutput", "HapSyncOSC", "HapSyncGeneration"]),
        .executableTarget(name: "hapsync", dependencies: ["HapSyncCLI"]),
        // The umbrella: `import HapSync` re-exports the modules below it.
        .target(name: "HapSync", dependencies: ["HapSyncSystem", "HapSyncOutputs", "HapSyncAHAP", "HapSyncConcurrency", "HapSyncCore", "HapSyncRuntime", "HapSyncHapticOutput", "HapSyncAudioOutput", "HapSyncGeneration"]),
        // Test doubles others may want: a manual clock, a manual-clock engine rig, a recording backend,
        // a simulated audio device.
        .target(name: "HapSyncTestSupport", dependencies: ["HapSyncSystem", "HapSyncAHAP", "HapSyncCore", "HapSyncRuntime", "HapSyncConcurrency"]),
        // For tests against live sound servers: the traits that skip one, saying why, when no server
        // answers, and a check run again when the machine stalled during it (Swift Testing's known
        // issues; test targets only).
        .target(name: "HapSyncLiveTesting", dependencies: ["HapSyncTestSupport", "HapSyncConcurrency", "HapSyncPulseAudio", "HapSyncPipeWire"]),
        // Measuring instruments, not in the HapSync product: the sink-monitor recorder that times what
        // was really heard, its playback observations and click onsets (used by Bench and tests).
        .target(name: "HapSyncMeasurement", dependencies: ["HapSyncSystem", "HapSyncAudioOutput", "HapSyncCore", "HapSyncRuntime", "HapSyncConcurrency", "CPulse"]),
        // Fuzz targets (the logic; .ci/fuzz links it with libFuzzer, HapSyncFuzzTests replays kept inputs).
        .target(name: "HapSyncFuzz", dependencies: ["HapSyncAHAP", "HapSyncCore", "HapSyncRuntime", "HapSyncTestSupport", "HapSyncOSC"]),
        // A fake rumble gamepad on /dev/uinput and its log checker, for the real-kernel VM test
        // (.ci/vm-evdev-test).
        .executableTarget(name: "hapsync-fakepad", dependencies: ["HapSyncSystem", "CLinuxInput"]),
        .executableTarget(name: "hapsync-fakepad-check", dependencies: ["HapSyncHapticOutput", "HapSyncCore"]),
        // Benchmarks (see Bench/README.md).
        .executableTarget(name: "hapsync-bench", dependencies: ["HapSyncAHAP", "HapSyncCore", "HapSyncRuntime", "HapSyncConcurrency", "HapSyncAudioOutput", "HapSyncMeasurement", "HapSyncTestSupport", "HapSyncCLI", "CHapSyncSystem", "HapSyncOSC", "CLo", "HapSyncCAPI", "CHapSync", "HapSyncGeneration", "HapSyncHapticOutput"], path: "Bench", exclude: ["results", "README.md"]),
        // One test target per module, named after it.
        .testTarget(name: "HapSyncConcurrencyTests", dependencies: ["HapSyncConcurrency", "HapSyncTestSupport"]),
        .testTarget(name: "HapSyncAHAPTests", dependencies: ["HapSyncAHAP", "HapSyncTestSupport"]),
        .testTarget(name: "HapSyncCoreTests", dependencies: ["HapSyncAHAP", "HapSyncCore", "HapSyncConcurrency", "HapSyncTestSupport"]),
        .testTarget(name: "HapSyncRuntimeTests", dependencies: ["HapSyncSystem", "HapSyncAHAP", "HapSyncCore", "HapSyncRuntime", "HapSyncConcurrency", "HapSyncHapticOutput", "HapSyncTestSupport"]),
        .testTarget(name: "HapSyncHapticOutputTests", dependencies: ["HapSyncSystem", "HapSyncAHAP", "HapSyncCore", "HapSyncHapticOutput", "HapSyncRuntime", "HapSyncConcurrency", "HapSyncTestSupport", "CLinuxInput"]),
        .testTarget(name: "HapSyncAudioOutputTests", dependencies: ["HapSyncOutputs", "HapSyncAHAP", "HapSyncCore", "HapSyncAudioOutput", "HapSyncAudioStream", "HapSyncPulseAudio", "HapSyncPipeWire", "CPipeWire", "HapSyncRuntime", "HapSyncConcurrency", "HapSyncHapticOutput", "HapSyncTestSupport", "HapSyncMeasurement", "HapSyncLiveTesting"]),
        .testTarget(name: "HapSyncGenerationTests", dependencies: ["HapSyncGeneration", "HapSyncAHAP", "HapSyncCore", "HapSyncAudioFiles", "HapSyncTestSupport"]),
        .testTarget(name: "HapSyncMeasurementTests", dependencies: ["HapSyncMeasurement"]),
        .testTarget(name: "HapSyncFuzzTests", dependencies: ["HapSyncFuzz", "HapSyncTestSupport"]),
        .testTarget(name: "HapSyncUmbrellaTests", dependencies: ["HapSync", "HapSyncTestSupport"]),
        .testTarget(name: "CoreHapticsTests", dependencies: ["CoreHaptics", "HapSyncTestSupport", "HapSyncMeasurement", "HapSyncLiveTesting"]),
        // Depends on the executables so `swift test` builds the binaries the end-to-end tests run.
        .testTarget(name: "HapSyncOSCTests", dependencies: ["HapSyncOSC", "CLo", "HapSyncAHAP", "HapSyncCore", "HapSyncRuntime", "HapSyncTestSupport", "HapSyncHapticOutput"]),
        .testTarget(name: "HapSyncCLITests", dependencies: ["HapSyncSystem", "HapSyncCLI", "HapSyncPulseAudio", "HapSyncHapticOutput", "hapsync", "hapsync-bench", "HapSyncTestSupport", "HapSyncLiveTesting", "HapSyncMeasurement"]),
    ]
)
