import Dispatch
import Foundation
import HapSyncAHAP
import Synchronization
import Testing
@testable import HapSyncCore

/// Runs `work` on its own thread and returns its result, or nil when it has not finished within
/// `seconds` (the thread is left to finish on its own: a test of a hang must fail, not hang).
func finishing<T: Sendable>(within seconds: Double, _ work: @escaping @Sendable () -> T) -> T? {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread {
        let value = work()
        result.withLock { $0 = value }
        done.signal()
    }.start()
    guard done.wait(timeout: .now() + seconds) == .success else { return nil }
    return result.withLock { $0 }
}

/// The voice plan the obvious way: every grid point from each voice's start to its end.
func automationOnEveryGridPoint(_ t: PatternTimeline) -> [VoiceAutomationPoint] {
    var points: [VoiceAutomationPoint] = []
    let rate = t.options.controlRate, eps = t.options.epsilon
    for (i, v) in t.voices.enumerated() {
        let stop = v.end ?? t.end
        var last: AudioVoiceState?
        var time = v.start
        var k = Int((v.start * rate).rounded(.up))
        while time < stop {
            let s = t.voiceState(i, at: time)
            if let l = last, abs(s.gain - l.gain) <= eps, abs(s.pan - l.pan) <= eps, abs(s.pitch - l.pitch) <= eps, abs(s.brightness - l.brightness) <= eps {
            } else {
                points.append(VoiceAutomationPoint(voice: i, time: time, state: s))
                last = s
            }
            if Double(k) / rate <= time { k += 1 }
            time = Double(k) / rate
        }
        var final = t.voiceState(i, at: stop)
        final.gain = 0
        points.append(VoiceAutomationPoint(voice: i, time: stop, state: final))
    }
    return points.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
}

@Suite("Voice automation: work bounded by what changes, and by a limit")
struct VoiceAutomationBoundsTests {
    /// A day-long AudioCustom voice whose settings never move: a few samples, not 86 million.
    @Test func aLongSteadyVoiceCostsAFewSamples() throws {
        let pattern = AHAPPattern(entries: [.event(AHAPEvent(time: 0, type: .audioCustom, duration: 80_000, waveformPath: "a.wav"))])
        let t = try PatternTimeline(pattern: pattern) { _ in 2.0 }
        let points = try #require(finishing(within: 5) { try? t.voiceAutomation() } ?? nil, "the automation of an 80,000 s voice did not finish in 5 s")
        #expect(points.count < 40, "fade in, fade out at the file's end, end: \(points.count) points")
        #expect(points.last?.time == 80_000 && points.last?.state.gain == 0)
        #expect(points.contains { abs($0.time - 2) < 0.002 && $0.state.gain == 0 }, "silent once the file has run out")
    }

    /// A missing file (its length unknown) and another event far later: the voice lasts until the
    /// timeline's end.
    @Test func aVoiceOfUnknownLengthUntilALateEventCostsAFewSamples() throws {
        let pattern = AHAPPattern(entries: [.event(AHAPEvent(time: 0, type: .audioCustom, waveformPath: "missing.wav")),
                                            .event(AHAPEvent(time: 80_000, type: .hapticTransient))])
        let t = try PatternTimeline(pattern: pattern)
        #expect(t.voices.first?.end == nil && t.end >= 80_000)
        let points = try #require(finishing(within: 5) { try? t.voiceAutomation() } ?? nil, "did not finish in 5 s")
        #expect(points.count < 20)
        #expect(points.last.map { $0.time == t.end && $0.state.gain == 0 } == true)
    }

    /// Jumping over steady stretches gives exactly what sampling every grid point gives.
    @Test func theSameAsEveryGridPoint() throws {
        let points = [(0.0, 1.0), (0.2, 0.3), (0.4, 0.3), (0.7, 1.0), (0.7, 0.5), (1.5, 0.5)]
        let pattern = AHAPPattern(entries: [
            .event(AHAPEvent(time: 0.0, type: .audioCustom, duration: 2, waveformPath: "a.wav")),
            .event(AHAPEvent(time: 0.1, type: .audioCustom, waveformPath: "b.wav", useVolumeEnvelope: false)),
            .event(AHAPEvent(time: 0.25, type: .audioCustom, duration: 1.2, waveformPath: "c.wav", loopEnabled: true)),
            .event(AHAPEvent(time: 0.3, type: .audioContinuous, duration: 0.8,
                             parameters: [AHAPEventParameter(.attackTime, 0.5), AHAPEventParameter(.releaseTime, 0.6), AHAPEventParameter(.sustained, 1)])),
            .event(AHAPEvent(time: 0.5, type: .audioContinuous, duration: 1, parameters: [AHAPEventParameter(.decayTime, 0.7), AHAPEventParameter(.sustained, 0)])),
            .curve(AHAPParameterCurve(.audioVolumeControl, time: 0.05, controlPoints: points.map { AHAPControlPoint(time: $0.0, value: $0.1) })),
            .parameter(AHAPDynamicParameter(.audioPanControl, 0.4, time: 0.333)),
            .parameter(AHAPDynamicParameter(.audioPitchControl, -0.5, time: 0.9)),
            .curve(AHAPParameterCurve(.audioBrightnessControl, time: 1.0, controlPoints: [AHAPControlPoint(time: 0, value: 0), AHAPControlPoint(time: 0.3, value: -0.8)])),
        ])
        for rate in [1000.0, 333.0, 48.0] {
            let t = try PatternTimeline(pattern: pattern, options: RenderOptions(controlRate: rate)) { ["a.wav": 0.6, "b.wav": 0.45, "c.wav": 0.1][$0] }
            let fast = try t.voiceAutomation(), slow = automationOnEveryGridPoint(t)
            #expect(fast == slow, "at \(rate) Hz: \(fast.count) points against \(slow.count)")
        }
    }

    @Test func moreSamplesThanTheLimitIsAnError() throws {
        // A volume curve that moves for 100 s: 100,000 samples at 1 kHz.
        let pattern = AHAPPattern(entries: [
            .event(AHAPEvent(time: 0, type: .audioCustom, duration: 100, waveformPath: "a.wav")),
            .curve(AHAPParameterCurve(.audioVolumeControl, time: 0, controlPoints: [AHAPControlPoint(time: 0, value: 0), AHAPControlPoint(time: 100, value: 1)])),
        ])
        let t = try PatternTimeline(pattern: pattern, options: RenderOptions(maxCommands: 50_000))
        #expect(throws: RenderError.tooManyVoiceSamples(limit: 50_000)) { try t.voiceAutomation() }
        #expect(RenderError.tooManyVoiceSamples(limit: 50_000).description.contains("the limit is 50000"))
        let roomy = try PatternTimeline(pattern: pattern, options: RenderOptions(maxCommands: 200_000))
        #expect(try roomy.voiceAutomation().count > 900)
    }
}
