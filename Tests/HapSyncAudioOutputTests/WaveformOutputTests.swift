import Foundation
import Glibc
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncHapticOutput
import HapSyncLiveTesting
import HapSyncMeasurement
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// The waveform output on a 4-channel null sink (front-left, front-right, rear-left, rear-right)
/// of a private PulseAudio server, its monitor recorded with `parec`: the rear channels carry the
/// drive signal (frequency by sharpness, measured in the recording), the front ones nothing, and
/// the taps and events lie where the pattern puts them, counted in the sink's own frames.
@Suite("Waveform haptics on an audio sink", .serialized)
struct WaveformOutputTests {
    private func run(_ args: [String]) throws -> String { SoundTools.run(args) }

    /// The frequency over a stretch, Hz: from the median period between upward zero crossings, so a
    /// gap in the stream (an underrun's silence) does not lengthen it.
    private func frequency(_ x: ArraySlice<Float>, rate: Double) -> Double {
        var crossings: [Double] = []
        var i = x.startIndex + 1
        while i < x.endIndex {
            // Where the line between the two samples crosses zero, to a fraction of a sample.
            if x[i - 1] < 0, x[i] >= 0 { crossings.append(Double(i - 1) + Double(-x[i - 1] / (x[i] - x[i - 1]))) }
            i += 1
        }
        guard crossings.count > 2 else { return 0 }
        let periods = zip(crossings.dropFirst(), crossings).map { $0 - $1 }.sorted()
        return rate / periods[periods.count / 2]
    }

