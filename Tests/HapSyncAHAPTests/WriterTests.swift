import Foundation
import HapSyncAHAP
import Testing

@Suite("Writer")
struct WriterTests {
    /// Reasoning for this golden text: Version first, then Metadata as given (its number literal
    /// 1.50 kept exactly), then Pattern; event keys in the documented order, optional keys only
    /// when set, AudioCustom flags always written; flat objects (parameters, control points) on
    /// one line (Metadata holds an array, so it is not flat); numbers in shortest round-trip form with a '.' decimal point.
    @Test func canonicalOutput() throws {
        let input = """
            { "Pattern": [
              { "ParameterCurve": { "ParameterCurveControlPoints": [ { "ParameterValue": 1, "Time": 0 }, { "Time": 0.25, "ParameterValue": 0.5 } ], "ParameterID": "HapticIntensityControl", "Time": 0.1 } },
              { "Event": { "EventParameters": [ { "ParameterID": "AudioVolume", "ParameterValue": 0.5 } ], "EventWaveformPath": "a.wav", "EventType": "AudioCustom", "Time": 0 } },
              { "Parameter": { "ParameterValue": -0.25, "ParameterID": "HapticSharpnessControl", "Time": 1e-5 } }
            ], "Metadata": { "Rate": 1.50, "Tags": ["x", "y"] }, "Version": 1 }
            """
        let pattern = try AHAPReader().read(data: Data(input.utf8)).pattern
        let expected = """
            {
              "Version": 1.0,
              "Metadata": {
                "Rate": 1.50,
                "Tags": ["x", "y"]
              },
              "Pattern": [
                {
                  "ParameterCurve": {
                    "Time": 0.1,
                    "ParameterID": "HapticIntensityControl",
                    "ParameterCurveControlPoints": [
                      { "Time": 0.0, "ParameterValue": 1.0 },
                      { "Time": 0.25, "ParameterValue": 0.5 }
                    ]
                  }
                },
                {
                  "Event": {
                    "Time": 0.0,
                    "EventType": "AudioCustom",
                    "EventWaveformPath": "a.wav",
                    "EventWaveformUseVolumeEnvelope": true,
                    "EventWaveformLoopEnabled": false,
                    "EventParameters": [
                      { "ParameterID": "AudioVolume", "ParameterValue": 0.5 }
                    ]
                  }
                },
                {
                  "Parameter": { "Time": 1e-05, "ParameterID": "HapticSharpnessControl", "ParameterValue": -0.25 }
                }
              ]
            }

            """
        #expect(AHAPWriter.string(from: pattern) == expected)
    }

    @Test func numbersIgnoreTheLocale() {
        // Whatever the C locale says, Swift's Double.description always writes '.'.
        _ = setlocale(LC_ALL, "de_DE.UTF-8")
        defer { _ = setlocale(LC_ALL, "C") }
        #expect(AHAPWriter.formatNumber(0.5) == "0.5")
        #expect(AHAPWriter.formatNumber(-0.0) == "0.0")
        #expect(AHAPWriter.formatNumber(1) == "1.0")
        #expect(AHAPWriter.formatNumber(0.1 + 0.2) == "0.30000000000000004", "shortest text that reads back to the same Double")
        let text = AHAPWriter.string(from: AHAPPattern(entries: [.parameter(AHAPDynamicParameter(.hapticIntensityControl, 0.5, time: 0.25))]))
        #expect(text.contains("\"ParameterValue\": 0.5") && !text.contains("0,5"))
    }

    @Test func stringsAreEscaped() throws {
        let tricky = "quote \" backslash \\ newline \n tab \t bell \u{07} é"
        let pattern = AHAPPattern(metadata: .object([("Note", .string(tricky))]), entries: [])
        let text = AHAPWriter.string(from: pattern)
        #expect(text.contains(#""quote \" backslash \\ newline \n tab \t bell \u0007 é""#))
        #expect(try AHAPReader().read(data: Data(text.utf8)).pattern == pattern)
    }

    @Test func extremeButValidNumbersRoundTrip() throws {
        let values = [Double.leastNonzeroMagnitude, 1e-300, 0.1, 1.0 / 3.0, 29.999999999999996, 1e15]
        // 1e15 s is beyond the default limit on times (`AHAPLimits.maxTime`, one day): raised here.
        var limits = AHAPLimits.default
        limits.maxTime = .greatestFiniteMagnitude
        for v in values {
            let pattern = AHAPPattern(entries: [.event(AHAPEvent(time: v, type: .hapticTransient))])
            #expect(try AHAPReader(limits: limits).read(data: AHAPWriter.data(from: pattern)).pattern == pattern, "\(v)")
        }
    }
}
