import Foundation
import HapSyncAHAP
import Testing

/// One input that must produce one particular finding.
struct DiagnosticCase: CustomTestStringConvertible, Sendable {
    var code: AHAPDiagnostic.Code
    var input: String
    var path: String
    var message: String
    var line: Int? = nil
    var column: Int? = nil
    var testDescription: String { code.rawValue }
}

let transient = #"{ "Event": { "Time": 0.0, "EventType": "HapticTransient" } }"#

/// Each error and warning kind the reader produces, with the JSON path and the words the user sees.
/// Line and column are checked where the text makes them obvious (the document helper puts the
/// first entry on line 2).
let readerCases: [DiagnosticCase] = [
    // Errors
    .init(code: .jsonSyntax, input: "{ \"Version\": 1.0, \"Pattern\": [ { \"Event\": { \"Time\": 0.0 \"EventType\": \"HapticTransient\" } } ] }",
          path: "Pattern[0].Event", message: "expected ',' or '}' after the value of \"Time\"", line: 1, column: 57),
    .init(code: .jsonSyntax, input: document(#"{ "Event": { "Time": 0,5, "EventType": "HapticTransient" } }"#),
          path: "Pattern[0].Event", message: "decimal comma", line: 2, column: 24),
    .init(code: .jsonSyntax, input: document(#"{ "Event": { 'Time': 0 } }"#), path: "Pattern[0].Event", message: "double quotes", line: 2, column: 14),
    .init(code: .jsonSyntax, input: document(#"{ "Event": { "Time": NaN } }"#), path: "Pattern[0].Event.Time", message: "NaN and Infinity"),
    .init(code: .jsonSyntax, input: document(#"{ "Event": { "Time": .5 } }"#), path: "Pattern[0].Event.Time", message: "write 0.5, not .5"),
    .init(code: .jsonSyntax, input: "", path: "(root)", message: "the file is empty"),
    .init(code: .jsonSyntax, input: "{ \"Pattern\": [] } x", path: "(root)", message: "after the end of the top-level value"),
    .init(code: .jsonSyntax, input: "{ \"Pattern\": [ \"abc\n ] }", path: "Pattern[0]", message: "line break inside a string", line: 1, column: 20),
    .init(code: .jsonSyntax, input: "{ \"Pattern\": [ \"abc ] }", path: "Pattern[0]", message: "string never closed", line: 1, column: 16),
    .init(code: .notAHAP, input: "[1, 2, 3]", path: "(root)", message: "the top level is an array"),
    .init(code: .notAHAP, input: #"{ "Version": 1, "pattern": [] }"#, path: "Pattern", message: "found \"pattern\"; the key is \"Pattern\""),
    .init(code: .wrongType, input: #"{ "Pattern": {} }"#, path: "Pattern", message: "Pattern must be an array of entries, found an object"),
    .init(code: .wrongType, input: document(#"{ "Event": { "Time": "0.5", "EventType": "HapticTransient" } }"#),
          path: "Pattern[0].Event.Time", message: "Time must be a number, found a string (\"0.5\"); write it without quotes", line: 2, column: 22),
    .init(code: .wrongType, input: document(#"{ "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "a.wav", "EventWaveformLoopEnabled": "yes" } }"#),
          path: "Pattern[0].Event.EventWaveformLoopEnabled", message: "must be true or false, found a string"),
    .init(code: .wrongType, input: document(#"{ "Event": [] }"#), path: "Pattern[0].Event", message: "Event must be an object, found an array"),
    .init(code: .missingKey, input: document(#"{ "Event": { "Time": 0.0 } }"#), path: "Pattern[0].Event.EventType", message: "Event has no \"EventType\""),
    .init(code: .missingKey, input: document(#"{ "Parameter": { "Time": 0.0, "ParameterValue": 1 } }"#),
          path: "Pattern[0].Parameter.ParameterID", message: "Parameter has no \"ParameterID\""),
    .init(code: .missingKey, input: document(#"{ "ParameterCurve": { "Time": 0.0, "ParameterID": "HapticIntensityControl" } }"#),
          path: "Pattern[0].ParameterCurve.ParameterCurveControlPoints", message: "has no \"ParameterCurveControlPoints\""),
    .init(code: .nonFiniteNumber, input: document(#"{ "Event": { "Time": 1e999, "EventType": "HapticTransient" } }"#),
          path: "Pattern[0].Event.Time", message: "Time 1e999 is out of range", line: 2, column: 22),
    .init(code: .negativeTime, input: document(#"{ "Event": { "Time": -0.5, "EventType": "HapticTransient" } }"#),
          path: "Pattern[0].Event.Time", message: "Time -0.5 is negative", line: 2, column: 22),
    .init(code: .negativeTime, input: document(#"{ "ParameterCurve": { "Time": 0, "ParameterID": "HapticIntensityControl", "ParameterCurveControlPoints": [ { "Time": -1, "ParameterValue": 0 } ] } }"#),
          path: "Pattern[0].ParameterCurve.ParameterCurveControlPoints[0].Time", message: "Time -1.0 is negative"),
    .init(code: .negativeDuration, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticContinuous", "EventDuration": -1 } }"#),
          path: "Pattern[0].Event.EventDuration", message: "EventDuration -1.0 is negative"),
    .init(code: .unknownEventType, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticTransiant" } }"#),
          path: "Pattern[0].Event.EventType", message: "unknown EventType \"HapticTransiant\"; expected one of HapticTransient, HapticContinuous, AudioContinuous, AudioCustom (did you mean \"HapticTransient\"?)"),
    .init(code: .unknownParameterID, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensty", "ParameterValue": 1 } ] } }"#),
          path: "Pattern[0].Event.EventParameters[0].ParameterID", message: "unknown ParameterID \"HapticIntensty\"; did you mean \"HapticIntensity\"?"),
    .init(code: .unknownParameterID, input: document(#"{ "Parameter": { "Time": 0, "ParameterID": "Loudness", "ParameterValue": 1 } }"#),
          path: "Pattern[0].Parameter.ParameterID", message: "unknown ParameterID \"Loudness\"; expected one of HapticIntensityControl"),
    .init(code: .wrongParameterKind, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensityControl", "ParameterValue": 1 } ] } }"#),
          path: "Pattern[0].Event.EventParameters[0].ParameterID", message: "HapticIntensityControl is a dynamic parameter"),
    .init(code: .wrongParameterKind, input: document(#"{ "Parameter": { "Time": 0, "ParameterID": "HapticSharpness", "ParameterValue": 1 } }"#),
          path: "Pattern[0].Parameter.ParameterID", message: "HapticSharpness is an event parameter; dynamic parameters are the ...Control IDs (did you mean \"HapticSharpnessControl\"?)"),
    .init(code: .missingWaveformPath, input: document(#"{ "Event": { "Time": 0, "EventType": "AudioCustom" } }"#),
          path: "Pattern[0].Event.EventWaveformPath", message: "AudioCustom event has no \"EventWaveformPath\""),
    .init(code: .unsafeWaveformPath, input: document(#"{ "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "../secret.wav" } }"#),
          path: "Pattern[0].Event.EventWaveformPath", message: "climbs out of its folder with '..'"),
    .init(code: .unsafeWaveformPath, input: document(#"{ "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "/etc/passwd" } }"#),
          path: "Pattern[0].Event.EventWaveformPath", message: "\"/etc/passwd\" is absolute"),
    .init(code: .unsafeWaveformPath, input: document(#"{ "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "" } }"#),
          path: "Pattern[0].Event.EventWaveformPath", message: "\"\" is empty"),
    .init(code: .controlPointsOutOfOrder, input: document(#"{ "ParameterCurve": { "Time": 0, "ParameterID": "HapticIntensityControl", "ParameterCurveControlPoints": [ { "Time": 0.5, "ParameterValue": 0 }, { "Time": 0.2, "ParameterValue": 1 } ] } }"#),
          path: "Pattern[0].ParameterCurve.ParameterCurveControlPoints[1].Time", message: "control point Time 0.2 comes before the previous point's 0.5"),
    .init(code: .emptyCurve, input: document(#"{ "ParameterCurve": { "Time": 0, "ParameterID": "HapticIntensityControl", "ParameterCurveControlPoints": [] } }"#),
          path: "Pattern[0].ParameterCurve.ParameterCurveControlPoints", message: "has no control points"),
    .init(code: .ambiguousEntry, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient" }, "Parameter": { "Time": 0, "ParameterID": "HapticIntensityControl", "ParameterValue": 1 } }"#),
          path: "Pattern[0]", message: "one entry holds \"Event\" and \"Parameter\""),
    .init(code: .limitExceeded, input: String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
          path: String(repeating: "[0]", count: 64), message: "nesting deeper than 64 levels"),
    // Warnings
    .init(code: .trailingComma, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", } }"#),
          path: "Pattern[0].Event", message: "trailing comma before '}' ignored", line: 2, column: 57),
    .init(code: .trailingComma, input: "{ \"Pattern\": [ \(transient), ] }", path: "Pattern", message: "trailing comma before ']' ignored"),
    .init(code: .comment, input: "{ // made by hand\n \"Pattern\": [] }", path: "(root)", message: "comment ignored", line: 1, column: 3),
    .init(code: .valueKeyAlias, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensity", "Value": 0.5 } ] } }"#),
          path: "Pattern[0].Event.EventParameters[0].Value", message: "key \"Value\" read as \"ParameterValue\""),
    .init(code: .unknownKey, input: document(#"{ "Event": { "time": 0.3, "EventType": "HapticTransient" } }"#),
          path: "Pattern[0].Event.time", message: "unknown key \"time\" in an Event ignored; did you mean \"Time\"?"),
    .init(code: .unknownKey, input: "{ \"Version\": 1, \"Author\": \"me\", \"Pattern\": [] }", path: "Author", message: "unknown key \"Author\" in the top level ignored"),
    .init(code: .duplicateKey, input: document(#"{ "Event": { "Time": 0, "Time": 1, "EventType": "HapticTransient" } }"#),
          path: "Pattern[0].Event.Time", message: "key \"Time\" appears twice in this object; the last one is used"),
    .init(code: .clamped, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensity", "ParameterValue": 1.5 } ] } }"#),
          path: "Pattern[0].Event.EventParameters[0].ParameterValue", message: "HapticIntensity value 1.5 is outside 0.0...1.0; clamped to 1.0"),
    .init(code: .clamped, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticContinuous", "EventDuration": 45 } }"#),
          path: "Pattern[0].Event.EventDuration", message: "HapticContinuous EventDuration value 45.0 is outside 0.0...30.0; clamped to 30.0"),
    .init(code: .defaulted, input: document(#"{ "Event": { "EventType": "HapticTransient" } }"#), path: "Pattern[0].Event.Time", message: "Event has no \"Time\"; it starts at 0"),
    .init(code: .defaulted, input: #"{ "Pattern": [] }"#, path: "Version", message: "no \"Version\"; assuming 1.0"),
    .init(code: .defaulted, input: document(#"{ "Parameter": { "Time": 0, "ParameterID": "AudioVolumeControl" } }"#),
          path: "Pattern[0].Parameter.ParameterValue", message: "AudioVolumeControl has no \"ParameterValue\"; using its default 1.0"),
    .init(code: .duplicateParameter, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensity", "ParameterValue": 0.2 }, { "ParameterID": "HapticIntensity", "ParameterValue": 0.9 } ] } }"#),
          path: "Pattern[0].Event.EventParameters[1]", message: "HapticIntensity is given more than once in this event; the last one (0.9) is used"),
    .init(code: .inapplicableParameter, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "AudioVolume", "ParameterValue": 0.5 } ] } }"#),
          path: "Pattern[0].Event.EventParameters[0]", message: "AudioVolume does not act on HapticTransient events"),
    .init(code: .inapplicableKey, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", "EventWaveformPath": "a.wav" } }"#),
          path: "Pattern[0].Event.EventWaveformPath", message: "EventWaveformPath applies only to AudioCustom events; ignored on HapticTransient"),
    .init(code: .emptyEntry, input: document(#"{ "Evnt": { "Time": 0 } }"#), path: "Pattern[0]", message: "entry has none of \"Event\", \"Parameter\", \"ParameterCurve\" (keys: \"Evnt\"); ignored; did you mean \"Event\"?"),
    .init(code: .missingDuration, input: document(#"{ "Event": { "Time": 0, "EventType": "HapticContinuous" } }"#),
          path: "Pattern[0].Event.EventDuration", message: "HapticContinuous event has no \"EventDuration\""),
    .init(code: .loopWithoutDuration, input: document(#"{ "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "a.wav", "EventWaveformLoopEnabled": true } }"#),
          path: "Pattern[0].Event.EventWaveformLoopEnabled", message: "no EventDuration to loop for; the file plays once"),
    .init(code: .numericBoolean, input: document(#"{ "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "a.wav", "EventWaveformUseVolumeEnvelope": 0 } }"#),
          path: "Pattern[0].Event.EventWaveformUseVolumeEnvelope", message: "EventWaveformUseVolumeEnvelope is a boolean; 0 read as false"),
]

@Suite("Diagnostics: every error and warning kind names its path")
struct DiagnosticsTests {
    @Test(arguments: readerCases)
    func findingHasPathAndMessage(_ c: DiagnosticCase) throws {
        let report = diagnose(c.input)
        let matching = report.diagnostics.filter { $0.code == c.code }
        let d = try #require(matching.first, "expected \(c.code.rawValue); got \(report.diagnostics.map(\.description))")
        #expect(d.severity == c.code.defaultSeverity)
        #expect(d.path.description == c.path)
        #expect(d.message.contains(c.message), "message was: \(d.message)")
        #expect(d.file == "test.ahap")
        if let line = c.line { #expect(d.line == line) }
        if let column = c.column { #expect(d.column == column) }
        // An error leaves no pattern; warnings alone keep it.
        #expect((report.pattern == nil) == report.diagnostics.contains { $0.severity == .error })
    }

    @Test func everyCodeHasATest() {
        // Codes whose cases need files on disk are tested in ResolverTests and ReaderFileTests.
        let elsewhere: Set<AHAPDiagnostic.Code> = [.resourceOutsideRoots, .resourceNotFound, .fileUnreadable]
        let covered = Set(readerCases.map(\.code)).union(elsewhere)
            .union([.resourceNotRegularFile, .unplayableAudio])  // ResolverTests
        let missing = AHAPDiagnostic.Code.allCases.filter { !covered.contains($0) }
        #expect(missing.isEmpty, "codes without a test: \(missing.map(\.rawValue))")
    }

    @Test func limitsOnEntriesCurvePointsAndSize() {
        let small = AHAPLimits(maxFileBytes: 10_000, maxEntries: 2, maxCurvePoints: 2, maxNestingDepth: 64)
        let tooMany = diagnose(document(transient, transient, transient), limits: small)
        #expect(tooMany.errors.map(\.code) == [.limitExceeded])
        #expect(tooMany.errors.first?.path.description == "Pattern")
        #expect(tooMany.errors.first?.message == "Pattern has 3 entries; the limit is 2")

        let points = #"{ "ParameterCurve": { "Time": 0, "ParameterID": "HapticIntensityControl", "ParameterCurveControlPoints": [ { "Time": 0, "ParameterValue": 0 }, { "Time": 1, "ParameterValue": 1 }, { "Time": 2, "ParameterValue": 0 } ] } }"#
        let curve = diagnose(document(points), limits: small)
        #expect(curve.errors.first?.path.description == "Pattern[0].ParameterCurve.ParameterCurveControlPoints")
        #expect(curve.errors.first?.message == "curve has 3 control points; the limit is 2")

        let big = diagnose(String(repeating: " ", count: 10_001), limits: small)
        #expect(big.errors.first?.code == .limitExceeded)
        #expect(big.errors.first?.message == "input is 10001 bytes; the limit is 10000 bytes")
    }

    @Test func allErrorsOfAFileAreReportedInSourceOrder() {
        let report = diagnose(document(
            #"{ "Event": { "Time": -1, "EventType": "HapticTransient" } }"#,
            #"{ "Event": { "Time": 0, "EventType": "Bzzz" } }"#,
            #"{ "Event": { "Time": 0, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "HapticIntensity", "ParameterValue": 2 } ] } }"#))
        #expect(report.diagnostics.map(\.code) == [.negativeTime, .unknownEventType, .clamped])
        #expect(report.diagnostics.map(\.line) == [2, 3, 4])
        #expect(report.pattern == nil)
    }

    @Test func descriptionIsCompilerStyle() throws {
        let d = try #require(diagnose(document(#"{ "Event": { "Time": -0.5, "EventType": "HapticTransient" } }"#)).errors.first)
        #expect(d.description == "test.ahap:2:22: error: Pattern[0].Event.Time: Time -0.5 is negative; times are seconds from the pattern's start and must be ≥ 0 [negative-time]")
    }

    @Test func clampedValuesAreUsedClamped() throws {
        let report = diagnose(document(#"{ "Event": { "Time": 0, "EventType": "AudioContinuous", "EventDuration": 1, "EventParameters": [ { "ParameterID": "AudioPan", "ParameterValue": -3 }, { "ParameterID": "AudioVolume", "Value": 0.25 } ] } }"#))
        let event = try #require(report.pattern?.events.first)
        #expect(event.value(.audioPan) == -1)
        #expect(event.value(.audioVolume) == 0.25)
        #expect(event.value(.audioBrightness) == 1, "missing parameters take their default")
        #expect(report.warnings.map(\.code) == [.clamped, .valueKeyAlias])
    }
}
