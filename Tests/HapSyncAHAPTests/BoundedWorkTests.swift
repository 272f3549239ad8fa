import Foundation
import HapSyncTestSupport
import Testing
@testable import HapSyncAHAP

/// The reader's work is bounded per byte of input whatever its shape (issue 14: a 16 MB
/// `ParameterID` took 51 s, 1.2 million unknown keys 30 s). Checked by counting the work, never
/// by timing it.
@Suite("Bounded work: suggestions, findings, quoting")
struct BoundedWorkTests {
    static let eventParameters = AHAPEventParameterID.allCases.map(\.rawValue)

    /// The edit distance of a name to every candidate cost (name length × candidate length): a
    /// 16 MB name, 16 M × 12 candidates × 15 on average. A name too long to match any rule is now
    /// dismissed after reading one scalar more than the longest that could match, so a megabyte
    /// costs no more than the longest name still compared.
    @Test func aSuggestionCostsNoMoreForAMegabyteThanForTheLongestNameItCompares() {
        func work(_ name: String) -> (Int, String?) {
            var work = 0
            let s = PatternDecoder.suggestion(for: name, among: Self.eventParameters, work: &work)
            return (work, s)
        }
        let longest = Self.eventParameters.map(\.count).max()!
        // The longest name still compared: any longer one matches no rule.
        let compared = work(String(repeating: "x", count: longest + 13))
        for length in [longest + 14, 1_000, 1 << 20] {
            let (w, s) = work(String(repeating: "x", count: length))
            #expect(s == nil)
            #expect(w <= compared.0, "a \(length)-scalar name cost \(w) steps, the longest compared \(compared.0)")
        }
        // Suggestions are unchanged: a typo, a case slip, a Haptic prefix with a Control suffix.
        #expect(work("AtackTime").1 == "AttackTime")
        #expect(work("hapticintensity").1 == "HapticIntensity")
        #expect(work("HapticDecayTimeControl").1 == "DecayTime")
    }

    /// The longest name a rule matches among the event parameters, a Haptic prefix and a Control
    /// suffix around the longest unprefixed one, is still suggested: the bound cuts no match off.
    @Test func theLongestMatchingNameIsStillSuggested() {
        var work = 0
        #expect(PatternDecoder.suggestion(for: "HapticReleaseTimeControl", among: Self.eventParameters, work: &work) == "ReleaseTime")
    }

    /// Only findings that can still be listed are built (path, message, suggestion): 100,000
    /// unknown keys in one event build at most `2 × maxFindings` of them, and the 1,000 listed
    /// are the first 1,000 in the source, the rest counted exactly.
    @Test func findingsBeyondTheListedAreCountedNotBuilt() throws {
        let n = 100_000
        let keys = (0..<n).map { "\"k\($0)\": 1" }.joined(separator: ", ")
        let text = document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", \#(keys) } }"#)
        let limits = AHAPLimits.default
        var parser = JSONParser(bytes: Array(text.utf8), maxDepth: limits.maxNestingDepth, maxWarnings: limits.maxFindings)
        let root = try parser.parseDocument()
        var decoder = PatternDecoder(limits: limits, source: SourceText(Array(text.utf8)), file: nil)
        _ = decoder.decodePattern(root)
        #expect(decoder.warningCount == n)
        #expect(decoder.findingsBuilt <= 2 * limits.maxFindings, "built \(decoder.findingsBuilt) findings for \(limits.maxFindings) listed")
        let listed = decoder.sortedDiagnostics
        #expect(listed.count == limits.maxFindings)
        #expect(listed.map(\.path.description) == (0..<limits.maxFindings).map { "Pattern[0].Event.k\($0)" })
        #expect(decoder.omitted == AHAPOmittedFindings(errors: 0, warnings: n - limits.maxFindings))
    }

    /// An error found after the list is full of warnings is still built and listed.
    @Test func anErrorAfterManyWarningsIsStillListed() throws {
        let keys = (0..<5_000).map { "\"k\($0)\": 1" }.joined(separator: ", ")
        let text = document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", \#(keys) } }"#,
                            #"{ "Event": { "Time": -1, "EventType": "HapticTransient" } }"#)
        let report = diagnose(text)
        #expect(report.errors.map(\.path.description) == ["Pattern[1].Event.Time"])
        #expect(report.diagnostics.count == AHAPLimits.default.maxFindings)
        #expect(report.omitted == AHAPOmittedFindings(errors: 0, warnings: 5_000 - (AHAPLimits.default.maxFindings - 1)))
    }

    /// Quoting: short values whole, as before; long ones by their first `maxScalars` scalars
    /// (never a part of one) and their length in bytes.
    @Test func quotingCutsOnlyLongValues() {
        let exactly = String(repeating: "C", count: AHAPQuote.maxScalars)
        #expect(AHAPQuote.quoted(exactly) == "\"\(exactly)\"")
        #expect(AHAPQuote.quoted(exactly + "D") == "\"\(exactly)…\" (\(AHAPQuote.maxScalars + 1) bytes)")
        #expect(AHAPQuote.literal("12.5") == "12.5")
        #expect(AHAPQuote.literal(exactly + "9") == "\(exactly)… (\(AHAPQuote.maxScalars + 1) bytes)")
        #expect(AHAPQuote.pathKey("Time") == "Time")
        #expect(AHAPQuote.pathKey(exactly + "D") == exactly + "…")
        let accents = String(repeating: "é", count: 100)
        #expect(AHAPQuote.quoted(accents) == "\"\(String(repeating: "é", count: AHAPQuote.maxScalars))…\" (200 bytes)")
        #expect(AHAPPath(components: [.key(exactly + "D"), .index(2)]).description == exactly + "…[2]")
    }

    /// `..` as a whole component climbs out; dots inside a name do not (read byte by byte now).
    @Test(arguments: [("..", true), ("../a", true), ("a/..", true), ("a/../b", true), ("a//../b", true),
                      ("...", false), ("a..", false), ("..a/b", false), ("a/.../b", false), ("./a", false), ("a/./b", false), (".", false)])
    func climbingIsAWholeDotDotComponent(_ path: String, _ climbs: Bool) {
        let problem = AHAPResourceResolver.staticProblem(with: path)
        #expect((problem?.contains("'..'") ?? false) == climbs, "\(path): \(problem ?? "acceptable")")
    }

    /// A path longer than Linux opens is not found, without being looked for.
    @Test func aPathLongerThanPathMaxIsNotFound() throws {
        let rootFolder = try TemporaryDirectory()
        defer { rootFolder.remove() }
        let root = rootFolder.url
        let name = String(repeating: "d", count: AHAPResourceResolver.maxPathBytes + 1)
        guard case .failure(let f) = AHAPResourceResolver(roots: [root]).resolve(name) else { Issue.record("must not resolve"); return }
        #expect(f.code == .resourceNotFound)
        #expect(f.description.contains("(\(AHAPResourceResolver.maxPathBytes + 1) bytes) not found"))
    }
}
