import Foundation
import HapSyncAHAP
import HapSyncTestSupport
import Testing
@testable import HapSyncCore

let conformanceRoot = TestFiles.conformance

func close(_ a: Double, _ b: Double, _ tolerance: Double = 1e-9) -> Bool { abs(a - b) <= tolerance }

func timeline(_ build: (AHAPPatternBuilder) -> AHAPPatternBuilder, options: RenderOptions = RenderOptions(),
              audioLength: @escaping (String) -> Double? = { _ in nil }) throws -> PatternTimeline {
    try PatternTimeline(pattern: try build(AHAPPatternBuilder()).build(), options: options, audioLength: audioLength)
}

/// Every expectation below is worked out by hand from the documented semantics (docs/rendering.md);
/// the arithmetic is in the comments.
@Suite("Rendering semantics")
struct TimelineTests {
    @Test func envelopeTimeMapping() {
        // 10^(3x − 3): decades at x = 0, 1/3, 2/3, 1.
        #expect(close(Envelope.seconds(0), 0.001))
        #expect(close(Envelope.seconds(1.0 / 3), 0.01))
        #expect(close(Envelope.seconds(2.0 / 3), 0.1))
        #expect(close(Envelope.seconds(1), 1))
        #expect(close(Envelope.seconds(0.5), 0.031622776601683794))
        #expect(close(Envelope.seconds(-1), 0.001) && close(Envelope.seconds(2), 1), "clamped to 0...1")
    }

    @Test func implodeAtPointThreeAndPointNine() throws {
        // Implode.ahap: HapticContinuous at 0.2 s for 0.8 s, intensity 1.0, sharpness 0.2, default
        // envelope (1 ms attack). HapticIntensityControl curve at 0.2 s: (0, 0.5) (0.2, 1.0) (0.3, 0.6)
        // (0.4, 0.4) (0.8, 0.0). HapticSharpnessControl curve at 0.2 s: (0, 0) (0.2, 0) (0.8, 0.8).
        let url = conformanceRoot.appendingPathComponent("SampleAHAPs/Ricochet/Implode.ahap")
        let pattern = try AHAPReader().read(contentsOf: url).pattern
        let t = try PatternTimeline(pattern: pattern, audioLength: { $0.hasSuffix("Implode.wav") ? 0.998 : nil })
        // t = 0.3: curve-relative 0.1, halfway from 0.5 to 1.0 → 0.75; sharpness 0.2 + 0 = 0.2.
        let a = t.hapticState(at: 0.3)
        #expect(close(a.intensity, 0.75) && close(a.sharpness, 0.2))
        // t = 0.9: relative 0.7, between (0.4, 0.4) and (0.8, 0.0): 0.4 − 0.4 · 0.3/0.4 = 0.1;
        // sharpness control between (0.2, 0) and (0.8, 0.8): 0.8 · 0.5/0.6 = 0.6667 → 0.2 + 0.6667.
        let b = t.hapticState(at: 0.9)
        #expect(close(b.intensity, 0.1) && close(b.sharpness, 0.2 + 0.8 * 0.5 / 0.6))
        // Before the curves start (0.1 s) there is no haptic event yet; the audio voice plays at
        // volume 0.8 (AudioVolumeControl default 1, past its 5 ms fade-in).
        #expect(t.hapticState(at: 0.1) == .silent)
        #expect(t.voices.count == 1 && close(t.voices[0].end!, 0.998))
        #expect(close(t.voiceState(0, at: 0.3).gain, 0.8))
        // Duration: event 0.2 + 0.8 = 1.0; the release (1 ms) runs after it.
        #expect(close(t.duration, 1.0) && close(t.end, 1.001))
    }

    @Test func curveThatStartsAfterZero() throws {
        // Continuous 0...2 s at intensity 1. Intensity curve at 0.5 s, points at relative 0.2 (0.2)
        // and 0.7 (1.0), i.e. absolute 0.7 s and 1.2 s.
        let t = try timeline { $0.continuous(at: 0, duration: 2, intensity: 1, sharpness: 0.5)
            .curve(.hapticIntensityControl, at: 0.5, points: [(0.2, 0.2), (0.7, 1.0)]) }
        #expect(close(t.hapticState(at: 0.4).intensity, 1), "before the curve's Time: default 1")
        #expect(close(t.hapticState(at: 0.6).intensity, 0.2), "from its Time to its first point: the first value")
        #expect(close(t.hapticState(at: 0.95).intensity, 0.6), "halfway between 0.7 s and 1.2 s")
        #expect(close(t.hapticState(at: 1.8).intensity, 1.0), "after the last point: the last value")
    }

