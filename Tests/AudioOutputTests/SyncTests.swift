import AHAP
import AudioOutput
import Foundation
import HapSyncCore
import HapSyncMeasurement
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// Audio and haptics through the real PulseAudio server (.ci/run starts one with a null sink).
/// The bounds are generous on purpose: a shared, noisy machine must not fail this test; the
/// benchmark reports the real distribution.
@Suite("Audio-haptic sync through PulseAudio", .serialized)
struct SyncTests {
    static let clicks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Assets/clicks.ahap")

    @Test func clickOnsetsInTheMonitorMeetTheTaps() throws {
        // Record the sink's monitor first: this also keeps an idle null sink in low-latency mode.
        let recorder = PulseAudioRecorder(source: "@DEFAULT_MONITOR@")
        try recorder.start()
        defer { recorder.stop() }
        let haptics = RecordingHapticBackend()
        let audio = PulseAudioOutput()
        let engine = try HapticEngine(configuration: .init(backend: haptics, lockMemory: false, audio: audio))
        try engine.start()
        defer { engine.stop() }
        let pattern = try AHAPReader().read(contentsOf: Self.clicks).pattern
        let file = Self.clicks.deletingLastPathComponent().appendingPathComponent("audio/click-48k-mono-16.wav")
        let player = try engine.makePlayer(with: pattern, audioFiles: ["audio/click-48k-mono-16.wav": file])
        let done = DispatchSemaphore(value: 0)
        player.completionHandler = { _ in done.signal() }
        try player.start(atTime: engine.currentTime + 0.3)
        #expect(done.wait(timeout: .now() + 30) == .success)
        Thread.sleep(forTimeInterval: 0.4)   // let the monitor capture the last click
        let startFrame = try #require(player.audioStartFrame, "the player followed the audio clock")

        let taps = haptics.entries.filter { $0.command.kind == .transient }
        #expect(taps.count == 8)
        // From the outside: click onsets in the monitor recording, on CLOCK_MONOTONIC.
        let onsets = ClickOnsets.frames(in: recorder.recording).compactMap { recorder.heardTime(ofRecordedFrame: Int64($0)) }
        #expect(onsets.count == 8, "found \(onsets.count) click onsets in the monitor")
        var measured: [Double] = []
        for tap in taps {
            guard let nearest = onsets.min(by: { abs(Int64(bitPattern: $0 &- tap.command.released)) < abs(Int64(bitPattern: $1 &- tap.command.released)) }) else { continue }
            measured.append(Double(Int64(bitPattern: nearest &- tap.command.released)) / 1e6)
        }
        // From the engine's own audio clock: where each tap's audio frame was heard.
        let fit = audio.clock.fit
        let engineOffsets = taps.compactMap { tap -> Double? in
            AudioHapticOffset.offset(hapticAt: tap.command.released, patternTime: tap.command.patternTime, startFrame: startFrame,
                                     sampleRate: audio.sampleRate, heard: { fit.time(ofFrame: $0) }).map { Double($0) / 1e6 }
        }
        let sorted = measured.sorted()
        print("sync: monitor onset − haptic release (ms): \(sorted.map { String(format: "%.2f", $0) }.joined(separator: " "))")
        print("sync: haptic release − audio heard by the engine's clock (ms): \(engineOffsets.map { String(format: "%.3f", $0) }.joined(separator: " "))")
        print("sync: sink clock \(String(format: "%+.1f", audio.clock.rateErrorPPM)) ppm, underruns \(audio.underruns)")
        #expect(measured.count == 8)
        if !sorted.isEmpty {
            #expect(abs(sorted[sorted.count / 2]) < 30, "median offset \(sorted[sorted.count / 2]) ms")
            #expect(sorted.allSatisfy { abs($0) < 100 })
        }
        #expect(engineOffsets.allSatisfy { abs($0) < 50 })
    }

    @Test func noServerSaysSoAndSuggestsAudioNone() {
        let audio = PulseAudioOutput(configuration: .init(sink: "no-such-sink-\(UUID().uuidString.prefix(8))"))
        #expect {
            try audio.open()
        } throws: { error in
            "\(error)".contains("has no sink named")
        }
        #expect(PulseAudioOutput.PulseError.noServer("Connection refused").description.contains("--audio none"))
    }
}