    /// On a private PulseAudio server of the test's own.
    @Test func theRearChannelsCarryTheDriveSignalWhereThePatternPutsIt() async throws {
        let server = try PrivatePulseServer()
        try server.start()
        try await retryingWhenStalled("waveform, own stream, private server") { try check(server: "unix:\(server.socket)") }
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
    @Test(.needsPulseAudio) func theSameOnTheAmbientServer() async throws {
        let address = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        print("waveform on \(try run(["pactl"] + (address.map { ["-s", $0] } ?? []) + ["info"]).split(separator: "\n").first { $0.hasPrefix("Server Name") } ?? "")")
        try await retryingWhenStalled("waveform, own stream, ambient server") { try check(server: address) }
    }

    /// Assets/clicks.ahap with its audio on the same 4-channel sink: one stream carries both, the
    /// clicks on the front pair, the bursts on the rear; each burst starts within one sample of its
    /// click (private PulseAudio server).
    @Test func audioAndHapticsOnOneSinkShareAStreamSampleLocked() async throws {
        let server = try PrivatePulseServer()
        try server.start()
        try await retryingWhenStalled("waveform, mixed, private server") { try checkMixed(server: "unix:\(server.socket)") }
    }

    /// The same on the ambient server (PulseAudio, or PipeWire in CI's PipeWire run).
    @Test(.needsPulseAudio) func audioAndHapticsShareAStreamOnTheAmbientServer() async throws {
        let address = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        try await retryingWhenStalled("waveform, mixed, ambient server") { try checkMixed(server: address) }
    }

    /// A stream of its own, natively, beside native PipeWire audio on another sink, under
    /// .ci/with-pipewire: the same signal where the pattern puts it.
    @Test(.needsPipeWire)
    func aNativeStreamOfItsOwnBesideNativeAudio() async throws {
        try await retryingWhenStalled("waveform, own native stream") { try check(server: nil, nativeAudio: true) }
    }

    /// The same mixed into a native PipeWire stream (`PipeWireOutput`), under .ci/with-pipewire.
    @Test(.needsPipeWire)
    func audioAndHapticsShareANativePipeWireStream() async throws {
        try await retryingWhenStalled("waveform, mixed, native PipeWire") { try checkMixed(server: nil, native: true) }
    }

    /// The trace's block records: consecutive frames from 0, one burst begun, and the drive in
    /// force as the pattern says (0.8 at 60 Hz, then 0.5 at 300 Hz).
    private func checkBlocks(_ path: String) {
        let blocks = (try? TraceRecord.read(contentsOf: path))?.blocks ?? []
        #expect(blocks.count > 20, "a record per block: \(blocks.count)")
        var next: Int64 = 0
        for b in blocks {
            #expect(b.frame == next, "blocks follow each other: \(b)")
            next = b.frame + Int64(b.frames)
        }
        #expect(blocks.reduce(0) { $0 + $1.transients } == 1, "one burst")
        let levels = Set(blocks.filter { $0.intensity > 0 }.map { "\($0.intensity) \($0.frequencyHz.rounded())" })
        #expect(levels.contains("0.8 60.0") && levels.contains("0.5 300.0"), "the drive in force per block: \(levels)")
    }

    private func checkMixed(server address: String?, native: Bool = false) throws {
        let clicks = TestFiles.asset("clicks.ahap")
        let wav = "audio/click-48k-mono-16.wav"
        let recording = try QuadSinkRecording(server: address)
        let audio: SoundServerOutput = native ? PipeWireOutput(configuration: .init(sink: recording.sink))
            : PulseAudioOutput(configuration: .init(sink: recording.sink, server: address))
        let output = WaveformOutput(configuration: .init(sink: recording.sink, channels: .rear, server: address, audio: audio))
        let engine = try HapticEngine(configuration: .init(backend: output, audio: audio, hapticLatency: output.configuration.lead))
        try engine.start()
        let pattern = try AHAPReader().read(contentsOf: clicks).pattern
        let player = try engine.makePlayer(with: pattern, audioFiles: [wav: clicks.deletingLastPathComponent().appendingPathComponent(wav)])
        let done = DispatchSemaphore(value: 0)
        player.completionHandler = { _ in done.signal() }
        try player.start(atTime: engine.currentTime + 0.3)
        #expect(recording.playbackStreams() == 1, "one stream on the sink carries audio and haptics")
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(output.mixedInto === audio, "the drive signal rode in the audio's stream")
        #expect(engine.stop() == nil)
        #expect(output.lateCommands == 0)
        let channels = try recording.finish()
        #expect(channels[0] == channels[1], "the mono click in both front channels")
        #expect(channels[2] == channels[3], "both actuators get the same signal")
        let front = channels[0], rear = channels[2]
        // Each burst's start found to the sample by matching the burst the synthesizer makes for
        // this tap (intensity 1, sharpness 0.8), against each click's onset.
        let m = BurstAlignment.measure(audio: front, drive: rear, burst: BurstAlignment.burst(profile: .dualSense, intensity: 1, sharpness: 0.8))
        try #require(m.clicks.count == 8 && m.bursts.count == 8 && m.offsets.count == 8, "8 clicks \(m.clicks) and 8 bursts \(m.bursts)")
        for click in m.clicks {
            #expect(front[min(front.count, click + 200)..<min(front.count, click + 480)].allSatisfy { $0 == 0 }, "no drive signal in front after the click")
        }
        print("mixed stream: burst start − click onset per pair: \(m.offsets) samples")
        // The issue asks for one sample; one stream makes it exact (two streams measure up to 4).
        #expect(m.offsets.allSatisfy { $0 == 0 }, "at the same sample: \(m.offsets)")
    }

    /// With `nativeAudio`, the engine's audio is PipeWire natively on the default sink, so the
    /// drive, on another sink, gets a native stream of its own.
    private func check(server address: String?, nativeAudio: Bool = false) throws {
        let recording = try QuadSinkRecording(server: address)
        let folder = try TemporaryDirectory("blocks")
        defer { folder.remove() }
        let tracePath = folder.file("blocks.jsonl").path
        let trace = TraceBackend(path: tracePath)
        let audio: SoundServerOutput? = nativeAudio ? PipeWireOutput() : nil
        let output = WaveformOutput(configuration: .init(sink: recording.sink, channels: .rear, server: address, audio: audio, recorder: trace))
        let engine = try HapticEngine(configuration: .init(backend: FanOutBackend([output, trace]), audio: audio, hapticLatency: output.configuration.lead))
        try engine.start()
        // A tap (sharpness 0.8: 217 Hz), then 0.3 s at intensity 0.8, sharpness 0 (60 Hz) and 0.3 s
        // at intensity 0.5, sharpness 1 (300 Hz).
        let pattern = try AHAPPatternBuilder().transient(at: 0, intensity: 1, sharpness: 0.8)
            .continuous(at: 0.2, duration: 0.3, intensity: 0.8, sharpness: 0, attack: 0, release: 0)
            .continuous(at: 0.7, duration: 0.3, intensity: 0.5, sharpness: 1, attack: 0, release: 0).build()
        let player = try engine.makePlayer(with: pattern)
        let done = DispatchSemaphore(value: 0)
        player.completionHandler = { _ in done.signal() }
        try player.start(atTime: engine.currentTime + 0.2)
        #expect(done.wait(timeout: .now() + 10) == .success)
        usleep(400_000)
        print("waveform: \(engine.statistics.applied) commands applied, \(output.lateCommands) late")
        #expect(output.mixedInto == nil, "no audio on its sink: a stream of its own")
        #expect(output.playsNatively == nativeAudio)
        if nativeAudio { #expect(engine.realtimeStatus.threads.contains { $0.name == "hapsync-wave" }, "\(engine.realtimeStatus)") }
        #expect(engine.stop() == nil)
        let channels = try recording.finish()
        checkBlocks(tracePath)
        let peaks = channels.map { $0.map { abs($0) }.max() ?? 0 }
        #expect(peaks[0] < 1e-4 && peaks[1] < 1e-4, "front channels silent: \(peaks)")
        #expect(peaks[2] > 0.5 && peaks[2] <= 0.9 + 1e-6, "rear carries the signal within the profile's peak: \(peaks)")
        #expect(channels[2] == channels[3], "both actuators get the same signal")
        let rear = channels[2]
        let starts = BurstAlignment.onsets(rear)
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
        // Amplitude by intensity: intensity^(1/0.6) of full scale (0.8 → 0.689, 0.5 → 0.315), as
        // the steady part's peak; 60 Hz loses 1.4 % in the 10 Hz DC blocker.
        let lowPeak = rear[(starts[1] + 2_400)..<(starts[1] + 12_000)].map { abs($0) }.max() ?? 0
        let highPeak = rear[(starts[2] + 2_400)..<(starts[2] + 12_000)].map { abs($0) }.max() ?? 0
        let expected = (ActuatorProfile.amplitude(intensity: 0.8), ActuatorProfile.amplitude(intensity: 0.5))
        #expect(abs(Double(lowPeak) / expected.0 - 1) < 0.04 && abs(Double(highPeak) / expected.1 - 1) < 0.04,
                "intensity 0.8 → \(lowPeak) (expected \(expected.0)), 0.5 → \(highPeak) (expected \(expected.1))")
        #expect(output.lateCommands == 0)
    }
}
