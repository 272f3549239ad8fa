import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncCore
import HapSyncLiveTesting
import HapSyncMeasurement
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// Audio and haptics through the real sound server: PulseAudio (.ci/with-pulse starts one with a
/// null sink), and PipeWire's pipewire-pulse under .ci/with-pipewire (.ci/run runs this suite under
/// both). Where a click is heard is measured from outside the engine twice: from a recording of
/// the default sink's monitor, timed by the server's reports for that recording, and from a pipe
/// sink read by a thread that times each read, which uses no timing report at all. The bounds are
/// generous on purpose where they are wall-clock timing: a shared, noisy machine must not fail
/// this test; the benchmark reports the real distribution.
@Suite("Audio-haptic sync through the sound server", .serialized)
struct SyncTests {
    static let clicks = TestFiles.asset("clicks.ahap")

    /// Assets/clicks.ahap played once on an engine with `audio`: its taps (one per click, released
    /// at the click's pattern time) and the output frame its pattern time 0 went to.
    struct ClickRun {
        var taps: [RecordingHapticBackend.Entry]
        var startFrame: Int64

        /// Haptic release − audio heard by the engine's own clock, ms, per tap.
        func engineOffsets(_ audio: SoundServerOutput) -> [Double] {
            let fit = audio.clock.fit
            return taps.compactMap { tap in
                AudioHapticOffset.offset(hapticAt: tap.command.released, patternTime: tap.command.patternTime, startFrame: startFrame,
                                         sampleRate: audio.sampleRate, heard: { fit.time(ofFrame: $0) }).map { Double($0) / 1e6 }
            }
        }
    }

    static func playClicks(on audio: SoundServerOutput) throws -> ClickRun {
        let haptics = RecordingHapticBackend()
        let engine = try HapticEngine(configuration: .init(backend: haptics, lockMemory: false, audio: audio))
        try engine.start()
        defer { engine.stop() }
        let pattern = try AHAPReader().read(contentsOf: clicks).pattern
        let file = clicks.deletingLastPathComponent().appendingPathComponent("audio/click-48k-mono-16.wav")
        let player = try engine.makePlayer(with: pattern, audioFiles: ["audio/click-48k-mono-16.wav": file])
        let done = DispatchSemaphore(value: 0)
        player.completionHandler = { _ in done.signal() }
        try player.start(atTime: engine.currentTime + 0.3)
        #expect(done.wait(timeout: .now() + 30) == .success)
        Thread.sleep(forTimeInterval: 0.4)   // let the recordings take in the last click
        let startFrame = try #require(player.audioStartFrame, "the player followed the audio clock")
        let taps = haptics.entries.filter { $0.command.kind == .transient }
        #expect(taps.count == 8)
        return ClickRun(taps: taps, startFrame: startFrame)
    }

    /// Each of `times` minus the nearest of `onsets` (ms; positive: `times` comes after), for those
    /// within 200 ms of one.
    static func offsets(_ times: [UInt64], from onsets: [UInt64]) -> [Double] {
        times.compactMap { t in
            onsets.map { Double(Int64(bitPattern: t &- $0)) / 1e6 }.min(by: { abs($0) < abs($1) }).flatMap { abs($0) < 200 ? $0 : nil }
        }
    }

    static func text(_ xs: [Double]) -> String { xs.map { String(format: "%.2f", $0) }.joined(separator: " ") }

    /// Expects an offset (ms) for each of the eight clicks, their median within `median` of 0 and
    /// each within `each`.
    static func expectEight(_ xs: [Double], median bound: Double, each: Double, _ what: String,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(xs.count == 8, "\(xs.count) of 8 clicks \(what)", sourceLocation: sourceLocation)
        guard !xs.isEmpty else { return }
        let median = xs.sorted()[xs.count / 2]
        #expect(abs(median) < bound, "median of \(what): \(median) ms", sourceLocation: sourceLocation)
        #expect(xs.allSatisfy { abs($0) < each }, "\(what): \(text(xs)) ms", sourceLocation: sourceLocation)
    }

    @Test(.needsPulseAudio) func clickOnsetsInTheMonitorMeetTheTaps() async throws {
        try await retryingWhenStalled("sync, monitor recording") {
            // Record the sink's monitor first: this also keeps an idle null sink in low-latency mode.
            let recorder = PulseAudioRecorder(source: "@DEFAULT_MONITOR@")
            try recorder.start()
            defer { recorder.stop() }
            let audio = PulseAudioOutput()
            let run = try Self.playClicks(on: audio)
            // From the outside: click onsets in the monitor recording, on CLOCK_MONOTONIC.
            let onsets = ClickOnsets.frames(in: recorder.recording).compactMap { recorder.heardTime(ofRecordedFrame: Int64($0)) }
            #expect(onsets.count == 8, "found \(onsets.count) click onsets in the monitor")
            let measured = Self.offsets(run.taps.map(\.command.released), from: onsets).sorted()
            let engineOffsets = run.engineOffsets(audio)
            print("sync (\(audio.serverName)): monitor onset − haptic release (ms): \(Self.text(measured.map { -$0 }))")
            print("sync (\(audio.serverName)): haptic release − audio heard by the engine's clock (ms): \(Self.text(engineOffsets))")
            print("sync (\(audio.serverName)): sink clock \(String(format: "%+.1f", audio.clock.rateErrorPPM)) ppm, underruns \(audio.underruns)")
            Self.expectEight(measured, median: 30, each: 100, "haptic release − monitor onset")
            #expect(engineOffsets.allSatisfy { abs($0) < 50 })
        }
    }

