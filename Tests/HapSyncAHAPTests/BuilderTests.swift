import Foundation
import HapSyncAHAP
import Testing

@Suite("Builder")
struct BuilderTests {
    @Test func buildsWhatAFileWouldSay() throws {
        let built = try AHAPPatternBuilder()
            .metadata("Project", "tests")
            .transient(at: 0, intensity: 0.8, sharpness: 0.3)
            .continuous(at: 0.05, duration: 0.4, intensity: 1, sharpness: 0.2, attack: 0.1, release: 0.3, sustained: false)
            .audioContinuous(at: 0, duration: 0.5, volume: 0.5, pitch: -0.2)
            .audioCustom(at: 0.1, path: "a.wav", duration: 1, loop: true, useVolumeEnvelope: false)
            .parameter(.hapticSharpnessControl, -0.5, at: 0.2)
            .curve(.hapticIntensityControl, at: 0.05, points: [(0, 1), (0.4, 0.2)])
            .build()
        let text = """
            { "Version": 1.0, "Metadata": { "Project": "tests" }, "Pattern": [
              { "Event": { "Time": 0, "EventType": "HapticTransient", "EventParameters": [
                { "ParameterID": "HapticIntensity", "ParameterValue": 0.8 }, { "ParameterID": "HapticSharpness", "ParameterValue": 0.3 } ] } },
              { "Event": { "Time": 0.05, "EventType": "HapticContinuous", "EventDuration": 0.4, "EventParameters": [
                { "ParameterID": "HapticIntensity", "ParameterValue": 1 }, { "ParameterID": "HapticSharpness", "ParameterValue": 0.2 },
                { "ParameterID": "AttackTime", "ParameterValue": 0.1 }, { "ParameterID": "ReleaseTime", "ParameterValue": 0.3 },
                { "ParameterID": "Sustained", "ParameterValue": 0 } ] } },
              { "Event": { "Time": 0, "EventType": "AudioContinuous", "EventDuration": 0.5, "EventParameters": [
                { "ParameterID": "AudioVolume", "ParameterValue": 0.5 }, { "ParameterID": "AudioPitch", "ParameterValue": -0.2 } ] } },
              { "Event": { "Time": 0.1, "EventType": "AudioCustom", "EventWaveformPath": "a.wav", "EventDuration": 1,
                "EventWaveformLoopEnabled": true, "EventWaveformUseVolumeEnvelope": false } },
              { "Parameter": { "Time": 0.2, "ParameterID": "HapticSharpnessControl", "ParameterValue": -0.5 } },
              { "ParameterCurve": { "Time": 0.05, "ParameterID": "HapticIntensityControl", "ParameterCurveControlPoints": [
                { "Time": 0, "ParameterValue": 1 }, { "Time": 0.4, "ParameterValue": 0.2 } ] } }
            ] }
            """
        #expect(built == (try AHAPReader().read(data: Data(text.utf8)).pattern))
        #expect(abs(built.duration() - 1.1) < 1e-12)
    }

    @Test func isStrictAndNamesThePath() {
        do {
            _ = try AHAPPatternBuilder().transient(at: 0).transient(at: 0.1, intensity: 1.2).build()
            Issue.record("an out-of-range value must not build")
        } catch {
            #expect(error.errors.count == 1)
            #expect(error.errors.first?.code == .clamped)
            #expect(error.errors.first?.path.description == "Pattern[1].Event.EventParameters[0].ParameterValue")
            // An error, not a leniency: nothing was clamped.
            #expect(error.errors.first?.message == "HapticIntensity value 1.2 is outside 0.0...1.0", "\(error.errors)")
            #expect(error.errors.first?.line == nil, "patterns built in code have no line numbers")
        }
        do {
            _ = try AHAPPatternBuilder().curve(.audioPanControl, at: 0, points: [(0.5, 0), (0.1, 1)]).build()
            Issue.record("out-of-order points must not build")
        } catch {
            #expect(error.errors.map(\.code) == [.controlPointsOutOfOrder])
        }
    }

    @Test func durationFollowsCoreHapticsRule() {
        let pattern = AHAPPattern(entries: [
            .event(AHAPEvent(time: 0.5, type: .hapticTransient)),
            .event(AHAPEvent(time: 0.2, type: .hapticContinuous, duration: 0.4)),
            .event(AHAPEvent(time: 0.1, type: .audioCustom, waveformPath: "a.wav")),
            .parameter(AHAPDynamicParameter(.hapticIntensityControl, 1, time: 0.55)),
        ])
        #expect(abs(pattern.duration() - 0.6) < 1e-12, "continuous 0.2 + 0.4 ends last; a transient counts only its padding")
        #expect(abs(pattern.duration { $0 == "a.wav" ? 0.75 : nil } - 0.85) < 1e-12, "an AudioCustom without EventDuration lasts as long as its file")
        let curve = AHAPPattern(entries: [.curve(AHAPParameterCurve(.audioVolumeControl, time: 1, controlPoints: [.init(time: 0, value: 1), .init(time: 0.5, value: 0)]))])
        #expect(curve.duration() == 1.5)
    }
}
