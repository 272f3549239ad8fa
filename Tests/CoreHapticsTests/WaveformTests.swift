import CoreHaptics
import Foundation
import HapSyncLiveTesting
import HapSyncMeasurement
import HapSyncTestSupport
import Testing

/// `HAPSYNC_HAPTICS=waveform:SINK:rear` from an app written for Core Haptics: with its audio on the
/// same 4-channel sink (a DualSense's layout), eight clicks with a tap at each come out in front and
/// its taps as bursts in the rear, each burst within one sample of its click; the trace beside it
/// (`HAPSYNC_TRACE`) holds the drive's block records.
@Suite("CoreHaptics: waveform haptics", .serialized)
struct CoreHapticsWaveformTests {
    @Test func aWaveformOutputFromTheEnvironmentPlaysBesideTheAudio() async throws {
        let server = try PrivatePulseServer()
        try server.start()
        try await retryingWhenStalled("Core Haptics, waveform beside the audio") {
            let address = "unix:\(server.socket)"
            let recording = try QuadSinkRecording(server: address)
            let traceFolder = try TemporaryDirectory("ch-waveform")
            defer { traceFolder.remove() }
            let trace = traceFolder.file("ch-waveform.jsonl")
            let engine = try CHHapticEngine(environment: ["HAPSYNC_HAPTICS": "waveform:\(recording.sink):rear", "HAPSYNC_SINK": recording.sink,
                                                          "PULSE_SERVER": address, "HAPSYNC_TRACE": trace.path])
            try await engine.start()
            let click = TestFiles.asset("audio/click-48k-mono-16.wav")
            let resource = try engine.registerAudioResource(click, options: [CHHapticAudioResourceKeyUseVolumeEnvelope: false])
            // Assets/clicks.ahap as an app builds it: eight clicks, each with a tap at the same time.
            let events = (1...8).flatMap { k in
                [CHHapticEvent(audioResourceID: resource, parameters: [], relativeTime: 0.25 * Double(k)),
                 CHHapticEvent(eventType: .hapticTransient, parameters: [CHHapticEventParameter(parameterID: .hapticIntensity, value: 1),
                                                                         CHHapticEventParameter(parameterID: .hapticSharpness, value: 0.8)],
                               relativeTime: 0.25 * Double(k))]
            }
            let player = try engine.makeAdvancedPlayer(with: CHHapticPattern(events: events, parameters: []))
            let done = AsyncStream<Error?>.makeStream()
            player.completionHandler = { done.continuation.yield($0) }
            try player.start(atTime: CHHapticTimeImmediate)
            #expect(recording.playbackStreams() == 1, "one stream on the sink carries audio and haptics")
            for await error in done.stream {
                #expect(error == nil)
                break
            }
            try await engine.stop()
            let channels = try recording.finish()
            let m = BurstAlignment.measure(audio: channels[0], drive: channels[2],
                                           burst: BurstAlignment.burst(profile: .dualSense, intensity: 1, sharpness: 0.8))
            #expect(m.offsets.count == 8 && m.offsets.allSatisfy { $0 == 0 }, "clicks \(m.clicks), bursts \(m.bursts): \(m.offsets)")
            let text = (try? String(contentsOf: trace, encoding: .utf8)) ?? ""
            #expect(text.contains("\"kind\":\"block\"") && text.contains("\"kind\":\"transient\""), "the trace: \(text.prefix(300))")
        }
    }
}