    @Test func sharpnessControlCannotLiftAboveOne() throws {
        let t = try timeline { $0.continuous(at: 0, duration: 1, intensity: 1, sharpness: 1.0)
            .parameter(.hapticSharpnessControl, 0.5, at: 0)
            .parameter(.hapticSharpnessControl, -0.3, at: 0.5) }
        #expect(close(t.hapticState(at: 0.25).sharpness, 1.0), "1.0 + 0.5 clamped to 1")
        #expect(close(t.hapticState(at: 0.75).sharpness, 0.7), "1.0 − 0.3")
    }

    @Test func unfinishedAttackReleasesFromWhereItGot() throws {
        // AttackTime 2/3 → 100 ms; EventDuration 50 ms; ReleaseTime 0 → 1 ms.
        let t = try timeline { $0.continuous(at: 0, duration: 0.05, intensity: 1, sharpness: 0.5, attack: 2.0 / 3) }
        #expect(close(t.hapticState(at: 0.025).intensity, 0.25), "25 ms into a 100 ms attack")
        #expect(close(t.hapticState(at: 0.0499).intensity, 0.499))
        #expect(close(t.hapticState(at: 0.0505).intensity, 0.25), "half way through the 1 ms release from 0.5")
        #expect(t.hapticState(at: 0.0511).intensity == 0)
    }

    @Test func attackDecayWithoutSustain() throws {
        // Sustained 0: attack 1 ms, DecayTime 2/3 → 100 ms; ends at 101 ms although EventDuration is 1 s.
        let t = try timeline { $0.continuous(at: 0, duration: 1, intensity: 0.8, decay: 2.0 / 3, sustained: false) }
        #expect(close(t.hapticState(at: 0.051).intensity, 0.4), "0.8 × (1 − 50/100)")
        #expect(t.hapticState(at: 0.2).intensity == 0)
        #expect(close(t.end, 1.0), "the pattern's duration still counts EventDuration")
    }

    @Test func envelopeControlsAreTakenAtStartAndRelease() throws {
        // AttackTime 1/3 + HapticAttackTimeControl 1/3 → 2/3 → 100 ms. ReleaseTime 0 + release
        // control 2/3 at the release start (1 s) → 100 ms.
        let t = try timeline { $0.continuous(at: 0, duration: 1, intensity: 1, attack: 1.0 / 3)
            .parameter(.hapticAttackTimeControl, 1.0 / 3, at: 0)
            .parameter(.hapticReleaseTimeControl, 2.0 / 3, at: 0.9) }
        #expect(close(t.hapticState(at: 0.05).intensity, 0.5))
        #expect(close(t.hapticState(at: 1.05).intensity, 0.5), "half of a 100 ms release")
    }

    @Test func overlappingContinuousEventsSumAndWeightSharpness() throws {
        let t = try timeline { $0.continuous(at: 0, duration: 1, intensity: 0.6, sharpness: 0.2)
            .continuous(at: 0.5, duration: 1, intensity: 0.3, sharpness: 0.8)
            .continuous(at: 0.7, duration: 1, intensity: 0.4, sharpness: 1.0) }
        // 0.4: first only.
        #expect(close(t.hapticState(at: 0.4).intensity, 0.6) && close(t.hapticState(at: 0.4).sharpness, 0.2))
        // 0.65: first two: 0.9; sharpness (0.6·0.2 + 0.3·0.8)/0.9 = 0.36/0.9 = 0.4.
        #expect(close(t.hapticState(at: 0.65).intensity, 0.9) && close(t.hapticState(at: 0.65).sharpness, 0.4))
        // 0.8: all three: 1.3 saturates at 1; sharpness (0.12 + 0.24 + 0.4)/1.3.
        let s = t.hapticState(at: 0.8)
        #expect(s.intensity == 1 && close(s.sharpness, 0.76 / 1.3))
    }

