import Foundation
import HapSyncAHAP
import Testing

@Suite("Times and durations: at most AHAPLimits.maxTime, so nothing after the reader overflows")
struct TimeLimitTests {
    @Test func aTimeBeyondTheLimitIsAnErrorWithItsPathAndValue() throws {
        #expect(AHAPLimits.default.maxTime == 86_400)
        for literal in ["1e308", "9.3e15", "86400.5"] {
            let report = diagnose(document(#"{ "Event": { "Time": \#(literal), "EventType": "HapticContinuous", "EventDuration": 1 } }"#))
            let d = try #require(report.errors.first, "Time \(literal) was accepted")
            #expect(d.code == .limitExceeded)
            #expect(d.path.description == "Pattern[0].Event.Time")
            #expect(d.message == "Time \(literal) s is over the limit of 86400.0 s on times and durations")
            #expect(d.line == 2 && d.column == 22)
            #expect(report.pattern == nil)
        }
        #expect(diagnose(document(#"{ "Event": { "Time": 86400, "EventType": "HapticTransient" } }"#)).errors.isEmpty, "the limit itself is accepted")
    }

    @Test func durationsParametersAndControlPointsAreBoundedToo() throws {
        let audio = diagnose(document(#"{ "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "a.wav", "EventDuration": 1e9 } }"#))
        #expect(audio.errors.map(\.path.description) == ["Pattern[0].Event.EventDuration"])
        #expect(audio.errors.first?.message == "EventDuration 1e9 s is over the limit of 86400.0 s on times and durations")
        let transient = diagnose(document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", "EventDuration": 1e300 } }"#))
        #expect(transient.errors.map(\.code) == [.limitExceeded])
        let parameter = diagnose(document(#"{ "Parameter": { "Time": 1e20, "ParameterID": "HapticIntensityControl", "ParameterValue": 1 } }"#))
        #expect(parameter.errors.map(\.path.description) == ["Pattern[0].Parameter.Time"])
        let curve = diagnose(document(#"{ "ParameterCurve": { "Time": 0, "ParameterID": "HapticIntensityControl", "ParameterCurveControlPoints": [ { "Time": 0, "ParameterValue": 1 }, { "Time": 1e16, "ParameterValue": 0 } ] } }"#))
        #expect(curve.errors.map(\.path.description) == ["Pattern[0].ParameterCurve.ParameterCurveControlPoints[1].Time"])
        // A continuous event's duration is clamped to 30 s as before: a warning, not an error.
        let continuous = diagnose(document(#"{ "Event": { "Time": 0, "EventType": "HapticContinuous", "EventDuration": 1e308 } }"#))
        #expect(continuous.errors.isEmpty && continuous.warnings.map(\.code) == [.clamped])
        var limits = AHAPLimits.default
        limits.maxTime = 10
        #expect(diagnose(document(#"{ "Event": { "Time": 10.5, "EventType": "HapticTransient" } }"#), limits: limits).errors.first?.message
                == "Time 10.5 s is over the limit of 10.0 s on times and durations")
    }

    @Test func numbersWrittenForMachinesAreAlwaysJSON() throws {
        for x in [1e308, -1e308, 9.3e15, 1e9, 123456789.123456789, 0.1234567, -0.5] {
            let text = AHAPWriter.formatRounded(x)
            let back = try #require(try JSONSerialization.jsonObject(with: Data("[\(text)]".utf8)) as? [Double], "\(x) → \(text)")
            #expect(abs(back[0] - x) <= max(abs(x) * 1e-15, 5e-7), "\(x) → \(text)")
        }
        #expect(AHAPWriter.formatRounded(.infinity) == "null" && AHAPWriter.formatRounded(.nan) == "null")
        #expect(JSONWriter.string(.array([.number(.infinity), .number(-.infinity), .number(.nan), .number(2)]), pretty: false) == "[null,null,null,2.0]")
    }
}
