import Foundation
import HapSyncAHAP
import HapSyncAudioOutput
import HapSyncConcurrency
import HapSyncCore
import HapSyncRuntime
import HapSyncTestSupport
import Testing

/// Live audio parameters through the real PulseAudio output: AudioVolumeControl, AudioPanControl,
/// AudioPitchControl and AudioBrightnessControl sent and curved every 10 ms, and the player muted
/// and unmuted, while a tone, a looping file and a file converted from 44.1 kHz play under a
/// continuous haptic. What the mixer makes of them is checked sample by sample in HapSyncCoreTests'
/// MixerTests; here they go through the engine to the real threads. `.ci/rt-alloc-check` runs this
/// suite from the built test binary under its malloc counter, which must see no allocation on the
/// scheduler and output threads, nor on the audio thread while it mixes (hence the null backend:
/// the recording test double allocates as it records). It plays to a private server, so that the
/// sync test's recording of the shared server's monitor hears nothing of it.
@Suite("Live audio parameters through PulseAudio", .serialized)
struct LiveAudioParameterTests {
    @Test func sentAndCurvedWhilePlaying() throws {
        let server = try PrivatePulseServer()
        try server.start()
        defer { server.kill() }
        let audio = PulseAudioOutput(configuration: .init(server: "unix:\(server.socket)"))
        let engine = try HapticEngine(configuration: .init(backend: NullHapticBackend(), lockMemory: false, audio: audio))
        try engine.start()
        defer { engine.stop() }
        let hum = "hum-48k-stereo-16.flac", chime = "chime-44k1-stereo-24.wav"
        let pattern = try AHAPPatternBuilder()
            .audioContinuous(at: 0, duration: 1.2, volume: 0.5)
            .audioCustom(at: 0, path: hum, duration: 1.2, loop: true)
            .audioCustom(at: 0.3, path: chime)
            .continuous(at: 0, duration: 1.2, intensity: 0.8, sharpness: 0.5)
            .build()
        let player = try engine.makePlayer(with: pattern, audioFiles: [hum: assets.appendingPathComponent(hum),
                                                                       chime: assets.appendingPathComponent(chime)])
        let completion = DispatchSemaphore(value: 0)
        let finished = Locked<HapticPatternPlayer.Completion?>(nil)
        player.completionHandler = { c in
            finished.withLock { $0 = c }
            completion.signal()
        }
        try player.start(atTime: HapticEngine.timeImmediate)
        func curve(_ id: AHAPDynamicParameterID, _ values: [Double]) -> AHAPParameterCurve {
            AHAPParameterCurve(id, controlPoints: values.enumerated().map { .init(time: Double($0.offset) * 0.02, value: $0.element) })
        }
        for k in 0..<90 {
            let now = engine.currentTime
            switch k % 8 {
            case 0: try player.sendParameters([AHAPDynamicParameter(.audioVolumeControl, Double(k % 5) / 4)], atTime: now)
            case 1: try player.scheduleParameterCurve(curve(.audioPanControl, [-1, 1]), atTime: now)
            case 2: try player.sendParameters([AHAPDynamicParameter(.audioPitchControl, k % 16 == 2 ? 0.5 : -0.5)], atTime: now)
            case 3: try player.scheduleParameterCurve(curve(.audioBrightnessControl, [-0.5, 0.5]), atTime: now)
            case 4: try player.sendParameters([.init(.audioVolumeControl, 0.8, time: 0.02),
                                               .init(.audioPanControl, 0.3, time: 0.02),
                                               .init(.audioPitchControl, 0.1, time: 0.02),
                                               .init(.audioBrightnessControl, -0.2, time: 0.02)], atTime: now)
            case 5: try player.scheduleParameterCurve(curve(.audioVolumeControl, [0.2, 1, 0.6]), atTime: now)
            case 6: player.isMuted = true
            default: player.isMuted = false
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        // The deadline only bounds a broken run.
        #expect(completion.wait(timeout: .now() + 30) == .success)
        #expect(finished.withLock { $0 } == .finished, "it played to its end")
        #expect(player.audioStartFrame != nil, "it followed the audio clock")
        #expect(audio.droppedVoices == 0)
        #expect(engine.isRunning)
    }
}