    @Test func parameterStepsAndLaterEntriesOverride() throws {
        // A curve from 0.5 s (1.0 → 0.0 over 1 s), then a Parameter step to 0.8 at 1.0 s which
        // governs from its start; two Parameters at 1.5 s: the later in the file wins.
        let t = try timeline { $0.continuous(at: 0, duration: 2, intensity: 1)
            .curve(.hapticIntensityControl, at: 0.5, points: [(0, 1), (1, 0)])
            .parameter(.hapticIntensityControl, 0.8, at: 1.0)
            .parameter(.hapticIntensityControl, 0.1, at: 1.5)
            .parameter(.hapticIntensityControl, 0.3, at: 1.5) }
        #expect(close(t.hapticState(at: 0.75).intensity, 0.75))
        #expect(close(t.hapticState(at: 0.999).intensity, 0.501), "1 − 0.499")
        #expect(close(t.hapticState(at: 1.0).intensity, 0.8))
        #expect(close(t.hapticState(at: 1.4).intensity, 0.8), "the curve does not come back")
        #expect(close(t.hapticState(at: 1.5).intensity, 0.3))
        #expect(close(t.value(of: .hapticIntensityControl, at: 0.2), 1), "default before any entry")
    }

    @Test func transientsAreShortTapsOnTopOfTheLevel() throws {
        let t = try timeline { $0.continuous(at: 0, duration: 1, intensity: 0.5, sharpness: 0.0)
            .transient(at: 0.5, intensity: 0.8, sharpness: 1.0)
            .parameter(.hapticIntensityControl, 0.5, at: 0.5) }
        // Tap: 0.8 × 0.5 = 0.4 at sharpness 1; continuous 0.5 × 0.5 = 0.25 at sharpness 0.
        let during = t.hapticState(at: 0.51)
        #expect(close(during.intensity, 0.65) && close(during.sharpness, 0.4 / 0.65))
        #expect(close(during.continuousIntensity, 0.25) && during.continuousSharpness == 0)
        #expect(close(t.hapticState(at: 0.525).intensity, 0.25), "the tap lasts 25 ms")
        let taps = t.commands.filter { $0.kind == .transient }
        #expect(taps == [HapticCommand(time: 0.5, kind: .transient, intensity: 0.4, sharpness: 1.0)])
    }

    @Test func levelCommandsOnlyOnChange() throws {
        // 0.5 intensity, sharpness 0.3, EventDuration 0.9995 s, 1 ms attack and release, at 1 kHz:
        // k = 0: level 0 (attack starts) → nothing; k = 1: fully up → (0.001, 0.5, 0.3);
        // k = 1000: 0.5 ms into the 1 ms release → (1.000, 0.25, 0.3); k = 1001: over → (1.001, 0).
        let t = try timeline { $0.continuous(at: 0, duration: 0.9995, intensity: 0.5, sharpness: 0.3) }
        let c = t.commands
        #expect(c.count == 3)
        #expect(c.allSatisfy { $0.kind == .level })
        #expect(close(c[0].time, 0.001) && close(c[0].intensity, 0.5) && close(c[0].sharpness, 0.3))
        #expect(close(c[1].time, 1.0) && close(c[1].intensity, 0.25))
        #expect(close(c[2].time, 1.001) && c[2].intensity == 0)
        // At 100 Hz the grid is 10 ms: up at 0.01, gone by 1.0 (0.5 ms past the 1 ms release? no:
        // 1.0 is 0.5 ms into it → 0.25), zero at 1.01.
        let slow = try PatternTimeline(pattern: t.pattern, options: RenderOptions(controlRate: 100))
        #expect(slow.commands.map { ($0.time * 100).rounded() } == [1, 100, 101])
    }

