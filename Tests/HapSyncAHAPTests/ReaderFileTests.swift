import Foundation
import HapSyncAHAP
import HapSyncTestSupport
import Testing

@Suite("Reading files")
struct ReaderFileTests {
    @Test func missingFileIsUnreadable() {
        let report = AHAPReader().diagnose(contentsOf: URL(fileURLWithPath: "/nonexistent/x.ahap"))
        #expect(report.errors.map(\.code) == [.fileUnreadable])
        #expect(report.errors.first?.message == "no such file")
        #expect(report.errors.first?.file == "/nonexistent/x.ahap")
    }

    @Test func directoryIsUnreadable() throws {
        let dirFolder = try TemporaryDirectory()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let report = AHAPReader().diagnose(contentsOf: dir)
        #expect(report.errors.map(\.code) == [.fileUnreadable])
        #expect(report.errors.first?.message == "is a directory, not an AHAP file")
    }

    /// A FIFO given as the AHAP file is refused at once by its kind, never opened to wait for a
    /// writer (it used to be reported as "permission denied?").
    @Test func aFIFOIsRefusedByItsKind() throws {
        let dirFolder = try TemporaryDirectory()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let fifo = dir.appendingPathComponent("p.ahap")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let report = AHAPReader().diagnose(contentsOf: fifo)
        #expect(report.errors.map(\.code) == [.fileUnreadable])
        #expect(report.errors.first?.message == "is a FIFO (named pipe), not an AHAP file")
    }

    @Test func oversizedFileIsRejectedBeforeReading() throws {
        let dirFolder = try TemporaryDirectory()
        defer { dirFolder.remove() }
        let dir = dirFolder.url
        let url = dir.appendingPathComponent("big.ahap")
        try Data(repeating: 0x20, count: 2048).write(to: url)
        let limits = AHAPLimits(maxFileBytes: 1024, maxEntries: 10, maxCurvePoints: 10, maxNestingDepth: 10)
        let report = AHAPReader(limits: limits).diagnose(contentsOf: url)
        #expect(report.errors.map(\.code) == [.limitExceeded])
        #expect(report.errors.first?.message == "file is 2048 bytes; the limit is 1024 bytes")
    }

    @Test func throwingReadCarriesAllFindings() {
        do {
            _ = try AHAPReader().read(data: Data(document(#"{ "Event": { "Time": -1, "EventType": "X" } }"#).utf8), file: "f.ahap")
            Issue.record("expected an error")
        } catch {
            #expect(error.errors.map(\.code) == [.negativeTime, .unknownEventType])
        }
    }

    @Test func byteOrderMarkAndUnicodeEscapes() throws {
        let text = "\u{FEFF}" + #"{ "Metadata": { "Title": "caf\u00e9 \ud83c\udf89 \"q\"" }, "Pattern": [] }"#
        let report = diagnose(text)
        #expect(report.errors.isEmpty)
        let members = try #require(report.pattern?.metadata?.objectMembers)
        #expect(members.first?.value == .string("café 🎉 \"q\""))
    }

    @Test func columnsCountCharactersNotBytes() throws {
        let report = diagnose("{ \"Metadata\": { \"Ünïcödé\": 1 }, \"Pattern\": [ { \"Event\": { \"Time\": -1 } } ] }")
        let d = try #require(report.errors.first { $0.code == .negativeTime })
        #expect(d.line == 1)
        #expect(d.column == 67, "66 characters precede the '-'; its UTF-8 bytes number 70")
    }
}

@Suite("Locating paths")
struct LocationTests {
    @Test func reportLocatesAnyPathInTheSource() throws {
        let report = diagnose(document(#"{ "Event": { "Time": 0, "EventType": "AudioCustom", "EventWaveformPath": "x.wav" } }"#))
        let loc = try #require(report.location(of: AHAPPath("Pattern[0].Event.EventWaveformPath")))
        #expect(loc.line == 2 && loc.column == 74)
        #expect(report.location(of: AHAPPath("Pattern[5]")) == nil)
        let found = AHAPDiagnostic(.resourceNotFound, path: AHAPPath("Pattern[0].Event.EventWaveformPath"), message: "m")
        #expect(report.located([found]).first?.line == 2)
    }

    @Test func pathsPrintAndParseBack() {
        for text in ["Pattern[4].Event.EventParameters[0]", "(root)", "Metadata.Tags[2]", "[0][1]"] {
            #expect(AHAPPath(text).description == text)
        }
        #expect(AHAPPath("(root)") == .root)
        #expect(AHAPPath.root.key("Pattern").index(3).key("Event").description == "Pattern[3].Event")
    }
}
