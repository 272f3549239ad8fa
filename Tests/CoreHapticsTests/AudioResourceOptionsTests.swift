import Foundation
import HapSyncTestSupport
import Testing
@testable import CoreHaptics

/// `registerAudioResource(_:options:)`: the options become the flags of every event playing the
/// resource; unknown keys and values that are not Bools are errors naming them.
@Suite("CoreHaptics: audio resource options")
struct AudioResourceOptionsTests {
    @Test func optionsBecomeTheEventsFlags() throws {
        let engine = try CHHapticEngine(environment: ["HAPSYNC_HAPTICS": "none", "HAPSYNC_AUDIO": "none"])
        let wav = TestFiles.conformance.appendingPathComponent("StreamingAssets/CoreHaptics/Ricochet/Implode.wav")
        try #require(FileManager.default.fileExists(atPath: wav.path), "../shared/conformance is beside the checkout")
        let plain = try engine.registerAudioResource(wav)
        let looping = try engine.registerAudioResource(wav, options: [CHHapticAudioResourceKeyLoopEnabled: true,
                                                                      CHHapticAudioResourceKeyUseVolumeEnvelope: false])
        let events = [CHHapticEvent(audioResourceID: looping, parameters: [], relativeTime: 0, duration: 2),
                      CHHapticEvent(audioResourceID: plain, parameters: [], relativeTime: 0.5)]
        let made = try #require(try engine.makePlayer(with: try CHHapticPattern(events: events, parameters: [])) as? CHHapticPlayer)
        let timeline = made.player.timeline
        let flags = timeline.pattern.events.map { [$0.loopEnabled, $0.useVolumeEnvelope] }
        #expect(flags == [[true, false], [false, true]])
        #expect(timeline.voices.map(\.loop) == [true, false] && timeline.voices.map(\.useVolumeEnvelope) == [false, true])

        do {
            _ = try engine.registerAudioResource(wav, options: ["Loop": true])
            Issue.record("an unknown key must be refused")
        } catch let error as CHHapticError {
            #expect(error.code == .invalidParameterType && "\(error)".contains("Loop"), "\(error)")
        }
        #expect(throws: CHHapticError.self) { _ = try engine.registerAudioResource(wav, options: [CHHapticAudioResourceKeyLoopEnabled: "yes"]) }
    }
}