    @Test func slowChangesBelowEpsilonAreNotEmitted() throws {
        // A curve moving 0.0005 over the whole second never moves more than epsilon (0.001).
        let t = try timeline { $0.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0.5)
            .curve(.hapticIntensityControl, at: 0, points: [(0, 0.5), (1, 0.5005)]) }
        #expect(t.commands.count == 2, "up, then down to 0: \(t.commands)")
        // A ramp 0 → 1 over 2.5 s at 1 kHz moves 0.0004 per sample: two samples (0.0008) are not
        // more than epsilon, three (0.0012) are, so a command every third sample: 2500 / 3 ≈ 833.
        let ramp = try timeline { $0.continuous(at: 0, duration: 2.5, intensity: 1)
            .curve(.hapticIntensityControl, at: 0, points: [(0, 0), (2.5, 1)]) }
        let levels = ramp.commands.filter { $0.intensity > 0 }
        #expect(abs(levels.count - 833) <= 2, "\(levels.count)")
        let steps = zip(levels.dropFirst(), levels).map { $0.intensity - $1.intensity }
        #expect(steps.allSatisfy { $0 > 0.001 && $0 < 0.0013 })
    }

    @Test func commandsBetweenTimesAreHalfOpen() throws {
        let t = try timeline { $0.transient(at: 0.1).transient(at: 0.2).transient(at: 0.3) }
        #expect(t.commands(from: 0.1, to: 0.3).map(\.time) == [0.1, 0.2])
        #expect(t.commands(from: 0.3, to: 0.1).isEmpty)
        #expect(t.commands(from: 0, to: .infinity).count == 3)
    }

    @Test func audioVoices() throws {
        // A 0.2 s file: looped for 1 s; padded to 1 s; played once; played once an octave up.
        let t = try timeline({ $0
            .audioCustom(at: 0, path: "a.wav", duration: 1, volume: 0.5, loop: true)
            .audioCustom(at: 0, path: "a.wav", duration: 1, volume: 0.5)
            .audioCustom(at: 2, path: "a.wav", volume: 0.5)
            .audioCustom(at: 3, path: "a.wav", pitch: 1, useVolumeEnvelope: false) }, audioLength: { _ in 0.2 })
        #expect(t.voices.map(\.end) == [1, 1, 2.2, 3.1])
        #expect(close(t.voiceState(0, at: 0.5).gain, 0.5), "looping: still sounding after the file's length")
        #expect(t.voiceState(1, at: 0.5).gain == 0, "not looping: silence after the file")
        #expect(close(t.voiceState(1, at: 0.1975).gain, 0.25), "fading out over the last 5 ms of the file")
        #expect(close(t.voiceState(1, at: 0.0025).gain, 0.25), "fading in over the first 5 ms")
        #expect(t.voiceState(3, at: 3.0).gain == 1, "no envelope: full level at once")
        #expect(t.voiceState(2, at: 1.9).gain == 0 && t.voiceState(2, at: 2.2).gain == 0)
    }

    @Test func synthesizedToneFollowsAudioParameters() throws {
        let t = try timeline { $0.audioContinuous(at: 0, duration: 1, volume: 0.5, pan: -0.5, pitch: 0.5, brightness: 0.5, attack: 2.0 / 3)
            .parameter(.audioVolumeControl, 0.5, at: 0)
            .curve(.audioPanControl, at: 0, points: [(0, 0), (1, 1)])
            .parameter(.audioPitchControl, 0.8, at: 0.6)
            .parameter(.audioBrightnessControl, -1, at: 0.6)
            .parameter(.hapticAttackTimeControl, 1, at: 0) }
        // Attack 100 ms (the haptic control does not act on audio): 0.5 × 0.5 × 0.5 at 50 ms.
        #expect(close(t.voiceState(0, at: 0.05).gain, 0.125))
        let s = t.voiceState(0, at: 0.7)
        #expect(close(s.gain, 0.25) && close(s.pan, 0.2) && s.pitch == 1 && s.brightness == 0)
        #expect(close(AudioVoice.toneFrequency(pitch: 1), 440) && close(AudioVoice.playbackRate(pitch: -1), 0.5))
        #expect(close(AudioVoice.cutoff(brightness: 1), 20_000) && close(AudioVoice.cutoff(brightness: 0), 200))
    }

    @Test func continuousWithoutDurationPlaysThirtySeconds() throws {
        let pattern = try AHAPReader().read(data: Data(#"{ "Version": 1, "Pattern": [ { "Event": { "Time": 0, "EventType": "HapticContinuous" } } ] }"#.utf8)).pattern
        let t = try PatternTimeline(pattern: pattern, options: RenderOptions(controlRate: 10))
        #expect(t.hapticState(at: 29.9).intensity == 1 && t.hapticState(at: 30.01).intensity == 0)
        #expect(t.duration == 0, "Core Haptics' duration counts no EventDuration")
    }

    @Test func limitsAndOptions() throws {
        let long = AHAPPatternBuilder().continuous(at: 0, duration: 30, intensity: 1)
            .curve(.hapticIntensityControl, at: 0, points: [(0, 0), (30, 1)])
        #expect(throws: RenderError.tooManyCommands(needed: 30_002, limit: 1000)) {
            try PatternTimeline(pattern: try long.build(), options: RenderOptions(maxCommands: 1000))
        }
        #expect(throws: RenderError.self) { try PatternTimeline(pattern: AHAPPattern(), options: RenderOptions(controlRate: 0)) }
        #expect(try PatternTimeline(pattern: AHAPPattern()).commands.isEmpty)
    }
}
