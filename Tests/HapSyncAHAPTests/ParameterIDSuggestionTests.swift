import Foundation
import HapSyncAHAP
import Testing

/// An event with one event parameter, as a pattern entry.
private func event(_ id: String, type: String = "HapticContinuous") -> String {
    #"{ "Event": { "Time": 0, "EventType": "\#(type)", "EventDuration": 0.5, "EventParameters": [ { "ParameterID": "\#(id)", "ParameterValue": 0.5 } ] } }"#
}

@Suite("Unknown parameter IDs: the right one is suggested")
struct ParameterIDSuggestionTests {
    /// Several AHAP generators write the envelope parameters with a "Haptic" prefix.
    @Test(arguments: [("HapticAttackTime", "AttackTime"), ("HapticDecayTime", "DecayTime"), ("HapticReleaseTime", "ReleaseTime"),
                      ("AudioAttackTime", "AttackTime"), ("HapticSustained", "Sustained"), ("hapticReleaseTime", "ReleaseTime")])
    func prefixedEventParameterSuggestsTheEventParameter(_ written: String, _ meant: String) throws {
        let report = diagnose(document(event(written)))
        let d = try #require(report.errors.first { $0.code == .unknownParameterID })
        #expect(d.path.description == "Pattern[0].Event.EventParameters[0].ParameterID")
        #expect(d.message == "unknown ParameterID \"\(written)\"; did you mean \"\(meant)\"?")
    }

    @Test func prefixedNameInAParameterEntrySuggestsTheControl() throws {
        let entry = #"{ "Parameter": { "Time": 0, "ParameterID": "HapticAttackTime", "ParameterValue": 0.5 } }"#
        let d = try #require(diagnose(document(entry)).errors.first { $0.code == .unknownParameterID })
        #expect(d.message == "unknown ParameterID \"HapticAttackTime\"; did you mean \"HapticAttackTimeControl\"?")
        let audio = #"{ "ParameterCurve": { "Time": 0, "ParameterID": "AudioDecayTime", "ParameterCurveControlPoints": [ { "Time": 0, "ParameterValue": 0 } ] } }"#
        let a = try #require(diagnose(document(audio)).errors.first { $0.code == .unknownParameterID })
        #expect(a.message == "unknown ParameterID \"AudioDecayTime\"; did you mean \"AudioDecayTimeControl\"?")
    }

    @Test func nearMissesAndStrangersAreUnchanged() throws {
        let typo = try #require(diagnose(document(event("AtackTime"))).errors.first)
        #expect(typo.message == "unknown ParameterID \"AtackTime\"; did you mean \"AttackTime\"?")
        let stranger = try #require(diagnose(document(event("Wobble"))).errors.first)
        #expect(stranger.message.hasPrefix("unknown ParameterID \"Wobble\"; expected one of HapticIntensity, "))
    }
}