    /// The engine's claim against a speaker's: where its audio clock says each click is heard,
    /// against when a pipe sink's reader got it. Both come from the same run, so the machine's
    /// noise moves them together; they must agree within 1 ms (the median of the eight clicks).
    /// Through pipewire-pulse they differed by one PipeWire quantum (5.3 ms at the default 20 ms
    /// latency, 10.7 ms at 50 ms) until the output learned how it counts.
    @Test(.needsPulseAudio, arguments: [0.020, 0.050])
    func aPipeSinkHearsEachClickWhereTheEngineSaysItIsHeard(latency: Double) async throws {
        try await Self.pipeSinkAgreement(latency: latency, server: .pulse)
    }

    /// The same through PipeWire natively (`PipeWireOutput`: the clock from each cycle's
    /// `pw_stream_get_time_n`, no quantum learned), when a PipeWire server answers
    /// (.ci/with-pipewire).
    @Test(.needsPipeWire, arguments: [0.020, 0.050])
    func aPipeSinkHearsEachClickWhereNativePipeWireSaysItIsHeard(latency: Double) async throws {
        try await Self.pipeSinkAgreement(latency: latency, server: .pipewire)
    }

    /// Clicks to a pipe sink through `server`: where the engine's clock says each is heard against
    /// when the pipe's reader got it, the median within 1 ms.
    static func pipeSinkAgreement(latency: Double, server: AudioServerChoice) async throws {
        try await retryingWhenStalled("sync, pipe sink, \(server), \(Int(latency * 1000)) ms") {
            let reader = PipeSinkReader()
            try reader.start()
            defer { reader.stop() }
            let audio = try #require(server.output(sink: reader.sinkName, latency: latency, environment: ProcessInfo.processInfo.environment))
            let run = try Self.playClicks(on: audio)
            let onsets = ClickOnsets.frames(in: reader.recording).compactMap { reader.heardTime(ofFrame: Int64($0)) }
            #expect(onsets.count == 8, "found \(onsets.count) click onsets in the pipe (\(reader.reads) reads)")
            // Where the engine's clock says each click is heard, and how far after that the pipe got it.
            let fit = audio.clock.fit
            let claimed = run.taps.compactMap { fit.time(ofFrame: run.startFrame + FrameTiming.frames($0.command.patternTime, sampleRate: audio.sampleRate)) }
            let late = Self.offsets(onsets, from: claimed)
            let engineOffsets = run.engineOffsets(audio)
            let byPipe = Self.offsets(run.taps.map(\.command.released), from: onsets)
            let name = audio.serverDescription
            print("sync (\(name), pipe sink, \(Int(latency * 1000)) ms latency, reader \(reader.realtimeRefusal.map { "without SCHED_FIFO: \($0)" } ?? "SCHED_FIFO")): "
                  + "heard by the pipe − heard by the engine's clock (ms): \(Self.text(late))")
            print("sync (\(name), pipe sink): haptic release − heard by the pipe (ms): \(Self.text(byPipe)); by the engine's clock: \(Self.text(engineOffsets))")
            print("sync (\(name), pipe sink): \(reader.reads) reads, \(reader.discontinuities.count) discontinuities, sink clock \(String(format: "%+.1f", audio.clock.rateErrorPPM)) ppm, underruns \(audio.underruns)")
            Self.expectEight(late, median: 1, each: 10, "heard by the pipe − heard by the engine's clock")
        }
    }

    @Test(.needsPulseAudio) func aModuleTheServerRefusesIsNamedWithItsArguments() throws {
        // (PipeWire loads module-pipe-sink with an argument it does not know; no server has this module.)
        let connection = try PulseConnection(clientName: "HapSync test", server: nil, threadName: "hapsync-test")
        defer { connection.close() }
        #expect {
            try connection.withLock { () throws(PulseConnection.PulseError) in
                _ = try connection.loadModule("module-hapsync-none", arguments: "sink_name=x")
            }
        } throws: { error in
            "\(error)".hasPrefix("the PulseAudio server refused to load module-hapsync-none sink_name=x: ")
        }
    }

    @Test(.needsPulseAudio) func noServerSaysSoWithoutACLIFlag() {
        let audio = PulseAudioOutput(configuration: .init(sink: "no-such-sink-\(UUID().uuidString.prefix(8))"))
        #expect {
            try audio.open()
        } throws: { error in
            "\(error)".contains("has no sink named")
        }
        // The front end says how to play without audio in its own terms (FailedStartTests).
        let noServer = PulseAudioOutput.PulseError.noServer("Connection refused").description
        #expect(noServer.contains("play without audio") && !noServer.contains("--audio"))
    }
}
