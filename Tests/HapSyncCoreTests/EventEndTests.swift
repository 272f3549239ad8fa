import Foundation
import HapSyncAHAP
import HapSyncCore
import Testing

private func curve(_ id: AHAPDynamicParameterID, at time: Double, _ points: [(Double, Double)]) -> AHAPEntry {
    .curve(AHAPParameterCurve(id, time: time, controlPoints: points.map { AHAPControlPoint(time: $0.0, value: $0.1) }))
}

private func continuous(at time: Double, duration: Double, intensity: Double, sharpness: Double = 0.5, release: Double = 0,
                        type: AHAPEventType = .hapticContinuous) -> AHAPEntry {
    let level: AHAPEventParameterID = type == .hapticContinuous ? .hapticIntensity : .audioVolume
    return .event(AHAPEvent(time: time, type: type, duration: duration,
                            parameters: [AHAPEventParameter(level, intensity), AHAPEventParameter(.hapticSharpness, sharpness),
                                         AHAPEventParameter(.releaseTime, release)].filter { type == .hapticContinuous || $0.id != .hapticSharpness }))
}

/// An event has ended at Time + EventDuration (end-exclusive): what starts there does not act on
/// its release tail.
@Suite("Event end: a curve starting where an event ends does not lift its tail")
struct EventEndTests {
    /// The smallest pattern of the bug: a continuous event ending at 0.1 s while its intensity
    /// curve falls to 0, and a new curve starting at 0.1 s at 0.75. The event's 1 ms release
    /// took the new curve's 0.75: a 1 ms spike of 0.45 where everything had faded out.
    @Test func aCurveStartingAtTheEndDoesNotActOnTheRelease() throws {
        let t = try PatternTimeline(pattern: AHAPPattern(entries: [
            continuous(at: 0, duration: 0.1, intensity: 0.6),
            curve(.hapticIntensityControl, at: 0, [(0, 1), (0.1, 0)]),
            curve(.hapticIntensityControl, at: 0.1, [(0, 0.75), (0.5, 0.4)]),
        ]))
        #expect(close(t.hapticState(at: 0.05).intensity, 0.3), "0.6 × half-way down the first curve")
        #expect(t.hapticState(at: 0.1).intensity < 1e-9, "ended: its release takes the first curve's 0, got \(t.hapticState(at: 0.1).intensity)")
        #expect(t.hapticState(at: 0.1005).intensity < 1e-9)
        let spikes = t.commands.filter { $0.kind == .level && $0.time >= 0.099 && $0.intensity > 0.01 }
        #expect(spikes.isEmpty, "level commands after the fade: \(spikes)")
    }

    /// The shape of Apple's Sparkle.ahap: a continuous event 0.024 + 0.15 s, an intensity curve
    /// over it ending at 0.174 s, a second curve and a transient at 0.174 s.
    @Test func sparkleHasNoSpikeAtTheHandOver() throws {
        let t = try PatternTimeline(pattern: AHAPPattern(entries: [
            .event(AHAPEvent(time: 0, type: .hapticTransient, parameters: [AHAPEventParameter(.hapticIntensity, 1)])),
            continuous(at: 0.024, duration: 0.15, intensity: 0.6000000238418579, sharpness: 0.10000000149011612),
            curve(.hapticIntensityControl, at: 0.024, [(0, 1), (0.02500000037252903, 0.44999998807907104), (0.15000000596046448, 0)]),
            curve(.hapticIntensityControl, at: 0.174, [(0, 0.75), (0.08699999749660492, 0.4000000059604645), (0.8460000157356262, 0.20000000298023224)]),
            .event(AHAPEvent(time: 0.174, type: .hapticTransient, parameters: [AHAPEventParameter(.hapticIntensity, 0.4000000059604645)])),
        ]))
        // The level fades with the first curve (0.0022 at 173 ms) and stays out: it was 0.45 at
        // 174 ms for the 1 ms of the release.
        let levels = t.commands.filter { $0.kind == .level && $0.time > 0.1735 }
        #expect(!levels.isEmpty && levels.allSatisfy { $0.intensity < 1e-6 }, "\(levels)")
        #expect(t.hapticState(at: 0.174).continuousIntensity < 1e-6)
        let tap = try #require(t.commands.first { $0.kind == .transient && abs($0.time - 0.174) < 1e-9 })
        #expect(close(tap.intensity, 0.4000000059604645 * 0.75), "the new curve does act on the event starting with it")
    }

    @Test func whatBeganWhileTheEventWasActiveShapesItsTail() throws {
        // ReleaseTime 2/3 → a 100 ms release from 0.1 s; halfway through it the envelope is 0.5.
        let falling = try PatternTimeline(pattern: AHAPPattern(entries: [
            continuous(at: 0, duration: 0.1, intensity: 1, release: 2.0 / 3),
            curve(.hapticIntensityControl, at: 0, [(0, 1), (0.2, 0)]),
            .parameter(AHAPDynamicParameter(.hapticIntensityControl, 0.1, time: 0.1)),
        ]))
        #expect(close(falling.hapticState(at: 0.15).intensity, 0.5 * 0.25), "the curve goes on; the step at the end does not act")
        let stepped = try PatternTimeline(pattern: AHAPPattern(entries: [
            continuous(at: 0, duration: 0.1, intensity: 1, release: 2.0 / 3),
            .parameter(AHAPDynamicParameter(.hapticIntensityControl, 0.5, time: 0.05)),
            .parameter(AHAPDynamicParameter(.hapticSharpnessControl, 0.3, time: 0.1)),
        ]))
        #expect(close(stepped.hapticState(at: 0.15).intensity, 0.25))
        #expect(close(stepped.hapticState(at: 0.15).sharpness, 0.5), "the sharpness step at the end does not act either")
        #expect(close(stepped.hapticState(at: 0.09).intensity, 0.5))
    }

    @Test func aToneEndsTheSameWay() throws {
        let t = try PatternTimeline(pattern: AHAPPattern(entries: [
            continuous(at: 0, duration: 0.1, intensity: 1, release: 2.0 / 3, type: .audioContinuous),
            .parameter(AHAPDynamicParameter(.audioVolumeControl, 0.2, time: 0.1)),
            .parameter(AHAPDynamicParameter(.audioPanControl, 0.5, time: 0.1)),
        ]))
        #expect(close(t.voiceState(0, at: 0.15).gain, 0.5), "the volume step at its end does not act on its release")
        #expect(t.voiceState(0, at: 0.15).pan == 0)
        #expect(close(t.voiceState(0, at: 0.05).gain, 1))
        // An index that names no voice is silence, not a trap (a caller's bad argument).
        #expect(t.voiceState(1, at: 0.05).gain == 0 && t.voiceState(-1, at: 0.05).gain == 0)
        let during = try PatternTimeline(pattern: AHAPPattern(entries: [
            continuous(at: 0, duration: 0.1, intensity: 1, release: 2.0 / 3, type: .audioContinuous),
            .parameter(AHAPDynamicParameter(.audioVolumeControl, 0.2, time: 0.05)),
        ]))
        #expect(close(during.voiceState(0, at: 0.15).gain, 0.1))
    }
}
