import Foundation
import HapSyncAHAP
import Testing

/// `n` comments on their own lines, then a valid pattern with `entries`.
private func commented(_ n: Int, _ entries: String...) -> String {
    String(repeating: "// c\n", count: n) + "{ \"Version\": 1.0, \"Pattern\": [\n" + entries.joined(separator: ",\n") + "\n] }"
}

@Suite("Findings: at most AHAPLimits.maxFindings listed per file, the rest counted")
struct FindingsLimitTests {
    @Test func manyWarningsAreCountedNotListed() throws {
        let report = diagnose(commented(50_000))
        #expect(AHAPLimits.default.maxFindings == 1_000)
        #expect(report.diagnostics.count == 1_000)
        #expect(report.omitted == AHAPOmittedFindings(errors: 0, warnings: 49_000))
        #expect(report.pattern != nil, "warnings alone keep the pattern")
        // The first ones in source order are listed, located.
        #expect(report.diagnostics.first?.line == 1 && report.diagnostics.last?.line == 1_000)
    }

    @Test func anErrorAfterTheLimitIsStillListed() throws {
        let report = diagnose(commented(5_000, #"{ "Event": { "Time": -1, "EventType": "HapticTransient" } }"#))
        #expect(report.diagnostics.count == 1_000)
        #expect(report.errors.map(\.code) == [.negativeTime])
        #expect(report.errors.first?.line == 5_002)
        #expect(report.omitted == AHAPOmittedFindings(errors: 0, warnings: 4_001))
        #expect(report.pattern == nil)
        #expect(report.diagnostics.last?.code == .negativeTime, "still in source order")
    }

    @Test func errorsOverTheLimitAreCountedAndThePatternIsRefused() throws {
        var limits = AHAPLimits.default
        limits.maxFindings = 2
        let bad = #"{ "Event": { "Time": -1, "EventType": "HapticTransient" } }"#
        let report = diagnose(commented(3, bad, bad, bad), limits: limits)
        #expect(report.diagnostics.map(\.code) == [.negativeTime, .negativeTime])
        #expect(report.omitted == AHAPOmittedFindings(errors: 1, warnings: 3))
        #expect(report.pattern == nil)
        let none = diagnose(commented(2, bad), limits: AHAPLimits(maxFileBytes: 1 << 20, maxEntries: 10, maxCurvePoints: 10, maxNestingDepth: 64, maxFindings: 0))
        #expect(none.diagnostics.isEmpty && none.omitted == AHAPOmittedFindings(errors: 1, warnings: 2) && none.pattern == nil)
    }

    @Test func aSyntaxErrorAfterManyCommentsIsListed() throws {
        let report = diagnose(String(repeating: "/* c */", count: 3_000) + "{ \"Pattern\": [ 'x' ] }")
        #expect(report.errors.map(\.code) == [.jsonSyntax])
        #expect(report.diagnostics.count == 1_000 && report.omitted.warnings == 2_001)
    }

    @Test func cappingAListKeepsErrorsThenTheEarliest() {
        let w = { (i: Int) in AHAPDiagnostic(.comment, path: .root, message: "w\(i)") }
        let e = { (i: Int) in AHAPDiagnostic(.jsonSyntax, path: .root, message: "e\(i)") }
        let (listed, omitted) = AHAPDiagnostic.capped([w(0), w(1), e(0), w(2), e(1)], limit: 3)
        #expect(listed.map(\.message) == ["w0", "e0", "e1"])
        #expect(omitted == AHAPOmittedFindings(errors: 0, warnings: 2))
        #expect(AHAPDiagnostic.capped([w(0)], limit: 3).listed.count == 1)
    }
}
