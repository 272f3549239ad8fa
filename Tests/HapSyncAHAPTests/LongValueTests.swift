import Foundation
import HapSyncAHAP
import HapSyncTestSupport
import Testing

/// A megabyte of one letter: far longer than any name AHAP knows.
private let long = String(repeating: "A", count: 1 << 20)

/// How a cut value starts in a message: its first 64 scalars (`AHAPQuote.maxScalars`), then `…`.
private func start(_ letter: String) -> String { String(repeating: letter, count: 64) + "…" }

/// The longest a finding about a long value may print: its message and path with the value cut to
/// `AHAPQuote.maxScalars` scalars, and the file's name (well under a kilobyte; a whole value would
/// be a megabyte).
private let maxPrinted = 1_024

/// Findings about values far longer than any name (issue 14: a 16 MB `ParameterID` took 51 s and
/// printed 16 MB) quote a bounded start of the value and its length, and print a bounded path.
@Suite("Long values: findings quote a bounded start")
struct LongValueTests {
    /// Every string field the reader reads, and keys where it reads keys, holding a value of a
    /// megabyte or so; each with the code of the finding that names it, and the value's length.
    static let shapes: [(name: String, text: String, code: AHAPDiagnostic.Code, bytes: Int)] = [
        ("event ParameterID", document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", "EventParameters": [ { "ParameterID": "\#(long)", "ParameterValue": 0.5 } ] } }"#), .unknownParameterID, 1 << 20),
        ("Parameter ParameterID", document(#"{ "Parameter": { "Time": 0, "ParameterID": "\#(long)", "ParameterValue": 0.5 } }"#), .unknownParameterID, 1 << 20),
        ("ParameterCurve ParameterID", document(#"{ "ParameterCurve": { "Time": 0, "ParameterID": "\#(long)", "ParameterCurveControlPoints": [ { "Time": 0, "ParameterValue": 0.5 } ] } }"#), .unknownParameterID, 1 << 20),
        ("EventType", document(#"{ "Event": { "Time": 0, "EventType": "\#(long)" } }"#), .unknownEventType, 1 << 20),
        ("EventWaveformPath", document(#"{ "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "../\#(long)" } }"#), .unsafeWaveformPath, 3 + 1 << 20),
        ("unknown key in an Event", document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient", "\#(long)": 1 } }"#), .unknownKey, 1 << 20),
        ("key beside Event", document(#"{ "Event": { "Time": 0, "EventType": "HapticTransient" }, "\#(long)": 1 }"#), .unknownKey, 1 << 20),
        ("entry key", document(#"{ "\#(long)": 1 }"#), .emptyEntry, 1 << 20),
        ("top-level key", #"{ "Version": 1, "Pattern": [], "\#(long)": 1 }"#, .unknownKey, 1 << 20),
        ("duplicate key", #"{ "Version": 1, "Pattern": [], "Metadata": { "\#(long)": 1, "\#(long)": 2 } }"#, .duplicateKey, 1 << 20),
        ("number in quotes", document(#"{ "Event": { "Time": "0.\#(String(repeating: "5", count: 1 << 20))", "EventType": "HapticTransient" } }"#), .wrongType, 2 + 1 << 20),
        ("long number", document(#"{ "Event": { "Time": 1\#(String(repeating: "0", count: 1 << 20)), "EventType": "HapticTransient" } }"#), .nonFiniteNumber, 1 + 1 << 20),
        ("syntax error after a long key", #"{ "Version": 1, "\#(long)" 1 }"#, .jsonSyntax, 1 << 20),
    ]

    @Test(arguments: shapes.indices)
    func aLongValueIsQuotedByItsStartAndLength(_ i: Int) throws {
        let shape = Self.shapes[i]
        let report = diagnose(shape.text)
        let d = try #require(report.diagnostics.first { $0.code == shape.code }, "\(shape.name): \(report.diagnostics.map(\.code))")
        for d in report.diagnostics {
            #expect(d.description.utf8.count <= maxPrinted, "\(shape.name): a finding prints \(d.description.utf8.count) bytes")
        }
        #expect(d.message.contains("…") && d.message.contains("(\(shape.bytes) bytes)"), "\(shape.name): \(d.message.prefix(300))")
    }

    /// The exact text for one of them: what the user sees.
    @Test func theMessageOfALongParameterID() throws {
        let d = try #require(diagnose(Self.shapes[1].text).errors.first)
        #expect(d.message == "unknown ParameterID \"\(start("A"))\" (1048576 bytes); expected one of "
                + AHAPDynamicParameterID.allCases.map(\.rawValue).joined(separator: ", "))
        #expect(d.path.description == "Pattern[0].Parameter.ParameterID")
    }

    /// A path prints a long key by its start: 200 comments inside the value of a 100 KB key gave
    /// 200 warnings printing the key each (20 MB; 16 GB for a file at the size limit).
    @Test func warningsUnderALongKeyPrintABoundedPath() throws {
        let key = String(repeating: "B", count: 100_000)
        let text = #"{ "Version": 1, "Pattern": [], "Metadata": { "\#(key)": [ "# + String(repeating: "// c\n", count: 200) + "1 ] } }"
        let report = diagnose(text)
        let comments = report.warnings.filter { $0.code == .comment }
        #expect(comments.count == 200)
        let printed = comments.map(\.description.utf8.count).reduce(0, +)
        #expect(printed <= 200 * maxPrinted, "200 warnings print \(printed) bytes")
        #expect(comments.first?.path.description == "Metadata." + start("B"))
        // The path itself keeps the whole key: the warning is located in the source by it.
        #expect(comments.first?.path.components.last == .key(key))
    }

    /// A waveform path that is safe but long is looked for, not found, and quoted by its start.
    @Test func aLongWaveformPathIsNotFoundAndQuotedByItsStart() throws {
        let rootFolder = try TemporaryDirectory()
        defer { rootFolder.remove() }
        let root = rootFolder.url
        let resolver = AHAPResourceResolver(roots: [root])
        guard case .failure(let f) = resolver.resolve(long) else { Issue.record("a 1 MB path must not resolve"); return }
        #expect(f.code == .resourceNotFound)
        #expect(f.description.utf8.count <= maxPrinted)
        #expect(f.description.hasPrefix("\"\(start("A"))\" (1048576 bytes) not found"), "\(f.description.prefix(300))")
    }
}
