import AHAP
import AudioOutput
import Foundation
import Glibc
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// The waveform output on a 4-channel null sink (front-left, front-right, rear-left, rear-right)
/// of a private PulseAudio server, its monitor recorded with `parec`: the rear channels carry the
/// drive signal (frequency by sharpness, measured in the recording), the front ones nothing, and
/// the taps and events lie where the pattern puts them, counted in the sink's own frames.
@Suite("Waveform haptics on an audio sink", .serialized)
struct WaveformOutputTests {
    /// Starts a program with posix_spawn (Foundation's `Process` is not reaped once a private
    /// pulseaudio runs: see `PrivatePulseServer`), its output into `output`.
    private func spawn(_ args: [String], output: String = "/dev/null") -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // The test's threads block signals; the child must not inherit that (SIGTERM ends parec).
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = args.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        guard posix_spawnp(&pid, args[0], &actions, &attributes, argv, environ) == 0 else { return -1 }
        return pid
    }

    /// Waits for a spawned program; its exit status.
    @discardableResult
    private func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return status
    }

    /// Runs a program to its end; what it printed.
    private func run(_ args: [String]) throws -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-run-\(UUID().uuidString)").path
        defer { unlink(out) }
        wait(spawn(args, output: out))
        return ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Upward zero crossings over a stretch: the frequency, Hz.
    private func frequency(_ x: ArraySlice<Float>, rate: Double) -> Double {
        var crossings: [Int] = []
        var i = x.startIndex + 1
        while i < x.endIndex {
            if x[i - 1] < 0, x[i] >= 0 { crossings.append(i) }
            i += 1
        }
        guard crossings.count > 2 else { return 0 }
        return Double(crossings.count - 1) * rate / Double(crossings.last! - crossings.first!)
    }

    /// Where the signal starts after at least `quiet` frames of silence (|x| ≤ 0.02).
    private func onsets(_ x: [Float], quiet: Int) -> [Int] {
        var found: [Int] = [], silent = Int.max
        for (i, v) in x.enumerated() {
            if abs(v) > 0.02 {
                if silent >= quiet { found.append(i) }
                silent = 0
            } else if silent < Int.max {
                silent += 1
            }
        }
        return found
    }

    /// On a private PulseAudio server of the test's own.
    @Test func theRearChannelsCarryTheDriveSignalWhereThePatternPutsIt() throws {
        let server = try PrivatePulseServer()
        try server.start()
        try check(server: "unix:\(server.socket)")
    }

    /// `hapsync devices` lists the server's sinks: a DualSense's USB sink, by its name, with rear.
    @Test func sinksThatLookLikeHapticDevicesAreNamed() throws {
        let server = try PrivatePulseServer()
        try server.start()
        let address = "unix:\(server.socket)"
        let name = "alsa_output.usb-Sony_Interactive_Entertainment_Wireless_Controller-00.analog-surround-40"
        _ = try run(["pactl", "-s", address, "load-module", "module-null-sink", "sink_name=\(name)", "channels=4",
                     "channel_map=front-left,front-right,rear-left,rear-right"])
        let sinks = try WaveformOutput.sinks(server: address)
        let pad = try #require(sinks.first { $0.name == name }, "\(sinks)")
        #expect(pad.isDualSense && pad.channels == 4 && pad.suggested == "waveform:\(name):rear")
        let plain = try #require(sinks.first { $0.name == "private" })
        #expect(!plain.isDualSense && plain.suggested == "waveform:private:all")
    }

    /// On the server the tests run with: PulseAudio under .ci/with-pulse, PipeWire's
    /// pipewire-pulse under .ci/with-pipewire (CI runs this suite under both).
    @Test func theSameOnTheAmbientServer() throws {
        let address = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        guard try run(["pactl"] + (address.map { ["-s", $0] } ?? []) + ["info"]).contains("Server Name") else {
            print("skipped: no sound server answers (run under .ci/with-pulse or .ci/with-pipewire)")
            return
        }
        print("waveform on \(try run(["pactl"] + (address.map { ["-s", $0] } ?? []) + ["info"]).split(separator: "\n").first { $0.hasPrefix("Server Name") } ?? "")")
        try check(server: address)
    }

    /// Assets/clicks.ahap with its audio on the same 4-channel sink: one stream carries both, the
    /// clicks on the front pair, the bursts on the rear; each burst starts within one sample of its
    /// click (private PulseAudio server).
    @Test func audioAndHapticsOnOneSinkShareAStreamSampleLocked() throws {
        let server = try PrivatePulseServer()
        try server.start()
        try checkMixed(server: "unix:\(server.socket)")
    }

    /// The same on the ambient server (PulseAudio, or PipeWire in CI's PipeWire run).
    @Test func audioAndHapticsShareAStreamOnTheAmbientServer() throws {
        let address = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        guard try run(["pactl"] + (address.map { ["-s", $0] } ?? []) + ["info"]).contains("Server Name") else {
            print("skipped: no sound server answers (run under .ci/with-pulse or .ci/with-pipewire)")
            return
        }
        try checkMixed(server: address)
    }

    /// Loads a 4-channel null sink (FL FR RL RR, 48 kHz), records its monitor with parec while
    /// `body` plays to it, and returns the four channels recorded.
    private func recordQuadSink(server address: String?, _ body: (String) throws -> Void) throws -> [[Float]] {
        let s = address.map { ["-s", $0] } ?? []
        let sinkName = "quad-\(UUID().uuidString.prefix(8))"
        let module = try run(["pactl"] + s + ["load-module", "module-null-sink", "sink_name=\(sinkName)", "channels=4",
                              "channel_map=front-left,front-right,rear-left,rear-right", "rate=48000"])
        try #require(Int(module) != nil, "the 4-channel null sink: \(module)")
        defer { _ = try? run(["pactl"] + s + ["unload-module", module]) }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-quad-\(UUID().uuidString).raw")
        defer { try? FileManager.default.removeItem(at: file) }
        var recorder = spawn(["parec"] + s + ["-d", "\(sinkName).monitor", "--format=float32le", "--channels=4",
                              "--channel-map=front-left,front-right,rear-left,rear-right", "--rate=48000", "--latency-msec=10", "--raw", file.path])
        try #require(recorder > 0, "parec (pulseaudio-utils)")
        defer { if recorder > 0 { kill(recorder, SIGTERM); wait(recorder) } }
        usleep(300_000)
        try body(sinkName)
        // The recorder gets what the monitor has buffered (PipeWire hands it on in larger pieces).
        usleep(300_000)
        kill(recorder, SIGTERM)
        wait(recorder)
        recorder = -1
        let bytes = try Data(contentsOf: file)
        let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return (0..<4).map { c in stride(from: c, to: samples.count, by: 4).map { samples[$0] } }
    }

    private func checkMixed(server address: String?) throws {
        let clicks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Assets/clicks.ahap")
        let wav = "audio/click-48k-mono-16.wav"
        var mixed = false, late = -1
        let channels = try recordQuadSink(server: address) { sinkName in
            let audio = PulseAudioOutput(configuration: .init(sink: sinkName, server: address))
            let output = WaveformOutput(configuration: .init(sink: sinkName, channels: .rear, server: address, audio: audio))
            let engine = try HapticEngine(configuration: .init(backend: output, audio: audio, hapticLatency: output.configuration.lead))
            try engine.start()
            let pattern = try AHAPReader().read(contentsOf: clicks).pattern
            let player = try engine.makePlayer(with: pattern, audioFiles: [wav: clicks.deletingLastPathComponent().appendingPathComponent(wav)])
            let done = DispatchSemaphore(value: 0)
            player.completionHandler = { _ in done.signal() }
            try player.start(atTime: engine.currentTime + 0.3)
            #expect(done.wait(timeout: .now() + 30) == .success)
            mixed = output.mixedInto === audio
            #expect(engine.stop() == nil)
            late = output.lateCommands
        }
        #expect(mixed, "the drive signal rode in the audio's stream")
        #expect(late == 0)
        #expect(channels[0] == channels[1], "the mono click in both front channels")
        #expect(channels[2] == channels[3], "both actuators get the same signal")
        let front = channels[0], rear = channels[2]
        // Click onsets: each click's first sample is 0.708 of full scale.
        let clickStarts = onsets(front, quiet: 2_400)
        try #require(clickStarts.count == 8, "8 clicks in front: \(clickStarts)")
        // Burst starts, to the sample: the recorded rear matched against the burst the synthesizer
        // makes for this tap (intensity 1, sharpness 0.8), at each lag within ±48 frames of the
        // threshold onset (a Hann-windowed burst crosses any threshold some frames after it starts).
        var synth = WaveformSynth(profile: .dualSense, sampleRate: 48_000)
        synth.trigger(intensity: 1, sharpness: 0.8)
        var template = [Float](repeating: 0, count: 480)
        template.withUnsafeMutableBufferPointer { synth.render(into: $0.baseAddress!, count: 480) }
        let burstOnsets = onsets(rear, quiet: 2_400)
        try #require(burstOnsets.count == 8, "8 bursts in the rear: \(burstOnsets)")
        var offsets: [Int] = []
        for (click, onset) in zip(clickStarts, burstOnsets) {
            let lags = max(0, onset - 48)...min(rear.count - template.count, onset)
            let best = lags.min { a, b in
                let ea = template.indices.reduce(Float(0)) { $0 + (rear[a + $1] - template[$1]) * (rear[a + $1] - template[$1]) }
                let eb = template.indices.reduce(Float(0)) { $0 + (rear[b + $1] - template[$1]) * (rear[b + $1] - template[$1]) }
                return ea < eb
            }!
            offsets.append(best - click)
            // No haptic signal in front, no click in the rear.
            #expect(front[(click + 200)..<(click + 480)].allSatisfy { $0 == 0 }, "front after the click is silent")
        }
        print("mixed stream: burst start − click onset per pair: \(offsets) samples")
        #expect(offsets.allSatisfy { abs($0) <= 1 }, "within one sample: \(offsets)")
    }

    private func check(server address: String?) throws {
        let s = address.map { ["-s", $0] } ?? []
        let sinkName = "quad-\(UUID().uuidString.prefix(8))"
        let module = try run(["pactl"] + s + ["load-module", "module-null-sink", "sink_name=\(sinkName)", "channels=4",
                              "channel_map=front-left,front-right,rear-left,rear-right", "rate=48000"])
        try #require(Int(module) != nil, "the 4-channel null sink: \(module)")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hapsync-quad-\(UUID().uuidString).raw")
        defer { try? FileManager.default.removeItem(at: file) }
        var recorder = spawn(["parec"] + s + ["-d", "\(sinkName).monitor", "--format=float32le", "--channels=4",
                              "--channel-map=front-left,front-right,rear-left,rear-right", "--rate=48000", "--latency-msec=10", "--raw", file.path])
        try #require(recorder > 0, "parec (pulseaudio-utils)")
        defer { if recorder > 0 { kill(recorder, SIGTERM); wait(recorder) } }
        usleep(300_000)

        var configuration = WaveformOutput.Configuration(sink: sinkName, channels: .rear)
        configuration.server = address
        let output = WaveformOutput(configuration: configuration)
        let engine = try HapticEngine(configuration: .init(backend: output, hapticLatency: configuration.lead))
        try engine.start()
        // A tap (sharpness 0.8: 217 Hz), then 0.3 s at sharpness 0 (60 Hz) and 0.3 s at 1 (300 Hz).
        let pattern = try AHAPPatternBuilder().transient(at: 0, intensity: 1, sharpness: 0.8)
            .continuous(at: 0.2, duration: 0.3, intensity: 0.8, sharpness: 0, attack: 0, release: 0)
            .continuous(at: 0.7, duration: 0.3, intensity: 0.8, sharpness: 1, attack: 0, release: 0).build()
        let player = try engine.makePlayer(with: pattern)
        let done = DispatchSemaphore(value: 0)
        player.completionHandler = { _ in done.signal() }
        try player.start(atTime: engine.currentTime + 0.2)
        #expect(done.wait(timeout: .now() + 10) == .success)
        usleep(400_000)
        print("waveform: \(engine.statistics.applied) commands applied, \(output.lateCommands) late")
        #expect(engine.stop() == nil)
        // The recorder gets what the monitor has buffered (PipeWire hands it on in larger pieces).
        usleep(300_000)
        kill(recorder, SIGTERM)
        wait(recorder)
        recorder = -1
        _ = try? run(["pactl"] + s + ["unload-module", module])

        let bytes = try Data(contentsOf: file)
        let samples = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let channels = (0..<4).map { c in stride(from: c, to: samples.count, by: 4).map { samples[$0] } }
        let peaks = channels.map { $0.map { abs($0) }.max() ?? 0 }
        #expect(peaks[0] < 1e-4 && peaks[1] < 1e-4, "front channels silent: \(peaks)")
        #expect(peaks[2] > 0.5 && peaks[2] <= 0.9 + 1e-6, "rear carries the signal within the profile's peak: \(peaks)")
        #expect(channels[2] == channels[3], "both actuators get the same signal")
        let rear = channels[2]
        let starts = onsets(rear, quiet: 2_400)
        let envelope = stride(from: 0, to: rear.count, by: 480).map { i in rear[i..<min(rear.count, i + 480)].map { abs($0) }.max() ?? 0 }
        try #require(starts.count == 3, "a tap and two events: \(starts); 10 ms peaks: \(envelope.map { ($0 * 100).rounded() / 100 })")
        // Counted in the sink's frames: 0.2 s and 0.7 s after the tap, within 2 ms (the pattern
        // runs on CLOCK_MONOTONIC, placed in sink frames by a clock fit still settling in its
        // first second: measured 0-1.1 ms off).
        #expect(abs(starts[1] - starts[0] - 9_600) < 96 && abs(starts[2] - starts[0] - 33_600) < 96,
                "onsets \(starts): \(starts[1] - starts[0] - 9_600) and \(starts[2] - starts[0] - 33_600) frames off")
        let low = frequency(rear[(starts[1] + 2_400)..<(starts[1] + 12_000)], rate: 48_000)
        let high = frequency(rear[(starts[2] + 2_400)..<(starts[2] + 12_000)], rate: 48_000)
        #expect(abs(low - 60) < 2 && abs(high - 300) < 3, "sharpness 0 → \(low) Hz, 1 → \(high) Hz")
        #expect(output.lateCommands == 0)
    }
}
