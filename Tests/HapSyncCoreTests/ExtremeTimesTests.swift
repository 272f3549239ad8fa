import Foundation
import HapSyncAHAP
import HapSyncCore
import Testing

@Suite("Extreme times: checked conversions, and the timeline's own bound")
struct ExtremeTimesTests {
    @Test func theOneConversionSaturatesInsteadOfTrapping() {
        #expect(Int64(saturating: 1e300) == .max && Int64(saturating: -1e300) == .min)
        #expect(Int64(saturating: .infinity) == .max && Int64(saturating: -.infinity) == .min && Int64(saturating: .nan) == 0)
        #expect(Int64(saturating: 9.223372036854775807e18) == .max, "2^63 itself is out of range")
        #expect(Int64(saturating: 9.2233720368547748e18) == 9_223_372_036_854_774_784, "the largest Double below 2^63 converts exactly")
        #expect(UInt64(saturating: -1) == 0 && UInt64(saturating: 1.9e19) == .max && UInt64(saturating: 1e25) == .max)
        #expect(Int(saturating: 42.9) == 42 && Int(saturating: -42.9) == -42)
        #expect(Int(saturating: 1e19) == .max && Int(saturating: .nan) == 0)
    }

    @Test func framesOfAnyTimeAreAnInteger() {
        #expect(FrameTiming.frames(1e300, sampleRate: 48_000) == .max)
        #expect(FrameTiming.frames(9.3e15, sampleRate: 48_000) == .max)
        #expect(FrameTiming.frames(-1e300, sampleRate: 48_000) == .min)
        #expect(FrameTiming.frames(1, rate: 0.5, sampleRate: 48_000) == 96_000)
    }

    /// Patterns built in code skip the reader: the timeline refuses their out-of-range times with
    /// the path, where the grid used to trap converting 1e19 control steps to Int.
    @Test func theTimelineRefusesTimesBeyondItsLimit() throws {
        let cases: [(AHAPEntry, String)] = [
            (.event(AHAPEvent(time: 1e16, type: .hapticContinuous, duration: 1)), "Pattern[0].Event.Time"),
            (.event(AHAPEvent(time: 0, type: .audioCustom, duration: 1e308, waveformPath: "a.wav")), "Pattern[0].Event.EventDuration"),
            (.event(AHAPEvent(time: .infinity, type: .hapticTransient)), "Pattern[0].Event.Time"),
            (.event(AHAPEvent(time: -1, type: .hapticTransient)), "Pattern[0].Event.Time"),
            (.parameter(AHAPDynamicParameter(.hapticIntensityControl, 1, time: .nan)), "Pattern[0].Parameter.Time"),
            (.curve(AHAPParameterCurve(.audioVolumeControl, time: 0, controlPoints: [AHAPControlPoint(time: 0, value: 1), AHAPControlPoint(time: 1e20, value: 0)])),
             "Pattern[0].ParameterCurve.ParameterCurveControlPoints[1].Time"),
        ]
        for (entry, path) in cases {
            do {
                _ = try PatternTimeline(pattern: AHAPPattern(entries: [entry]))
                Issue.record("accepted \(entry)")
            } catch {
                guard case .timeOutOfRange(let at, _, let limit) = error else { Issue.record("\(error)"); continue }
                #expect(at.description == path && limit == 86_400)
                #expect(error.description.hasPrefix("\(path): "))
            }
        }
        let atTheLimit = try PatternTimeline(pattern: AHAPPattern(entries: [.event(AHAPEvent(time: 86_400, type: .hapticContinuous, duration: 1))]))
        #expect(atTheLimit.commands.first.map { abs($0.time - 86_400.001) < 1e-6 } == true, "the first step of the 1 ms attack")
        #expect(atTheLimit.hapticState(at: 86_400.5).intensity == 1)
    }

    @Test func theControlGridIsCountedWithoutOverflow() throws {
        var options = RenderOptions()
        options.maxTime = 1e300
        let pattern = AHAPPattern(entries: [.event(AHAPEvent(time: 1e290, type: .hapticContinuous, duration: 1)),
                                            .event(AHAPEvent(time: 0, type: .hapticContinuous, duration: 1))])
        #expect(throws: RenderError.tooManyCommands(needed: Int.max, limit: options.maxCommands)) { try PatternTimeline(pattern: pattern, options: options) }
    }

    @Test func aPlotOfAnyTimelineIsDrawn() throws {
        let t = try PatternTimeline(pattern: AHAPPattern(entries: [.event(AHAPEvent(time: 86_400, type: .hapticContinuous, duration: 30))]))
        let svg = PatternPlot.svg(t, title: "late")
        #expect(svg.contains("duration 86430000 ms"))
    }
}
